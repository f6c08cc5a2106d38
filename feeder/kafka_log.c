/*-------------------------------------------------------------------------
 *
 * kafka_log.c
 *	  librdkafka's log lines in the feeder's log format, for every client
 *	  handle the feeder makes (the consumer, the committed-offsets reader).
 *
 *-------------------------------------------------------------------------
 */
#include "kafka_log.h"
#include "log.h"

/*
 * kafka_log_cb
 *		librdkafka's own log lines, re-emitted in our format (from its
 *		threads: log_end writes a line atomically).
 */
void
kafka_log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	log_line	line;
	log_level	lv = level <= 3 ? LOG_ERROR : level == 4 ? LOG_WARNING :
		level <= 6 ? LOG_INFO : LOG_DEBUG;

	(void) rk;
	log_begin(&line, lv, "librdkafka");
	log_kv_str(&line, "facility", fac);
	log_kv_str(&line, "msg", buf);
	log_end(&line);
}
