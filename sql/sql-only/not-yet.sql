-- sql/sql-only/not-yet.sql: the body of a C function that has no SQL twin
-- yet (tools/build-sql-only puts the C symbol for @SYMBOL@).
BEGIN
	RAISE EXCEPTION 'received_orders: @SYMBOL@ is not available in the SQL-only flavour yet'
		USING ERRCODE = 'feature_not_supported',
		      HINT = 'Use the C extension for it (docs/sql-only.md lists what the SQL-only flavour has).';
END
