/*-------------------------------------------------------------------------
 *
 * log.h
 *	  Structured key=value log lines on stderr, and password redaction.
 *
 * A line is assembled with log_begin(), one log_kv_*() call per field and
 * log_end(), which writes it with a single write(2) so that lines from
 * librdkafka's threads never interleave with ours.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_LOG_H
#define FEEDER_LOG_H

#include <stddef.h>
#include <stdint.h>

typedef enum log_level
{
	LOG_DEBUG = 0,
	LOG_INFO,
	LOG_WARNING,
	LOG_ERROR,
	LOG_FATAL
} log_level;

#define LOG_LINE_MAX 4096
/* Longest field value written (quoted and escaped), cut beyond. */
#define LOG_VALUE_MAX 1024

typedef struct log_line
{
	log_level	level;
	int			enabled;
	size_t		len;
	char		buf[LOG_LINE_MAX];
} log_line;

extern void log_set_level(log_level level);
extern log_level log_get_level(void);
extern int	log_parse_level(const char *name, log_level *level);
extern const char *log_level_name(log_level level);

extern void log_begin(log_line *line, log_level level, const char *event);
extern void log_kv_str(log_line *line, const char *key, const char *value);
extern void log_kv_int(log_line *line, const char *key, int64_t value);
extern void log_kv_uint(log_line *line, const char *key, uint64_t value);
extern void log_kv_fmt(log_line *line, const char *key, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));
extern void log_end(log_line *line);

extern void log_simple(log_level level, const char *event, const char *msg);

extern size_t log_quote_value(char *out, size_t outlen, const char *value);
extern char *log_redact_conninfo(const char *conninfo);
extern int	log_redact_conninfo_inplace(char *s);

#endif							/* FEEDER_LOG_H */
