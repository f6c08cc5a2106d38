-- received_orders--1.1--1.2.sql — update from 1.1 to 1.2.
--
-- Every schema change of 1.2 is in this one script; 1.0's and 1.1's scripts
-- stay frozen.  Each section below says what it adds and why.

\echo Use "ALTER EXTENSION received_orders UPDATE TO '1.2'" to load this file. \quit

-- Quarantined headers are bounded like every other stored field: 1.1 stored
-- a header's whole value, so a 15-byte message with an 8 MB content-type
-- stored 8 MB of header text.  The batch function now keeps each header
-- value's first 4096 bytes (whole characters) and records the length as
-- received in a member "NAME:bytes"; only the column's description changes.
COMMENT ON COLUMN received_orders.received_orders_quarantine.kafka_headers IS
	'The headers that identified the message (its type header, content-type) as text, or as \x... hex when not valid UTF-8; a value longer than 4096 bytes keeps its first 4096 bytes and a member "NAME:bytes" gives its length as received; NULL if none';
