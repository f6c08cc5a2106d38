/*-------------------------------------------------------------------------
 *
 * utf8.h
 *	  Texts the feeder sends or logs kept valid UTF-8: cut on a character
 *	  boundary, invalid bytes replaced.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_UTF8_H
#define FEEDER_UTF8_H

#include <stddef.h>

extern size_t utf8_char_len(const char *s, size_t len);
extern size_t utf8_copy(char *dst, size_t dstlen, const char *src);
extern void utf8_fix(char *s);
extern void utf8_to_ascii(char *s);
extern int	utf8_is_valid(const char *s);

#endif							/* FEEDER_UTF8_H */
