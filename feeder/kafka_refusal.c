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
 * Some errors are told by their text only: a TLS client certificate the
 * brokers refused arrives as a transport error carrying their alert; an
 * OAUTHBEARER token librdkafka could not fetch is an authentication error
 * whether the identity provider refused the client (a refusal) or could
 * not be reached (transient: librdkafka asks again 10 s later); a broker
 * turning a re-authentication down (ILLEGAL_SASL_STATE: Kafka allows one a
 * second per connection) is cured by the reconnection that follows.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kafka_refusal.h"
#include "tls_alert.h"

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
 * kafka_refusal_oidc_refused
 *		Whether the text after "Failed to acquire SASL OAUTHBEARER token: "
 *		is the token endpoint refusing the client: an OAuth 2.0 error code
 *		(RFC 6749 5.2, in the JSON body librdkafka relays), or a TLS
 *		certificate problem with the endpoint (https.ca.location).  A
 *		connection refused, a timeout or a 5xx without such a code is the
 *		endpoint unavailable.
 */
static int
kafka_refusal_oidc_refused(const char *text)
{
	static const char *const refusals[] = {
		"\"invalid_client\"", "\"unauthorized_client\"", "\"invalid_grant\"",
		"\"invalid_scope\"", "\"unsupported_grant_type\"", "\"invalid_request\"",
		"\"access_denied\"", "SSL certificate problem"
	};
	size_t		i;

	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
		if (strstr(text, refusals[i]) != NULL)
			return 1;
	return 0;
}

/*
 * kafka_refusal_of_error
 *		The refusal an error means with its reason text (see the file's
 *		header): kafka_refusal_of, but a transport or TLS error whose
 *		reason is the brokers' certificate alert is KAFKA_REFUSAL_CERTIFICATE,
 *		and an authentication error that is an unreachable token endpoint
 *		or a refused re-authentication is KAFKA_REFUSAL_NONE.  reason may
 *		be NULL.
 */
kafka_refusal
kafka_refusal_of_error(rd_kafka_resp_err_t err, const char *reason)
{
	static const char oidc_prefix[] = "Failed to acquire SASL OAUTHBEARER token: ";

	if (err == RD_KAFKA_RESP_ERR__TRANSPORT || err == RD_KAFKA_RESP_ERR__SSL)
		return tls_alert_refuses_certificate(reason) ?
			KAFKA_REFUSAL_CERTIFICATE : KAFKA_REFUSAL_NONE;
	if (err == RD_KAFKA_RESP_ERR__AUTHENTICATION && reason != NULL)
	{
		if (strncmp(reason, oidc_prefix, sizeof(oidc_prefix) - 1) == 0)
			return kafka_refusal_oidc_refused(reason + sizeof(oidc_prefix) - 1) ?
				KAFKA_REFUSAL_AUTHENTICATION : KAFKA_REFUSAL_NONE;
		if (strstr(reason, "Request not valid in current SASL state") != NULL)
			return KAFKA_REFUSAL_NONE;
	}
	return kafka_refusal_of(err);
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
		case KAFKA_REFUSAL_CERTIFICATE:
			return "tls_certificate";
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
			if (ctx->mechanism && strcmp(ctx->mechanism, "OAUTHBEARER") == 0)
				snprintf(buf, len,
						 "the token endpoint or the brokers refused the feeder's "
						 "OAUTHBEARER credentials (security.protocol %s): check "
						 "sasl.oauthbearer.client.id and sasl.oauthbearer.client.secret "
						 "against the identity provider, sasl.oauthbearer.token.endpoint.url "
						 "and sasl.oauthbearer.scope, and that the token's audience and "
						 "issuer are those the brokers expect",
						 ctx->security_protocol ? ctx->security_protocol : "plaintext");
			else
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
					 "grant %s READ and DESCRIBE on the consumer group \"%s\": kafka-acls "
					 "--add --allow-principal %s --operation Read --group %s (READ "
					 "implies DESCRIBE, but a DENY ACL for either wins: kafka-acls "
					 "--list --group %s)",
					 who, ctx->group ? ctx->group : "",
					 principal[0] ? principal : "<principal>",
					 ctx->group ? ctx->group : "<group>",
					 ctx->group ? ctx->group : "<group>");
			break;
		case KAFKA_REFUSAL_TOPIC:
			snprintf(buf, len,
					 "grant %s READ and DESCRIBE on the topic \"%s\": kafka-acls --add "
					 "--allow-principal %s --operation Read --operation Describe --topic %s "
					 "(a DENY ACL for either wins: kafka-acls --list --topic %s)",
					 who, ctx->topic ? ctx->topic : "",
					 principal[0] ? principal : "<principal>",
					 ctx->topic ? ctx->topic : "<topic>",
					 ctx->topic ? ctx->topic : "<topic>");
			break;
		case KAFKA_REFUSAL_CLUSTER:
			snprintf(buf, len,
					 "the brokers refused %s an operation on the cluster resource: "
					 "check the cluster ACLs (kafka-acls --list --cluster)", who);
			break;
		case KAFKA_REFUSAL_CERTIFICATE:
			snprintf(buf, len,
					 "the brokers refused the feeder's TLS client certificate, or its "
					 "absence (security.protocol %s): set ssl.certificate.location and "
					 "ssl.key.location to a certificate signed by a CA the listener "
					 "trusts (its ssl.truststore), not expired; the principal is its "
					 "subject as ssl.principal.mapping.rules maps it",
					 ctx->security_protocol ? ctx->security_protocol : "ssl");
			break;
		default:
			buf[0] = '\0';
			break;
	}
}
