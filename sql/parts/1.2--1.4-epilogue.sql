-- ---------------------------------------------------------------------------
-- Epilogue: quarantine_summary's grants given back, the caller's
-- lock_timeout too.
--
-- 1.2--1.3 above dropped the view and created it again with pg_monitor's
-- grant only.  Every grant the view had (saved by the prologue) is given
-- again: on the view, and on each column that is still there (example is
-- not: it moved to quarantine_examples, which no role but the owner reads
-- unless a DBA grants it).  GRANTs in an extension script also become the
-- extension's initial privileges, which pg_dump leaves out: the view's
-- initial privileges are put back as the script set them, so that a dump
-- still holds the DBA's grants.  Last, lock_timeout is the caller's again
-- (the prologue's was for the transaction: a caller's BEGIN ... COMMIT
-- around the update would keep it to the end).  The saving settings are
-- cleared.
-- ---------------------------------------------------------------------------

DO $grants$
DECLARE
	saved jsonb := pg_catalog.current_setting('received_orders_update.quarantine_summary_grants')::jsonb;
	view_oid oid := 'received_orders.quarantine_summary'::pg_catalog.regclass;
	initial jsonb;
	g record;
BEGIN
	SELECT pg_catalog.jsonb_agg(pg_catalog.to_jsonb(i)) INTO initial
	  FROM pg_catalog.pg_init_privs i
	 WHERE i.classoid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
	   AND i.objoid OPERATOR(pg_catalog.=) view_oid;

	FOR g IN
		SELECT e.column_name, x.grantee, x.privilege_type, x.is_grantable
		  FROM pg_catalog.jsonb_to_recordset(coalesce(saved OPERATOR(pg_catalog.->) 'acl', '[]'))
		       AS e (column_name name, acl text[]),
		       pg_catalog.aclexplode(e.acl::pg_catalog.aclitem[]) x
		 WHERE x.grantee OPERATOR(pg_catalog.<>) (SELECT c.relowner FROM pg_catalog.pg_class c
		                                           WHERE c.oid OPERATOR(pg_catalog.=) view_oid)
		   AND (e.column_name IS NULL
		        OR EXISTS (SELECT FROM pg_catalog.pg_attribute a
		                    WHERE a.attrelid OPERATOR(pg_catalog.=) view_oid
		                      AND a.attname OPERATOR(pg_catalog.=) e.column_name
		                      AND NOT a.attisdropped))
	LOOP
		EXECUTE pg_catalog.format('GRANT %s%s ON received_orders.quarantine_summary TO %s%s',
			g.privilege_type,
			CASE WHEN g.column_name IS NOT NULL THEN pg_catalog.format(' (%I)', g.column_name) ELSE '' END,
			CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
			     ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END,
			CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
	END LOOP;

	DELETE FROM pg_catalog.pg_init_privs i
	 WHERE i.classoid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
	   AND i.objoid OPERATOR(pg_catalog.=) view_oid;
	INSERT INTO pg_catalog.pg_init_privs
	SELECT r.* FROM pg_catalog.jsonb_populate_recordset(NULL::pg_catalog.pg_init_privs,
	                                                    coalesce(initial, '[]')) r;

	PERFORM pg_catalog.set_config('lock_timeout',
		pg_catalog.current_setting('received_orders_update.lock_timeout'), true);
	PERFORM pg_catalog.set_config('received_orders_update.quarantine_summary_grants', '', true);
	PERFORM pg_catalog.set_config('received_orders_update.lock_timeout', '', true);
END
$grants$;
-- end of epilogue ------------------------------------------------------------
