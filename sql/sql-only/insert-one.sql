	-- sql/sql-only/insert-one.sql: outcome.c's RoOutcomeInsertOne for the
	-- valid event ev_payload (new_id, reference; new_schema_id, the schema
	-- id of a framed value, or NULL): INSERT ... ON CONFLICT
	-- DO NOTHING; when it wrote nothing, a second statement (a new
	-- snapshot: it sees the row of a concurrent transaction that ON
	-- CONFLICT waited for) reads the stored reference.  Sets outcome_label
	-- ('inserted', 'duplicate' or 'conflict') and stored.
	stored := NULL;
	INSERT INTO received_orders.received_orders (order_id, external_reference, payload, value_schema_id)
	VALUES (new_id, reference, ev_payload, new_schema_id)
	ON CONFLICT (order_id) DO NOTHING;
	IF FOUND THEN
		outcome_label := 'inserted';
	ELSE
		SELECT r.external_reference INTO stored
		  FROM received_orders.received_orders r
		 WHERE r.order_id = new_id;
		IF NOT FOUND THEN
			not_stored := new_id;
--@include not-stored
		END IF;
		outcome_label := CASE WHEN stored = reference COLLATE "C" THEN 'duplicate' ELSE 'conflict' END;
	END IF;
