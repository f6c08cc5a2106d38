/*-------------------------------------------------------------------------
 *
 * kafka_committed.h
 *	  The consumer group's committed offsets of whole topics, read by a
 *	  client of its own that joins no group (kafka_committed.c), for
 *	  --adopt-kafka-offsets.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_KAFKA_COMMITTED_H
#define FEEDER_KAFKA_COMMITTED_H

#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

/* The group's committed offset of one partition (kafka_read_committed). */
typedef struct kafka_committed_offset
{
	const char *topic;			/* one of the caller's topic names */
	int32_t		partition;
	int64_t		committed;		/* -1: the group has none */
} kafka_committed_offset;

extern int	kafka_read_committed(rd_kafka_conf_t *conf, char *const *topics, int ntopics,
								 kafka_committed_offset **out, int *n,
								 char *cluster_id, size_t cluster_idlen,
								 char *err, size_t errlen);

#endif							/* FEEDER_KAFKA_COMMITTED_H */
