-- sql/sql-only/materialize_orders_for_group.sql: the twin of the batch
-- function of a consumer group (materialize.c's
-- materialize_orders_for_group): batch.sql with the group's checks, NULL
-- values skipped, and the group's positions recorded in the same
-- transaction, never backwards.
#variable_conflict use_column
DECLARE
	with_group CONSTANT boolean := true;
--@include no-envelope-args
--@include no-frame-args
BEGIN
--@include batch
END
