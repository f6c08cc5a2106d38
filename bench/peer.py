#!/usr/bin/python3
"""bench/peer.py -- the hand-written peer that bench/feeder compares with.

The listener a team would write instead of installing received_orders:
Python, confluent-kafka (librdkafka, like the feeder) and psycopg2.  It
consumes up to --batch (500) messages, validates each event the way the
extension does (a JSON object, orderId a UUID, externalReference a non-blank
string of at most 255 characters), inserts the batch with one multi-row
INSERT ... ON CONFLICT (order_id) DO NOTHING (psycopg2.extras.execute_values),
commits, then commits the Kafka offsets synchronously: the same delivery
contract as the feeder (offsets never ahead of the database).  It keeps no
quarantine and no positions: an invalid event is only counted.

Usage: bench/peer.py --brokers HOST:PORT --topic T --group G --dsn DSN
                     --expect N [--batch 500] [--timeout 600]

Stops when N messages were consumed and their offsets committed.  Prints one
line: "peer messages=N inserted=I invalid=V seconds=S rate=R", S from the
first partition assignment to the last offset commit.
"""

import argparse
import json
import sys
import time
import uuid

import psycopg2
import psycopg2.extras
from confluent_kafka import Consumer, KafkaException

BLANKS = " \t\n\r\f\v"


def order_row(value):
    """(order_id, external_reference, payload text) of a valid event, or None."""
    if value is None:
        return None
    try:
        text = value.decode("utf-8")
        event = json.loads(text)
        if not isinstance(event, dict):
            return None
        order_id = event.get("orderId")
        reference = event.get("externalReference")
        if not isinstance(order_id, str) or not isinstance(reference, str):
            return None
        order_id = str(uuid.UUID(order_id))
    except (UnicodeDecodeError, ValueError):
        return None
    if reference.strip(BLANKS) == "" or len(reference) > 255 or "\\u0000" in text:
        return None
    return (order_id, reference, text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brokers", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--expect", type=int, required=True)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()

    assigned_at = []

    def on_assign(consumer, partitions):
        if not assigned_at:
            assigned_at.append(time.time())

    consumer = Consumer({
        "bootstrap.servers": args.brokers,
        "group.id": args.group,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": 6000,
        "fetch.wait.max.ms": 5,
    })
    consumer.subscribe([args.topic], on_assign=on_assign)
    db = psycopg2.connect(args.dsn, application_name="bench-peer")
    cursor = db.cursor()

    consumed = inserted = invalid = 0
    deadline = time.time() + args.timeout
    while consumed < args.expect:
        if time.time() > deadline:
            print(f"peer: timed out after {consumed} of {args.expect} messages", file=sys.stderr)
            return 1
        messages = consumer.consume(num_messages=args.batch, timeout=0.5)
        if not messages:
            continue
        rows = []
        for message in messages:
            if message.error():
                raise KafkaException(message.error())
            consumed += 1
            row = order_row(message.value())
            if row is None:
                invalid += 1
            else:
                rows.append(row)
        if rows:
            psycopg2.extras.execute_values(
                cursor,
                "INSERT INTO received_orders.received_orders "
                "(order_id, external_reference, payload) VALUES %s "
                "ON CONFLICT (order_id) DO NOTHING",
                rows, template="(%s::uuid, %s, %s::jsonb)", page_size=len(rows))
            inserted += cursor.rowcount
        db.commit()
        consumer.commit(asynchronous=False)
    finished = time.time()
    consumer.close()
    db.close()
    seconds = finished - assigned_at[0]
    print(f"peer messages={consumed} inserted={inserted} invalid={invalid} "
          f"seconds={seconds:.3f} rate={consumed / seconds:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
