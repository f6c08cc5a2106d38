/*-------------------------------------------------------------------------
 *
 * received_orders.c
 *	  Module entry point: the GUC, error classes and the check that this
 *	  session's library is not older than the installed extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "received_orders.h"

PG_MODULE_MAGIC;

/* received_orders.max_event_bytes: the largest event accepted, in bytes. */
int			RoMaxEventBytes = 1024 * 1024;

/*
 * Whether this transaction has checked the installed extension's version
 * (RoCheckVersion); cleared at the end of every transaction.
 */
static bool ro_version_checked = false;

void		_PG_init(void);
static void RoVersionXactCallback(XactEvent event, void *arg);
static char *RoInstalledVersion(void);
static bool RoVersionIsNewer(const char *installed, const char *library);

/*
 * _PG_init
 *		Define the extension's GUCs and reserve its prefix.
 *
 * The limit is superuser-settable only: it protects the server from the
 * feeder's input, so the feeder's role must not be able to raise it.
 */
void
_PG_init(void)
{
	DefineCustomIntVariable("received_orders.max_event_bytes",
							"Largest OrderReceived event accepted, in bytes.",
							"Larger events are rejected with SQLSTATE 54000 "
							"and, in a batch, quarantined.",
							&RoMaxEventBytes,
							1024 * 1024,
							1,
							MaxAllocSize / 4,
							PGC_SUSET,
							GUC_UNIT_BYTE,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("received_orders");
	RegisterXactCallback(RoVersionXactCallback, NULL);
}

/*
 * RoVersionXactCallback
 *		Forget, at the end of each transaction, that the version was
 *		checked: ALTER EXTENSION ... UPDATE commits in another session, and
 *		the next transaction of this one must see it.
 */
static void
RoVersionXactCallback(XactEvent event, void *arg)
{
	ro_version_checked = false;
}

/*
 * RoCheckVersion
 *		End the session when the installed extension is newer than this
 *		library (RO_EXTVERSION, the control file's default_version when it
 *		was built).
 *
 * A backend loads the library once and keeps it: after a package upgrade
 * and ALTER EXTENSION ... UPDATE, a session that had loaded the older
 * library would go on running the older code against the newer schema,
 * until it reconnects.  Every SQL-callable entry point calls this first; it
 * reads pg_extension once per transaction (one index lookup).  An older
 * installed version is served on purpose: the library of a release serves
 * the versions before it until the DBA runs the update.  FATAL, not ERROR:
 * the session cannot recover (a loaded library is never loaded again), and
 * a client that reconnects, as the feeder does when its connection breaks,
 * gets a session that loads the installed library.
 */
void
RoCheckVersion(void)
{
	char	   *installed;

	if (ro_version_checked)
		return;
	installed = RoInstalledVersion();
	if (installed != NULL && RoVersionIsNewer(installed, RO_EXTVERSION))
		ereport(FATAL,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("this session's received_orders library (version %s) is older than the installed extension (version %s)",
						RO_EXTVERSION, installed),
				 errdetail("The session loaded the library before the extension was updated; a session never loads a library again."),
				 errhint("Connect again: a new session loads the installed library. After ALTER EXTENSION received_orders UPDATE, restart the sessions that used the extension (pg_terminate_backend, or restart their clients).")));
	ro_version_checked = true;
}

/*
 * RoInstalledVersion
 *		The extversion of received_orders in pg_extension (palloc'd), NULL
 *		when it is not installed (a CREATE EXTENSION in progress).
 *
 * One scan of pg_extension's name index, reading the version from the row
 * it finds: the check runs at the start of every batch, and a lookup of the
 * extension's OID first would read the catalog twice.
 */
static char *
RoInstalledVersion(void)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	char	   *version = NULL;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("received_orders"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		bool		isnull;
		Datum		datum = heap_getattr(tuple, Anum_pg_extension_extversion,
										 RelationGetDescr(rel), &isnull);

		if (!isnull)
			version = text_to_cstring(DatumGetTextPP(datum));
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return version;
}

/*
 * RoVersionIsNewer
 *		Whether version installed ("MAJOR.MINOR") is newer than library's;
 *		a version that does not read as MAJOR.MINOR is one this library
 *		cannot know, so newer.
 */
static bool
RoVersionIsNewer(const char *installed, const char *library)
{
	int			imajor,
				iminor,
				lmajor,
				lminor;
	char		rest;

	if (sscanf(library, "%d.%d", &lmajor, &lminor) != 2)
		elog(ERROR, "invalid library version \"%s\"", library);
	if (sscanf(installed, "%d.%d%c", &imajor, &iminor, &rest) != 2)
		return true;
	return imajor > lmajor || (imajor == lmajor && iminor > lminor);
}

/*
 * RoErrorIsEventCaused
 *		Whether an error can be pinned on the one element that raised it:
 *		only what an event's own data can cause, data exceptions (class 22)
 *		and integrity constraint violations (23), and program limits (54:
 *		too deep, too large) where they can only be the event's: while
 *		parsing it, or at its INSERT when it is the call's only event (a
 *		DBA's index too small for one event's field raises 54000; within a
 *		larger call a limit may be the batch's size, which the caller
 *		answers by splitting the batch down to such a call).  Anything else (a dropped
 *		index, corruption, an internal error, a feature not supported, a
 *		trigger failing whatever the row) says nothing about the event:
 *		pinning it would quarantine every valid event while the table
 *		silently stops growing, so the whole call fails instead and the
 *		caller retries and alerts.
 */
bool
RoErrorIsEventCaused(int sqlerrcode, bool limit_is_event)
{
	int			category = ERRCODE_TO_CATEGORY(sqlerrcode);

	return category == ERRCODE_DATA_EXCEPTION ||
		category == ERRCODE_INTEGRITY_CONSTRAINT_VIOLATION ||
		(limit_is_event && category == ERRCODE_PROGRAM_LIMIT_EXCEEDED);
}
