/*-------------------------------------------------------------------------
 *
 * registry_status.h
 *	  How the Schema Registry answered for a schema: shared by the client
 *	  (registry.c) and the parts it hands work to (registry_refs.c,
 *	  registry_unknown.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_REGISTRY_STATUS_H
#define FEEDER_REGISTRY_STATUS_H

/* How the registry answered for an id. */
typedef enum registry_status
{
	REGISTRY_OK,
	REGISTRY_UNKNOWN_ID,		/* 404 with 40403 past its grace, or a GUID
								 * the registry cannot resolve: that
								 * message is bad */
	REGISTRY_WAIT,				/* an id unknown yet, within its grace: that
								 * message (and its partition) waits */
	REGISTRY_TRANSIENT,			/* unreachable, timeout, 5xx, 429: retry */
	REGISTRY_FATAL				/* 401, 403, TLS, not a registry: exit 3 */
} registry_status;

#endif							/* FEEDER_REGISTRY_STATUS_H */
