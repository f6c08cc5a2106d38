-- (SQL-only: sql/sql-only/schema-check.sql stands for 1.0--1.1's check that
-- a superuser owns the schema.)  The schema holds SECURITY DEFINER functions
-- owned by the schema's owner: it must be the role that owns them, and
-- nobody else may create objects in it.
DO $check$
DECLARE
	owner_name name;
	writers text;
BEGIN
	SELECT r.rolname INTO owner_name
	  FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) n.nspowner
	 WHERE n.nspname OPERATOR(pg_catalog.=) 'received_orders';
	IF owner_name OPERATOR(pg_catalog.<>) CURRENT_USER THEN
		RAISE EXCEPTION 'schema received_orders is owned by role "%", not by the role installing received_orders ("%")', owner_name, CURRENT_USER
			USING ERRCODE = 'insufficient_privilege',
			      DETAIL = 'The SECURITY DEFINER functions run as their owner; whoever owns their schema could replace what they read and write.',
			      HINT = 'Drop the existing schema (after checking what it holds) and run the install again.';
	END IF;
	SELECT pg_catalog.string_agg(CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
	                                  ELSE pg_catalog.quote_ident(r.rolname) END, ', ')
	  INTO writers
	  FROM pg_catalog.pg_namespace n,
	       LATERAL pg_catalog.aclexplode(n.nspacl) a
	       LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) a.grantee
	 WHERE n.nspname OPERATOR(pg_catalog.=) 'received_orders'
	   AND a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
	   AND a.grantee OPERATOR(pg_catalog.<>) n.nspowner;
	IF writers IS NOT NULL THEN
		RAISE EXCEPTION 'roles other than its owner may create objects in schema received_orders: %', writers
			USING ERRCODE = 'insufficient_privilege',
			      DETAIL = 'An object they create there could be found by the SECURITY DEFINER functions.',
			      HINT = 'REVOKE CREATE ON SCHEMA received_orders FROM those roles, then retry.';
	END IF;
END
$check$;
