		-- sql/sql-only/batch-precheck.sql: batch.sql's checks that cannot
		-- throw, over m(val, pre, pre_s, pre_m): NULL, else ARRAY[sqlstate,
		-- message, detail] (what the outbox form decided before, a null
		-- value: skipped with a group, else rejected; a value too large)
		CASE WHEN m.pre IS NOT NULL THEN ARRAY[m.pre_s, m.pre_m, NULL]
		WHEN m.val IS NULL AND with_group THEN NULL
		WHEN m.val IS NULL THEN
		     ARRAY['22004', 'value is null (a tombstone), not an event', NULL]
		WHEN pg_catalog.octet_length(m.val) > max_event_bytes THEN
		     ARRAY['54000',
		           pg_catalog.format('event is too large: %s bytes, received_orders.max_event_bytes is %s',
		                             pg_catalog.octet_length(m.val), max_event_bytes),
		           'A superuser can raise received_orders.max_event_bytes.']
		END
