-- test/sql-only/fingerprint.sql — the catalog of schema received_orders
-- apart from the functions' language and body, one line per fact:
-- relations (kind, ACL, comment), columns (type, NOT NULL, default,
-- comment, ACL), constraints, indexes, view definitions, triggers, types
-- (enum labels, comment), function comments, the schema's ACL and comment.
-- The owner's name is OWNER in every ACL: the C extension's objects are a
-- superuser's, the SQL-only flavour's received_orders_owner's.
SELECT 'rel ' || c.relname || ' ' || c.relkind::text || ' ' ||
       replace(coalesce(c.relacl, acldefault((CASE WHEN c.relkind = 'S' THEN 's' ELSE 'r' END)::"char", c.relowner))::text, pg_get_userbyid(c.relowner), 'OWNER')
       || ' ' || coalesce(obj_description(c.oid, 'pg_class'), '')
  FROM pg_class c WHERE c.relnamespace = 'received_orders'::regnamespace
UNION ALL
SELECT 'col ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull || ' ' ||
       coalesce(pg_get_expr(d.adbin, d.adrelid), '') || ' ' || coalesce(col_description(c.oid, a.attnum), '')
       || ' ' || coalesce(replace(a.attacl::text, pg_get_userbyid(c.relowner), 'OWNER'), '')
  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
 WHERE c.relnamespace = 'received_orders'::regnamespace
UNION ALL
SELECT 'con ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
  FROM pg_constraint WHERE connamespace = 'received_orders'::regnamespace
UNION ALL
SELECT 'idx ' || pg_get_indexdef(indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
 WHERE c.relnamespace = 'received_orders'::regnamespace
UNION ALL
SELECT 'view ' || c.relname || ' ' || pg_get_viewdef(c.oid) FROM pg_class c
 WHERE c.relnamespace = 'received_orders'::regnamespace AND c.relkind IN ('v', 'm')
UNION ALL
SELECT 'trg ' || tgrelid::regclass || ' ' || pg_get_triggerdef(oid) FROM pg_trigger
 WHERE tgrelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'received_orders'::regnamespace) AND NOT tgisinternal
UNION ALL
SELECT 'type ' || t.typname || ' ' || coalesce((SELECT string_agg(enumlabel, ',' ORDER BY enumsortorder) FROM pg_enum WHERE enumtypid = t.oid), '')
       || ' ' || coalesce(obj_description(t.oid, 'pg_type'), '')
  FROM pg_type t WHERE t.typnamespace = 'received_orders'::regnamespace AND t.typtype IN ('e', 'c', 'd') AND t.typrelid = 0
UNION ALL
SELECT 'fncomment ' || p.oid::regprocedure || ' ' || coalesce(obj_description(p.oid, 'pg_proc'), '')
  FROM pg_proc p WHERE p.pronamespace = 'received_orders'::regnamespace
UNION ALL
SELECT 'schema ' || replace(coalesce(n.nspacl, acldefault('n', n.nspowner))::text, pg_get_userbyid(n.nspowner), 'OWNER') || ' ' || coalesce(obj_description(n.oid, 'pg_namespace'), '')
  FROM pg_namespace n WHERE n.nspname = 'received_orders'
ORDER BY 1;
