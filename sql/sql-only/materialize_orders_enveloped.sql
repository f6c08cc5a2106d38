-- sql/sql-only/materialize_orders_enveloped.sql: the twin of the outbox
-- form of the batch function (materialize.c's
-- materialize_orders_enveloped): batch.sql with the group's checks and
-- positions, each value opened in its envelope (envelope-open.sql) and
-- only the messages of event_type materialized (outbox.c).
#variable_conflict use_column
DECLARE
	with_group CONSTANT boolean := true;
	with_envelope CONSTANT boolean := true;
--@include no-frame-args
BEGIN
--@include batch
END
