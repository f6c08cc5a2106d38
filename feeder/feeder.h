/*-------------------------------------------------------------------------
 *
 * feeder.h
 *	  Program-wide constants of received-orders-feeder: name, version and
 *	  exit codes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_H
#define FEEDER_H

#define FEEDER_NAME		"received-orders-feeder"
#define FEEDER_VERSION	"1.4.0"

/* Exit codes, documented in docs/feeder.md and --help. */
#define FEEDER_EXIT_OK			0	/* clean shutdown */
#define FEEDER_EXIT_RUNTIME		1	/* unexpected runtime failure, second signal */
#define FEEDER_EXIT_USAGE		2	/* bad command line, file or environment */
#define FEEDER_EXIT_DATABASE	3	/* refused: database, registry, Kafka ACL */
#define FEEDER_EXIT_KAFKA		4	/* Kafka client configuration or fatal error */
#define FEEDER_EXIT_POSITIONS	5	/* a database position outside its partition */

#endif							/* FEEDER_H */
