/*
 * test/sanitize/canary.c — the sanitizer run's negative control: two SQL
 * functions with deliberate defects, built with the same flags as the
 * sanitized extension and loaded by the same server.  When they do not
 * make AddressSanitizer and UndefinedBehaviorSanitizer report, the
 * sanitized run proves nothing (no runtime preloaded, flags lost), and
 * test/sanitize/run says so.
 *
 * Not part of the product: test/sanitize/run compiles it into its own
 * throwaway PostgreSQL prefix only.
 */
#include "postgres.h"

#include "fmgr.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(ro_canary_heap_overflow);
PG_FUNCTION_INFO_V1(ro_canary_shift);

/* reads one byte past a malloc'd buffer of n bytes */
Datum
ro_canary_heap_overflow(PG_FUNCTION_ARGS)
{
	int32		n = PG_GETARG_INT32(0);
	volatile char *buffer = malloc(n);
	int32		byte;

	memset((char *) buffer, 'x', n);
	byte = buffer[n];
	free((char *) buffer);
	PG_RETURN_INT32(byte);
}

/* shifts a 32-bit integer by its argument (undefined from 32 on) */
Datum
ro_canary_shift(PG_FUNCTION_ARGS)
{
	int32		by = PG_GETARG_INT32(0);

	PG_RETURN_INT32(1 << by);
}
