/*-------------------------------------------------------------------------
 *
 * utf8.c
 *	  Texts the feeder sends or logs kept valid UTF-8: cut on a character
 *	  boundary, invalid bytes replaced.
 *
 * A reason, an error or a status the feeder sends as text must be valid
 * UTF-8, or PostgreSQL refuses the whole statement (22021), and the same
 * batch would be refused again at every retry.  Such texts are built from
 * pieces the feeder does not control (a schema's names, a registry's
 * message, a server's error) and cut to fit buffers: every cut goes
 * through utf8_copy, which never splits a character, and a text of unknown
 * origin through utf8_fix.  Validity is RFC 3629's, as PostgreSQL checks
 * it: no overlong forms, no surrogates, nothing above U+10FFFF.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "utf8.h"

/*
 * utf8_char_len
 *		The length of the valid UTF-8 character at s (at most len bytes
 *		available), or 0 when the bytes there are not one (invalid,
 *		overlong, a surrogate, beyond U+10FFFF, or cut short).
 */
size_t
utf8_char_len(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *) s;
	size_t		n,
				i;
	unsigned char lo = 0x80,
				hi = 0xBF;

	if (len == 0)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xC2 && p[0] <= 0xDF)
		n = 2;
	else if (p[0] >= 0xE0 && p[0] <= 0xEF)
	{
		n = 3;
		if (p[0] == 0xE0)
			lo = 0xA0;			/* overlong */
		else if (p[0] == 0xED)
			hi = 0x9F;			/* surrogates */
	}
	else if (p[0] >= 0xF0 && p[0] <= 0xF4)
	{
		n = 4;
		if (p[0] == 0xF0)
			lo = 0x90;			/* overlong */
		else if (p[0] == 0xF4)
			hi = 0x8F;			/* above U+10FFFF */
	}
	else
		return 0;
	if (len < n)
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return n;
}

/*
 * utf8_copy
 *		Copy src into dst (dstlen bytes, NUL included) as valid UTF-8: each
 *		byte that does not start a valid character becomes '?', and when
 *		src does not fit it is cut before the first character that does
 *		not fit whole.  Returns the length copied.
 */
size_t
utf8_copy(char *dst, size_t dstlen, const char *src)
{
	size_t		len = src ? strlen(src) : 0,
				in = 0,
				out = 0;

	if (dstlen == 0)
		return 0;
	while (in < len)
	{
		size_t		n = utf8_char_len(src + in, len - in);

		if (out + (n ? n : 1) > dstlen - 1)
			break;
		if (n == 0)
		{
			dst[out++] = '?';
			in++;
			continue;
		}
		memcpy(dst + out, src + in, n);
		out += n;
		in += n;
	}
	dst[out] = '\0';
	return out;
}

/*
 * utf8_fix
 *		Make s valid UTF-8 in place: each byte that does not start a valid
 *		character becomes '?' (a character cut short at the end too).
 */
void
utf8_fix(char *s)
{
	size_t		len = strlen(s),
				i = 0;

	while (i < len)
	{
		size_t		n = utf8_char_len(s + i, len - i);

		if (n == 0)
		{
			s[i++] = '?';
			continue;
		}
		i += n;
	}
}

/*
 * utf8_to_ascii
 *		Make s ASCII in place: each character beyond ASCII (or invalid
 *		byte) becomes one '?'.  For a database whose encoding cannot hold
 *		every character (22P05 otherwise).
 */
void
utf8_to_ascii(char *s)
{
	size_t		len = strlen(s),
				in = 0,
				out = 0;

	while (in < len)
	{
		size_t		n = utf8_char_len(s + in, len - in);

		if (n == 1)
			s[out++] = s[in];
		else
			s[out++] = '?';
		in += n ? n : 1;
	}
	s[out] = '\0';
}

/*
 * utf8_is_valid
 *		Whether s is valid UTF-8.
 */
int
utf8_is_valid(const char *s)
{
	size_t		len = strlen(s),
				i = 0;

	while (i < len)
	{
		size_t		n = utf8_char_len(s + i, len - i);

		if (n == 0)
			return 0;
		i += n;
	}
	return 1;
}
