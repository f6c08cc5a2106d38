	-- sql/sql-only/not-stored.sql: outcome.c's OutcomeNotStored for the
	-- uuid in not_stored: an insert wrote nothing, yet no row of that
	-- order_id is there.  A BEFORE INSERT row trigger or row level security
	-- suppressed it (permanent), or a concurrent transaction deleted the row
	-- (a retry succeeds).
	IF EXISTS (SELECT FROM pg_catalog.pg_trigger t
	            WHERE t.tgrelid = 'received_orders.received_orders'::pg_catalog.regclass
	              AND NOT t.tgisinternal AND t.tgenabled <> 'D'
	              AND (t.tgtype & 7::pg_catalog.int2) = 7::pg_catalog.int2)
	   OR (SELECT c.relrowsecurity FROM pg_catalog.pg_class c
	        WHERE c.oid = 'received_orders.received_orders'::pg_catalog.regclass) THEN
		RAISE EXCEPTION 'order % was not stored: the insert into received_orders.received_orders wrote no row', not_stored
			USING ERRCODE = 'triggered_action_exception',
			      DETAIL = 'A BEFORE INSERT trigger on the table returned NULL, or row level security hid the row.',
			      HINT = 'Fix or drop that trigger (or policy); received_orders must store every valid event.';
	END IF;
	RAISE EXCEPTION 'order % was deleted while being materialized', not_stored
		USING ERRCODE = 'serialization_failure',
		      HINT = 'Retry the transaction.';
