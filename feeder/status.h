/*-------------------------------------------------------------------------
 *
 * status.h
 *	  The feeder reports itself to the database (received_orders.
 *	  report_feeder): its state, partitions and their high watermarks,
 *	  for the views feeders and consumer_lag.
 *
 * Threads: the main thread hands a snapshot (status_update) under the
 * module's mutex and never waits for the database; the reporter's own
 * thread and connection send it at start, on every change of state or
 * partitions, and every --status-interval seconds.  A failure to report is
 * logged and counted, nothing more.  The same thread moves the database's
 * positions past transaction markers (status_advance).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_STATUS_H
#define FEEDER_STATUS_H

#include <stdint.h>

#include "advances.h"
#include "config.h"
#include "kafka_status.h"

extern int	status_start(const feeder_config *cfg);
extern void status_update(int healthy, const char *reason,
						  const kafka_partition_lag *parts, int n);
extern void status_advance(advance_list *moved);
extern void status_stop(int clean);
extern uint64_t status_failures(void);
extern int	status_enabled(void);
extern const char *status_member_id(void);
extern const char *status_state_of(int healthy, const char *reason);

#endif							/* FEEDER_STATUS_H */
