/*-------------------------------------------------------------------------
 *
 * tls_alert.h
 *	  Whether an OpenSSL error text reports a TLS alert by which the peer
 *	  refused the client's certificate.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_TLS_ALERT_H
#define FEEDER_TLS_ALERT_H

extern int	tls_alert_refuses_certificate(const char *text);

#endif							/* FEEDER_TLS_ALERT_H */
