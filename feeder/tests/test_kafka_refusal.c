/*-------------------------------------------------------------------------
 *
 * test_kafka_refusal.c
 *	  Unit tests of kafka_refusal.c: which Kafka errors are the cluster
 *	  refusing the feeder (exit 3) and which stay transient, the principal
 *	  the brokers see, and the hint naming what to fix.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kafka_refusal.h"

/* SASL failures, whether librdkafka or the broker reports them. */
static void
test_authentication(void **state)
{
	(void) state;
	assert_int_equal(kafka_refusal_of(RD_KAFKA_RESP_ERR__AUTHENTICATION),
					 KAFKA_REFUSAL_AUTHENTICATION);
	assert_int_equal(kafka_refusal_of(RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED),
					 KAFKA_REFUSAL_AUTHENTICATION);
	assert_int_equal(kafka_refusal_of(RD_KAFKA_RESP_ERR_UNSUPPORTED_SASL_MECHANISM),
					 KAFKA_REFUSAL_AUTHENTICATION);
	assert_string_equal(kafka_refusal_name(KAFKA_REFUSAL_AUTHENTICATION), "authentication");
}

/* Missing ACLs, by resource. */
static void
test_authorization(void **state)
{
	(void) state;
	assert_int_equal(kafka_refusal_of(RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED),
					 KAFKA_REFUSAL_GROUP);
	assert_int_equal(kafka_refusal_of(RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED),
					 KAFKA_REFUSAL_TOPIC);
	assert_int_equal(kafka_refusal_of(RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED),
					 KAFKA_REFUSAL_CLUSTER);
	assert_string_equal(kafka_refusal_name(KAFKA_REFUSAL_GROUP), "group_acl");
	assert_string_equal(kafka_refusal_name(KAFKA_REFUSAL_TOPIC), "topic_acl");
}

/* Broker trouble stays librdkafka's to retry: never a refusal. */
static void
test_transient(void **state)
{
	static const rd_kafka_resp_err_t transient[] = {
		RD_KAFKA_RESP_ERR_NO_ERROR,
		RD_KAFKA_RESP_ERR__TRANSPORT,
		RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN,
		RD_KAFKA_RESP_ERR__RESOLVE,
		RD_KAFKA_RESP_ERR__TIMED_OUT,
		RD_KAFKA_RESP_ERR__SSL,
		RD_KAFKA_RESP_ERR__FATAL,
		RD_KAFKA_RESP_ERR__PARTITION_EOF,
		RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART,
		RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
		RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE,
		RD_KAFKA_RESP_ERR_NOT_COORDINATOR,
		RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS,
		RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE,
	};
	size_t		i;

	(void) state;
	for (i = 0; i < sizeof(transient) / sizeof(transient[0]); i++)
		assert_int_equal(kafka_refusal_of(transient[i]), KAFKA_REFUSAL_NONE);
}

/* User:NAME only where the user name is the principal (PLAIN, SCRAM). */
static void
test_principal(void **state)
{
	kafka_refusal_context ctx = {"sasl_ssl", "SCRAM-SHA-512", "ro-feeder", "g", "t"};
	char		buf[300];

	(void) state;
	kafka_refusal_principal(&ctx, buf, sizeof(buf));
	assert_string_equal(buf, "User:ro-feeder");
	ctx.mechanism = "PLAIN";
	ctx.security_protocol = "SASL_PLAINTEXT";
	kafka_refusal_principal(&ctx, buf, sizeof(buf));
	assert_string_equal(buf, "User:ro-feeder");
	ctx.mechanism = "OAUTHBEARER";
	kafka_refusal_principal(&ctx, buf, sizeof(buf));
	assert_string_equal(buf, "");
	ctx.mechanism = "PLAIN";
	ctx.security_protocol = "ssl";	/* sasl.username set but unused */
	kafka_refusal_principal(&ctx, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

/* The hints name the mechanism and user, or the ACL, resource and principal. */
static void
test_hints(void **state)
{
	kafka_refusal_context ctx = {"sasl_ssl", "SCRAM-SHA-512", "ro-feeder",
	"orders-group", "orders"};
	char		buf[1024];

	(void) state;
	kafka_refusal_hint(KAFKA_REFUSAL_AUTHENTICATION, &ctx, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"ro-feeder\""));
	assert_non_null(strstr(buf, "SCRAM-SHA-512"));
	kafka_refusal_hint(KAFKA_REFUSAL_GROUP, &ctx, buf, sizeof(buf));
	assert_non_null(strstr(buf, "grant User:ro-feeder READ and DESCRIBE on the consumer group \"orders-group\""));
	assert_non_null(strstr(buf, "--operation Read --group orders-group"));
	kafka_refusal_hint(KAFKA_REFUSAL_TOPIC, &ctx, buf, sizeof(buf));
	assert_non_null(strstr(buf, "grant User:ro-feeder READ and DESCRIBE on the topic \"orders\""));
	assert_non_null(strstr(buf, "--operation Describe --topic orders"));
	ctx.security_protocol = "ssl";
	kafka_refusal_hint(KAFKA_REFUSAL_GROUP, &ctx, buf, sizeof(buf));
	assert_non_null(strstr(buf, "grant the feeder's principal READ"));
	kafka_refusal_hint(KAFKA_REFUSAL_NONE, &ctx, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

/*
 * A missing DESCRIBE on the group (READ granted, DESCRIBE denied: READ
 * implies DESCRIBE unless an ACL denies it) fails with the same error as a
 * missing READ: the hint names both rights and the DENY ACLs to look for.
 */
static void
test_hint_group_describe(void **state)
{
	kafka_refusal_context ctx = {"sasl_ssl", "PLAIN", "ro-feeder", "orders-group", "orders"};
	char		buf[1024];

	(void) state;
	kafka_refusal_hint(KAFKA_REFUSAL_GROUP, &ctx, buf, sizeof(buf));
	assert_non_null(strstr(buf, "grant User:ro-feeder READ and DESCRIBE on the consumer group \"orders-group\""));
	assert_non_null(strstr(buf, "DENY"));
	assert_non_null(strstr(buf, "kafka-acls --list --group orders-group"));
	kafka_refusal_hint(KAFKA_REFUSAL_TOPIC, &ctx, buf, sizeof(buf));
	assert_non_null(strstr(buf, "DENY"));
	assert_non_null(strstr(buf, "kafka-acls --list --topic orders"));
}

/*
 * OAUTHBEARER (sasl.oauthbearer.method=oidc): a token the token endpoint
 * refused (wrong client secret) or the brokers refused is the client's
 * credentials, not sasl.username/sasl.password.
 */
static void
test_hint_oauthbearer(void **state)
{
	kafka_refusal_context ctx = {"SASL_SSL", "OAUTHBEARER", "", "g", "t"};
	char		buf[1024];

	(void) state;
	kafka_refusal_hint(KAFKA_REFUSAL_AUTHENTICATION, &ctx, buf, sizeof(buf));
	assert_non_null(strstr(buf, "sasl.oauthbearer.client.id"));
	assert_non_null(strstr(buf, "sasl.oauthbearer.client.secret"));
	assert_non_null(strstr(buf, "sasl.oauthbearer.token.endpoint.url"));
	assert_null(strstr(buf, "sasl.password"));
}

/*
 * What only the reason tells: the brokers refusing the client's TLS
 * certificate (their alert, as librdkafka relays it) is a refusal; the
 * feeder refusing the brokers' certificate stays transient (test/tls/02);
 * an OIDC token the endpoint refused is one, the endpoint unreachable is
 * not; a re-authentication the broker turned down (ILLEGAL_SASL_STATE,
 * within a second of the previous one) is cured by the reconnection.
 */
static void
test_of_error(void **state)
{
	(void) state;
	assert_int_equal(kafka_refusal_of_error(RD_KAFKA_RESP_ERR__TRANSPORT,
											"ssl://127.0.0.1:26554/bootstrap: Receive failed: error:0A000412:SSL routines::sslv3 alert bad certificate: SSL alert number 42 (after 35ms in state APIVERSION_QUERY)"),
					 KAFKA_REFUSAL_CERTIFICATE);
	assert_int_equal(kafka_refusal_of_error(RD_KAFKA_RESP_ERR__SSL,
											"ssl://127.0.0.1:1/bootstrap: SSL handshake failed: error:0A00045C:SSL routines::tlsv13 alert certificate required"),
					 KAFKA_REFUSAL_CERTIFICATE);
	assert_int_equal(kafka_refusal_of_error(RD_KAFKA_RESP_ERR__TRANSPORT,
											"ssl://h:1/bootstrap: Receive failed: tlsv1 alert unknown ca"),
					 KAFKA_REFUSAL_CERTIFICATE);
	assert_int_equal(kafka_refusal_of_error(RD_KAFKA_RESP_ERR__SSL,
											"ssl://h:1/bootstrap: SSL handshake failed: error:0A000086:SSL routines::certificate verify failed: broker certificate could not be verified, verify that ssl.ca.location is correctly configured"),
					 KAFKA_REFUSAL_NONE);
	assert_int_equal(kafka_refusal_of_error(RD_KAFKA_RESP_ERR__TRANSPORT,
											"ssl://h:1/bootstrap: Receive failed: tlsv1 alert internal error"),
					 KAFKA_REFUSAL_NONE);
	assert_int_equal(kafka_refusal_of_error(RD_KAFKA_RESP_ERR__TRANSPORT, NULL),
					 KAFKA_REFUSAL_NONE);
	assert_int_equal(kafka_refusal_of_error(RD_KAFKA_RESP_ERR__AUTHENTICATION,
											"Failed to acquire SASL OAUTHBEARER token: {\"error\": \"invalid_client\", \"error_description\": \"client authentication failed\"}"),
					 KAFKA_REFUSAL_AUTHENTICATION);
	assert_int_equal(kafka_refusal_of_error(RD_KAFKA_RESP_ERR__AUTHENTICATION,
											"Failed to acquire SASL OAUTHBEARER token: Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server"),
					 KAFKA_REFUSAL_NONE);
	assert_int_equal(kafka_refusal_of_error(RD_KAFKA_RESP_ERR__AUTHENTICATION,
											"GroupCoordinator: 127.0.0.1:17654: SASL OAUTHBEARER mechanism handshake failed: Broker: Request not valid in current SASL state: broker's supported mechanisms:  (after 2ms in state AUTH_HANDSHAKE)"),
					 KAFKA_REFUSAL_NONE);
	assert_int_equal(kafka_refusal_of_error(RD_KAFKA_RESP_ERR__AUTHENTICATION,
											"sasl_ssl://h:1/bootstrap: SASL authentication error: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"),
					 KAFKA_REFUSAL_AUTHENTICATION);
	assert_int_equal(kafka_refusal_of_error(RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, NULL),
					 KAFKA_REFUSAL_GROUP);
	assert_string_equal(kafka_refusal_name(KAFKA_REFUSAL_CERTIFICATE), "tls_certificate");
}

/* A refused client certificate: the certificate and key to configure. */
static void
test_hint_certificate(void **state)
{
	kafka_refusal_context ctx = {"ssl", NULL, NULL, "g", "t"};
	char		buf[1024];

	(void) state;
	kafka_refusal_hint(KAFKA_REFUSAL_CERTIFICATE, &ctx, buf, sizeof(buf));
	assert_non_null(strstr(buf, "ssl.certificate.location"));
	assert_non_null(strstr(buf, "ssl.key.location"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_authentication),
		cmocka_unit_test(test_authorization),
		cmocka_unit_test(test_transient),
		cmocka_unit_test(test_principal),
		cmocka_unit_test(test_hints),
		cmocka_unit_test(test_hint_group_describe),
		cmocka_unit_test(test_hint_oauthbearer),
		cmocka_unit_test(test_of_error),
		cmocka_unit_test(test_hint_certificate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
