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
	assert_non_null(strstr(buf, "grant User:ro-feeder READ on the consumer group \"orders-group\""));
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_authentication),
		cmocka_unit_test(test_authorization),
		cmocka_unit_test(test_transient),
		cmocka_unit_test(test_principal),
		cmocka_unit_test(test_hints),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
