/*-------------------------------------------------------------------------
 *
 * tls_alert.c
 *	  Whether an OpenSSL error text reports a TLS alert by which the peer
 *	  refused the client's certificate.
 *
 * The Schema Registry's client (libcurl) and the Kafka client (librdkafka)
 * both relay OpenSSL's text.  With TLS 1.3 a server checks the client's
 * certificate after the client's side of the handshake is done, so its
 * refusal arrives as an alert on the first read or write, not as a
 * handshake failure: the text is all there is to tell it by.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "tls_alert.h"

/*
 * tls_alert_refuses_certificate
 *		Whether text holds OpenSSL's report of an alert refusing the
 *		client's certificate: "tlsv13 alert certificate required", "sslv3
 *		alert bad certificate", "tlsv1 alert unknown ca"...  Any other alert
 *		is not about the certificate (a load balancer under strain sends
 *		"internal error"; "close notify" is a peer closing), so it says
 *		nothing of the configuration.
 */
int
tls_alert_refuses_certificate(const char *text)
{
	static const char *const refusals[] = {
		"certificate required", "bad certificate", "unknown ca",
		"certificate unknown", "certificate expired", "certificate revoked",
		"unsupported certificate", "access denied"
	};
	const char *alert;
	size_t		i;

	if (text == NULL)
		return 0;
	for (alert = strstr(text, " alert "); alert != NULL;
		 alert = strstr(alert + 1, " alert "))
		for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
			if (strncmp(alert + 7, refusals[i], strlen(refusals[i])) == 0)
				return 1;
	return 0;
}
