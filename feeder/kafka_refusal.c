/*-------------------------------------------------------------------------
 *
 * kafka_refusal.c
 *	  Which Kafka errors are the cluster refusing the feeder, and the
 *	  line that says what to fix.
 *
 * librdkafka treats a failed SASL authentication and a missing ACL like
 * any broker trouble: it reports them (the error callback, a consumer
 * error) and tries again for ever.  Nothing changes between two attempts
 * but an operator's action, so the feeder ends at the first one with exit
 * 3, like a database permission error, naming the SASL mechanism and user
 * or the ACL to grant and to whom.  Everything else stays transient.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kafka_refusal.h"

/*
 * kafka_refusal_of
 *		The refusal an error code means, KAFKA_REFUSAL_NONE for any other
 *		error (left to librdkafka's retries).
 */
kafka_refusal
kafka_refusal_of(rd_kafka_resp_err_t err)
{
	switch (err)
	{
		case RD_KAFKA_RESP_ERR__AUTHENTICATION:
		case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
		case RD_KAFKA_RESP_ERR_UNSUPPORTED_SASL_MECHANISM:
		case RD_KAFKA_RESP_ERR_ILLEGAL_SASL_STATE:
			return KAFKA_REFUSAL_AUTHENTICATION;
		case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
			return KAFKA_REFUSAL_GROUP;
		case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
			return KAFKA_REFUSAL_TOPIC;
		case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
			return KAFKA_REFUSAL_CLUSTER;
		default:
			return KAFKA_REFUSAL_NONE;
	}
}

/*
 * kafka_refusal_name
 *		The refusal's name in the log line (what=...).
 */
const char *
kafka_refusal_name(kafka_refusal r)
{
	switch (r)
	{
		case KAFKA_REFUSAL_AUTHENTICATION:
			return "authentication";
		case KAFKA_REFUSAL_GROUP:
			return "group_acl";
		case KAFKA_REFUSAL_TOPIC:
			return "topic_acl";
		case KAFKA_REFUSAL_CLUSTER:
			return "cluster_acl";
		default:
			return "none";
	}
}

/*
 * kafka_refusal_principal
 *		The principal the brokers see, when the configuration tells it:
 *		User:NAME for the SASL mechanisms whose principal is the user name
 *		(PLAIN, SCRAM-*); "" otherwise (GSSAPI, OAUTHBEARER and TLS client
 *		certificates map theirs on the brokers).
 */
void
kafka_refusal_principal(const kafka_refusal_context *ctx, char *buf, size_t len)
{
	buf[0] = '\0';
	if (ctx->security_protocol == NULL ||
		strncasecmp(ctx->security_protocol, "sasl_", 5) != 0)
		return;
	if (ctx->username == NULL || ctx->username[0] == '\0' || ctx->mechanism == NULL)
		return;
	if (strcmp(ctx->mechanism, "PLAIN") == 0 ||
		strncmp(ctx->mechanism, "SCRAM-", 6) == 0)
		snprintf(buf, len, "User:%s", ctx->username);
}

/*
 * kafka_refusal_hint
 *		What to fix, in one sentence for the log's hint: the mechanism and
 *		user for an authentication failure; the ACL, the resource and the
 *		principal (when known) for an authorization failure.
 */
void
kafka_refusal_hint(kafka_refusal r, const kafka_refusal_context *ctx,
				   char *buf, size_t len)
{
	char		principal[300];
	const char *who;

	kafka_refusal_principal(ctx, principal, sizeof(principal));
	who = principal[0] ? principal : "the feeder's principal";
	switch (r)
	{
		case KAFKA_REFUSAL_AUTHENTICATION:
			snprintf(buf, len,
					 "the brokers refused the SASL authentication of user \"%s\" "
					 "with mechanism %s (security.protocol %s): check sasl.username "
					 "and sasl.password, and that the user exists on the cluster for "
					 "that mechanism (kafka-configs --entity-type users for SCRAM)",
					 ctx->username ? ctx->username : "",
					 ctx->mechanism ? ctx->mechanism : "GSSAPI",
					 ctx->security_protocol ? ctx->security_protocol : "plaintext");
			break;
		case KAFKA_REFUSAL_GROUP:
			snprintf(buf, len,
					 "grant %s READ on the consumer group \"%s\": kafka-acls --add "
					 "--allow-principal %s --operation Read --group %s",
					 who, ctx->group ? ctx->group : "",
					 principal[0] ? principal : "<principal>",
					 ctx->group ? ctx->group : "<group>");
			break;
		case KAFKA_REFUSAL_TOPIC:
			snprintf(buf, len,
					 "grant %s READ and DESCRIBE on the topic \"%s\": kafka-acls --add "
					 "--allow-principal %s --operation Read --operation Describe --topic %s",
					 who, ctx->topic ? ctx->topic : "",
					 principal[0] ? principal : "<principal>",
					 ctx->topic ? ctx->topic : "<topic>");
			break;
		case KAFKA_REFUSAL_CLUSTER:
			snprintf(buf, len,
					 "the brokers refused %s an operation on the cluster resource: "
					 "check the cluster ACLs (kafka-acls --list --cluster)", who);
			break;
		default:
			buf[0] = '\0';
			break;
	}
}
