/*-------------------------------------------------------------------------
 *
 * adopt.c
 *	  received-orders-feeder --adopt-kafka-offsets: the consumer group's
 *	  committed offsets in Kafka become the database's positions, once.
 *
 * The feeder starts a partition the database has no position of at its
 * earliest offset (positions.c): Kafka's committed offset never starts a
 * partition.  After an upgrade from a feeder that kept its progress in
 * Kafka only, that would read every topic again from the start (safe, the
 * batch function absorbs the duplicates, but slow).  This one-shot command
 * is the explicit way to avoid it: for every partition of every --topic, the
 * group's committed offset is written as the database's position where the
 * database has none (received_orders.adopt_consumer_position, which never
 * overwrites one).  A command rather than an option, so that it cannot be
 * left on: it runs, logs what it did, and exits.
 *
 * It joins no group (kafka_committed.c), but a member of the group running
 * meanwhile would move the positions and the committed offsets under it:
 * the group's feeders must be stopped.  Everything is read from Kafka
 * before anything is written, so a Kafka failure writes nothing; the
 * database's positions are read with the cluster's id, as the feeder reads
 * them (consumer_positions: the group must be this role's, and of this
 * cluster).
 *
 * One line per partition: event=position_adopted (the database had none,
 * now has Kafka's committed offset), event=position_kept (the database has
 * a position: it stays, both values are logged) or event=position_none
 * (neither has one: the partition will start at its earliest offset); then
 * event=adoption_done with the counts.  Exit 0; 3 for a database
 * configuration or permission error (the grant it needs in the hint), 1
 * when the database could not be reached or a write failed otherwise, 4
 * when Kafka could not be read.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "db_positions.h"
#include "feeder.h"
#include "kafka_committed.h"
#include "log.h"

/*
 * adopt_log_db_failure
 *		The line for a database failure; returns the exit code it means.
 */
static int
adopt_log_db_failure(const db_error *err)
{
	log_line	line;

	if (err->cls == DB_ERR_FATAL)
	{
		db_log_fatal(err);
		return FEEDER_EXIT_DATABASE;
	}
	log_begin(&line, LOG_FATAL, "adoption_failed");
	log_kv_str(&line, "step", err->step ? err->step : "");
	if (err->sqlstate[0])
		log_kv_str(&line, "sqlstate", err->sqlstate);
	log_kv_str(&line, "error", err->message);
	log_kv_str(&line, "action", "positions adopted so far stay; run the command again once the database answers");
	log_end(&line);
	return FEEDER_EXIT_RUNTIME;
}

/*
 * adopt_log_partition
 *		One line for one partition: what the database has, what Kafka has,
 *		and what was done.
 */
static void
adopt_log_partition(const char *event, const char *group,
					const kafka_committed_offset *k, int64_t db_next)
{
	log_line	line;

	int64_t		at = db_next >= 0 ? db_next : k->committed;

	/* at: where the feeder will start the partition */
	log_begin(&line, LOG_INFO, event);
	if (at >= 0)
		log_kv_fmt(&line, "at", "%s [%d] @%lld", k->topic, (int) k->partition,
				   (long long) at);
	else
		log_kv_fmt(&line, "at", "%s [%d]", k->topic, (int) k->partition);
	log_kv_str(&line, "group", group);
	log_kv_str(&line, "topic", k->topic);
	log_kv_int(&line, "partition", k->partition);
	if (strcmp(event, "position_adopted") == 0)
		log_kv_int(&line, "offset", k->committed);
	else
	{
		if (db_next >= 0)
			log_kv_int(&line, "db_position", db_next);
		else
			log_kv_str(&line, "db_position", "none");
		if (k->committed >= 0)
			log_kv_int(&line, "committed", k->committed);
		else
			log_kv_str(&line, "committed", "none");
	}
	if (strcmp(event, "position_kept") == 0)
		log_kv_str(&line, "action", "the database's position stays");
	else if (strcmp(event, "position_none") == 0)
		log_kv_str(&line, "action", "the feeder will start it at its earliest offset");
	log_end(&line);
}

/*
 * adopt_partition
 *		Adopt Kafka's committed offset of one partition unless the database
 *		has a position (positions: read before) or Kafka none.  *event says
 *		what happened.  DB_ERR_NONE, or the class of the failure in err.
 */
static db_error_class
adopt_partition(db_conn *db, const char *group, const char *cluster_id,
				const kafka_committed_offset *k,
				const db_position *positions, int n, const char **event,
				db_error *err)
{
	int64_t		db_next = db_position_find(positions, n, k->topic, k->partition);
	int			adopted;
	db_error_class cls;

	memset(err, 0, sizeof(*err));
	if (db_next >= 0 || k->committed < 0)
	{
		*event = db_next >= 0 ? "position_kept" : "position_none";
		adopt_log_partition(*event, group, k, db_next);
		return DB_ERR_NONE;
	}
	cls = db_adopt_position(db, k->topic, k->partition, k->committed, &adopted, err);
	if (cls != DB_ERR_NONE)
		return cls;
	if (!adopted)
	{
		/* written since positions were read: someone runs the group */
		db_position *now;
		int			nnow;

		cls = db_read_positions(db, cluster_id, &now, &nnow, err);
		if (cls != DB_ERR_NONE)
			return cls;
		db_next = db_position_find(now, nnow, k->topic, k->partition);
		db_free_positions(now, nnow);
	}
	*event = adopted ? "position_adopted" : "position_kept";
	adopt_log_partition(*event, group, k, db_next);
	return DB_ERR_NONE;
}

/*
 * adopt_kafka_offsets
 *		Run the command (see the file header) with cfg's brokers, topics,
 *		group and DSN; conf is consumed.  Returns the exit code.
 */
int
adopt_kafka_offsets(const feeder_config *cfg, rd_kafka_conf_t *conf)
{
	feeder_stats stats;
	db_conn    *db;
	db_error	err;
	db_position *positions = NULL;
	kafka_committed_offset *offsets = NULL;
	int			npositions = 0,
				noffsets = 0,
				adopted = 0,
				kept = 0,
				none = 0,
				rc = FEEDER_EXIT_OK,
				i;
	char		kerr[512];
	char		cluster_id[256];
	log_line	line;

	memset(&stats, 0, sizeof(stats));
	db = db_new(cfg->dsn, cfg->group, &stats);
	if (db == NULL)
	{
		rd_kafka_conf_destroy(conf);
		log_simple(LOG_FATAL, "out_of_memory", "could not allocate the database session");
		return FEEDER_EXIT_RUNTIME;
	}
	db_set_adopt(db);
	if (db_connect(db, &err) != DB_ERR_NONE)
	{
		rd_kafka_conf_destroy(conf);
		rc = adopt_log_db_failure(&err);
		db_free(db);
		return rc;
	}
	if (kafka_read_committed(conf, cfg->topics, cfg->ntopics, &offsets, &noffsets,
							 cluster_id, sizeof(cluster_id), kerr, sizeof(kerr)) != 0)
	{
		log_begin(&line, LOG_FATAL, "adoption_failed");
		log_kv_str(&line, "step", "kafka");
		log_kv_str(&line, "error", kerr);
		log_kv_str(&line, "action", "nothing adopted");
		log_end(&line);
		db_free(db);
		return FEEDER_EXIT_KAFKA;
	}
	if (db_read_positions(db, cluster_id, &positions, &npositions, &err) != DB_ERR_NONE)
	{
		rc = adopt_log_db_failure(&err);
		free(offsets);
		db_free(db);
		return rc;
	}
	for (i = 0; i < noffsets; i++)
	{
		const char *event = NULL;

		if (adopt_partition(db, cfg->group, cluster_id, &offsets[i], positions, npositions,
							&event, &err) != DB_ERR_NONE)
		{
			rc = adopt_log_db_failure(&err);
			break;
		}
		if (strcmp(event, "position_adopted") == 0)
			adopted++;
		else if (strcmp(event, "position_kept") == 0)
			kept++;
		else
			none++;
	}
	if (rc == FEEDER_EXIT_OK)
	{
		log_begin(&line, LOG_INFO, "adoption_done");
		log_kv_str(&line, "group", cfg->group);
		log_kv_int(&line, "partitions", noffsets);
		log_kv_int(&line, "adopted", adopted);
		log_kv_int(&line, "kept", kept);
		log_kv_int(&line, "none", none);
		log_end(&line);
	}
	free(offsets);
	db_free_positions(positions, npositions);
	db_free(db);
	return rc;
}
