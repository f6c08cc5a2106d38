
-- ---------------------------------------------------------------------------
-- sql/sql-only/prologue.sql — the psql install's own start: one transaction,
-- a dedicated owner role, the schema owned by it.
--
-- Run by the service's admin role (NOSUPERUSER CREATEROLE CREATEDB, the
-- database's owner), never by a superuser's session on purpose: what the
-- script creates is owned by received_orders_owner, a NOLOGIN role that
-- holds nothing else, so the SECURITY DEFINER functions lend no more than
-- their own tables.  The admin role becomes a member of the owner role (to
-- create its objects, to run grant_feeder and the operators' functions).
-- ---------------------------------------------------------------------------

\set ON_ERROR_STOP on
BEGIN;

DO $owner$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles r
	                WHERE r.rolname OPERATOR(pg_catalog.=) 'received_orders_owner') THEN
		CREATE ROLE received_orders_owner NOLOGIN NOINHERIT;
	END IF;
	IF (SELECT r.rolsuper FROM pg_catalog.pg_roles r
	     WHERE r.rolname OPERATOR(pg_catalog.=) 'received_orders_owner') THEN
		RAISE EXCEPTION 'role received_orders_owner is a superuser'
			USING ERRCODE = 'insufficient_privilege',
			      DETAIL = 'The SECURITY DEFINER functions of received_orders run as that role.',
			      HINT = 'Drop or rename that role, then run the script again.';
	END IF;
END
$owner$;

GRANT received_orders_owner TO CURRENT_USER;
CREATE SCHEMA received_orders AUTHORIZATION received_orders_owner;
SET LOCAL ROLE received_orders_owner;
