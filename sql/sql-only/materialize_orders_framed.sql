-- sql/sql-only/materialize_orders_framed.sql: the twin of the Schema
-- Registry form of the batch function (materialize.c's
-- materialize_orders_framed): the outbox form (batch.sql with the group's
-- checks and positions, envelopes and types), each value first opened in
-- its frame as frame.c's RoFrameOpen opens it (what the feeder decoded,
-- else the JSON after the 5-byte frame; a decode error rejects it); the
-- quarantine keeps the bytes as received with their schema id or GUID, a
-- stored row its schema id.
#variable_conflict use_column
DECLARE
	with_group CONSTANT boolean := true;
	with_envelope CONSTANT boolean := true;
	with_frame CONSTANT boolean := true;
BEGIN
--@include batch
END
