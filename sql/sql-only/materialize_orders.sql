-- sql/sql-only/materialize_orders.sql: the twin of the plain batch
-- function (materialize.c's materialize_orders): batch.sql without a group.
#variable_conflict use_column
DECLARE
	with_group CONSTANT boolean := false;
	consumer_group CONSTANT text := NULL;
--@include no-envelope-args
--@include no-frame-args
BEGIN
--@include batch
END
