/*-------------------------------------------------------------------------
 *
 * kafka_version.h
 *	  The floor of the Kafka client the feeder is built with and runs on.
 *
 * The feeder carries librdkafka 2.14.2 (tools/build-librdkafka, linked
 * statically).  A distribution packager may build it against a system
 * librdkafka instead (make RDKAFKA=system), but not one below 2.12.0:
 * below it SCRAM fails on Kafka 4 (the client-final nonce, fixed in 2.6.1),
 * the consumer group protocol of KIP-848 is not generally available (2.12),
 * a leader change stalls fetching for up to a second (fixed in 2.10), stale
 * partition errors follow commits (fixed in 2.12), and 2.1.0 to 2.2.x reset
 * offsets and never commit stored ones.  The floor is checked when the
 * feeder is compiled and again when it starts, against the library the
 * dynamic linker found.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_KAFKA_VERSION_H
#define FEEDER_KAFKA_VERSION_H

#include <librdkafka/rdkafka.h>

/* 2.12.0, in RD_KAFKA_VERSION's 0xMMmmrrxx form */
#define KAFKA_VERSION_FLOOR 0x020c0000
#define KAFKA_VERSION_FLOOR_STR "2.12.0"

#if RD_KAFKA_VERSION < KAFKA_VERSION_FLOOR
#error "librdkafka is older than 2.12.0, the floor of feeder/kafka_version.h: build the bundled client (tools/build-librdkafka, which make deps runs) or point pkg-config at a librdkafka >= 2.12.0"
#endif

/*
 * kafka_version_ok
 *		Whether the librdkafka this process runs with is at the floor (a
 *		system library replaced after the build may be older).
 */
static inline int
kafka_version_ok(void)
{
	return rd_kafka_version() >= KAFKA_VERSION_FLOOR;
}

#endif							/* FEEDER_KAFKA_VERSION_H */
