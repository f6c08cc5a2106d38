/*-------------------------------------------------------------------------
 *
 * cloudevents_mode.h
 *	  The one rule that tells a CloudEvents structured-mode message from a
 *	  binary-mode one by its content-type header, shared by the extension
 *	  and the feeder.
 *
 * The feeder decides from it whether a message of another ce_type may stay
 * behind (binary mode: the header is the type) or must be sent (structured
 * mode: the type is inside the value); the extension decides from it how to
 * open the value.  When the two disagreed (1.1: the feeder did not skip
 * leading blanks), a structured message was skipped without being read.
 * Plain C with no dependency, so that both sides compile the same text;
 * test/cases/cloudevents-content-types.txt is the table of cases both sides
 * test.
 *
 *-------------------------------------------------------------------------
 */
#ifndef RO_CLOUDEVENTS_MODE_H
#define RO_CLOUDEVENTS_MODE_H

#include <stddef.h>

/*
 * ro_cloudevents_structured
 *		Whether a content-type value announces structured mode: optional
 *		leading blanks (space, tab), then application/cloudevents in any
 *		case (media types are case-insensitive), then the end, a +format
 *		suffix, parameters (;) or a blank.  NULL (no header) is binary mode.
 */
static inline int
ro_cloudevents_structured(const char *content_type, size_t len)
{
	static const char prefix[] = "application/cloudevents";
	const size_t n = sizeof(prefix) - 1;
	size_t		i;

	if (content_type == NULL)
		return 0;
	while (len > 0 && (*content_type == ' ' || *content_type == '\t'))
		content_type++, len--;
	if (len < n)
		return 0;
	for (i = 0; i < n; i++)
	{
		char		c = content_type[i];

		if (c >= 'A' && c <= 'Z')
			c = (char) (c - 'A' + 'a');
		if (c != prefix[i])
			return 0;
	}
	return len == n || content_type[n] == '+' || content_type[n] == ';' ||
		content_type[n] == ' ' || content_type[n] == '\t';
}

#endif							/* RO_CLOUDEVENTS_MODE_H */
