/*-------------------------------------------------------------------------
 *
 * kafka_refusal.h
 *	  Which Kafka errors are the cluster refusing the feeder (SASL
 *	  authentication, a missing ACL): configuration errors that no retry
 *	  cures, ending the feeder with exit 3 and a line saying what to fix.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_KAFKA_REFUSAL_H
#define FEEDER_KAFKA_REFUSAL_H

#include <stddef.h>

#include <librdkafka/rdkafka.h>

typedef enum kafka_refusal
{
	KAFKA_REFUSAL_NONE = 0,		/* transient or not a refusal */
	KAFKA_REFUSAL_AUTHENTICATION,	/* SASL credentials or mechanism */
	KAFKA_REFUSAL_GROUP,		/* no READ ACL on the consumer group */
	KAFKA_REFUSAL_TOPIC,		/* no READ/DESCRIBE ACL on a topic */
	KAFKA_REFUSAL_CLUSTER,		/* an ACL on the cluster resource */
	KAFKA_REFUSAL_CERTIFICATE	/* the brokers refused the TLS client
								 * certificate (or its absence) */
} kafka_refusal;

/* What the hint names: any of these may be NULL (not known). */
typedef struct kafka_refusal_context
{
	const char *security_protocol;	/* security.protocol */
	const char *mechanism;		/* sasl.mechanisms */
	const char *username;		/* sasl.username */
	const char *group;			/* group.id */
	const char *topic;			/* the topic refused, or the subscription */
} kafka_refusal_context;

extern kafka_refusal kafka_refusal_of(rd_kafka_resp_err_t err);
extern kafka_refusal kafka_refusal_of_error(rd_kafka_resp_err_t err,
											const char *reason);
extern const char *kafka_refusal_name(kafka_refusal r);
extern void kafka_refusal_principal(const kafka_refusal_context *ctx,
									char *buf, size_t len);
extern void kafka_refusal_hint(kafka_refusal r, const kafka_refusal_context *ctx,
							   char *buf, size_t len);

#endif							/* FEEDER_KAFKA_REFUSAL_H */
