
-- ---------------------------------------------------------------------------
-- sql/sql-only/update-prologue.sql — the start of each psql update script
-- of the flavour, from @FROM@ to @TO@: one transaction, the installed
-- version checked first.
--
-- Without CREATE EXTENSION there is no pg_extension row to say which
-- version is installed: the schema's comment says it ("received_orders
-- VERSION: ..."), set by the install and by every update script, in both
-- flavours.  A script run on another version (applied twice, or a version
-- skipped), on no flavour, or on a schema an extension owns (the C
-- extension, the pg_tle wrapper: ALTER EXTENSION updates those) stops here
-- and the transaction holds nothing.  The advisory lock makes a second
-- session running the same script wait for the first and then read the
-- version it left.
-- ---------------------------------------------------------------------------

\set ON_ERROR_STOP on
BEGIN;

DO $version$
DECLARE
	schema_oid oid;
	owner_ext name;
	installed text;
BEGIN
	PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('received_orders: update of the SQL-only flavour'));
	SELECT n.oid INTO schema_oid
	  FROM pg_catalog.pg_namespace n
	 WHERE n.nspname OPERATOR(pg_catalog.=) 'received_orders';
	IF schema_oid IS NULL THEN
		RAISE EXCEPTION 'schema "received_orders" does not exist'
			USING ERRCODE = 'invalid_schema_name',
			      DETAIL = 'This script updates the SQL-only flavour from @FROM@ to @TO@.',
			      HINT = 'Install the flavour with received_orders.sql; an install is at the newest version already.';
	END IF;
	SELECT e.extname INTO owner_ext
	  FROM pg_catalog.pg_extension e
	 WHERE e.extnamespace OPERATOR(pg_catalog.=) schema_oid;
	IF owner_ext IS NOT NULL THEN
		RAISE EXCEPTION 'schema "received_orders" belongs to extension "%"', owner_ext
			USING ERRCODE = 'object_not_in_prerequisite_state',
			      DETAIL = 'This script updates the SQL-only flavour installed with psql.',
			      HINT = pg_catalog.format('Run ALTER EXTENSION %I UPDATE instead.', owner_ext);
	END IF;
	installed := pg_catalog.substring(pg_catalog.obj_description(schema_oid, 'pg_namespace'),
	                                  '^received_orders ([^ :]+):');
	IF installed IS NULL THEN
		RAISE EXCEPTION 'cannot tell which version of received_orders is installed'
			USING ERRCODE = 'object_not_in_prerequisite_state',
			      DETAIL = 'The comment of schema "received_orders" does not start with "received_orders VERSION:".',
			      HINT = 'Set the comment back to what the installed version''s scripts set, then run the update scripts from that version on.';
	ELSIF installed OPERATOR(pg_catalog.=) '@TO@' THEN
		RAISE EXCEPTION 'received_orders is already at version @TO@'
			USING ERRCODE = 'object_not_in_prerequisite_state',
			      DETAIL = 'This script updates the SQL-only flavour from @FROM@ to @TO@.',
			      HINT = 'Nothing to run: this update is applied.';
	ELSIF installed OPERATOR(pg_catalog.<>) '@FROM@' THEN
		RAISE EXCEPTION 'received_orders is at version %, not @FROM@', installed
			USING ERRCODE = 'object_not_in_prerequisite_state',
			      DETAIL = 'This script updates the SQL-only flavour from @FROM@ to @TO@.',
			      HINT = pg_catalog.format('Run the update scripts in order, from received_orders--%s--*.sql on.', installed);
	END IF;
END
$version$;

SET LOCAL ROLE received_orders_owner;
