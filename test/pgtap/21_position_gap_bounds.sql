-- 21_position_gap_bounds.sql — record_position_gap bounds what a role may
-- record, with the limits and SQLSTATEs of advance_positions and
-- report_feeder: a topic of 1 to 249 bytes (longer: 22023, with a hint,
-- nothing written), and at most 4096 rows per consumer group, open and
-- accepted together (a new row of a full group: 54000, with a hint naming
-- the superuser's remedy, nothing written, with accept too).  A gap already
-- recorded is still found again in a full group, another group of the same
-- role is not affected, and once a superuser removes accepted gaps the
-- group records again.
--
-- Errors are read through pg_temp.caught.  Roles are created inside the
-- transaction and rolled back.

BEGIN;
SELECT plan(14);

SET LOCAL client_min_messages = error;

-- a feeder's role, granted as grant_feeder grants it
CREATE ROLE ro_gapb_feeder NOLOGIN;
DO $$ BEGIN PERFORM received_orders.grant_feeder('ro_gapb_feeder'); END $$;

-- The SQLSTATE, message and hint of a statement's error, or NULL.
CREATE FUNCTION pg_temp.caught(statement text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
	state text;
	msg text;
	hint text;
BEGIN
	EXECUTE statement;
	RETURN NULL;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
		hint = PG_EXCEPTION_HINT;
	RETURN ARRAY[state, msg, hint];
END
$$;
GRANT EXECUTE ON FUNCTION pg_temp.caught(text) TO PUBLIC;

-- The topic's length -----------------------------------------------------------

SET ROLE ro_gapb_feeder;
SELECT is(received_orders.record_position_gap('gb1', repeat('t', 249), 0, 0, 9),
	false,
	'a topic of 249 bytes (Kafka''s limit) is recorded, open');
SELECT is((pg_temp.caught(format($$SELECT received_orders.record_position_gap('gb1', %L, 0, 0, 9)$$,
	repeat('t', 250))))[1],
	'22023',
	'a topic of 250 bytes is refused with 22023');
SELECT matches((pg_temp.caught(format($$SELECT received_orders.record_position_gap('gb1', %L, 0, 0, 9, true)$$,
	repeat('é', 125))))[3],
	'1 to 249 bytes',
	'a topic of 125 two-byte characters (250 bytes) is refused with a hint naming the limit in bytes');
SELECT is((pg_temp.caught(format($$SELECT received_orders.record_position_gap('gb1', %L, 1, 0, 9, true)$$,
	repeat('x', 1048576))))[1],
	'22023',
	'a topic of 1 MB is refused with 22023');
RESET ROLE;
SELECT is((SELECT count(*) FROM received_orders.received_orders_position_gaps
            WHERE consumer_group = 'gb1' AND octet_length(kafka_topic) > 249),
	0::bigint,
	'no gap of a topic longer than 249 bytes was written');

-- The rows of a group ------------------------------------------------------------

-- 4095 rows of group gb1 (the one above makes 4096): accepted history and
-- open gaps, as many partitions as the feeder could have met
INSERT INTO received_orders.received_orders_position_gaps
	(consumer_group, kafka_topic, kafka_partition, first_lost, last_lost, detected_by,
	 accepted_by, accepted_at)
SELECT 'gb1', 'orders', p, 0, 9, current_user,
       CASE WHEN p % 2 = 0 THEN current_user END, CASE WHEN p % 2 = 0 THEN now() END
  FROM generate_series(1, 4095) AS p;

SET ROLE ro_gapb_feeder;
SELECT is((pg_temp.caught($$SELECT received_orders.record_position_gap('gb1', 'orders', 5000, 0, 9)$$))[1],
	'54000',
	'a new gap of a group holding 4096 rows is refused with 54000');
SELECT matches((pg_temp.caught($$SELECT received_orders.record_position_gap('gb1', 'orders', 5000, 0, 9)$$))[2],
	'^consumer group "gb1" holds 4096 position gaps; at most 4096 are kept$',
	'the message names the group, its rows and the limit');
SELECT matches((pg_temp.caught($$SELECT received_orders.record_position_gap('gb1', 'orders', 5000, 0, 9)$$))[3],
	'superuser removes the accepted gaps.*DELETE FROM received_orders.received_orders_position_gaps',
	'the hint names the superuser''s remedy');
SELECT is((pg_temp.caught($$SELECT received_orders.record_position_gap('gb1', 'orders', 2, 10, 19, true)$$))[1],
	'54000',
	'an accepted gap that would be a new row (--accept-position-loss, past an accepted one) is refused too');
SELECT is(received_orders.record_position_gap('gb1', 'orders', 1, 0, 12),
	false,
	'an open gap already recorded is found again in the full group (last_lost grows)');
SELECT is(received_orders.record_position_gap('gb2', 'orders', 5000, 0, 9),
	false,
	'another group of the same role records its gap');
RESET ROLE;
SELECT is((SELECT count(*) FROM received_orders.received_orders_position_gaps WHERE consumer_group = 'gb1'),
	4096::bigint,
	'the full group holds 4096 rows, none written by the refused calls');
SELECT is((SELECT last_lost FROM received_orders.received_orders_position_gaps
            WHERE consumer_group = 'gb1' AND kafka_partition = 1),
	12::bigint,
	'the gap found again moved its last_lost');

DELETE FROM received_orders.received_orders_position_gaps
 WHERE consumer_group = 'gb1' AND accepted_at IS NOT NULL;
SET ROLE ro_gapb_feeder;
SELECT is(received_orders.record_position_gap('gb1', 'orders', 5000, 0, 9),
	false,
	'once a superuser removed the accepted gaps, the group records a new one');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
