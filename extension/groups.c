/*-------------------------------------------------------------------------
 *
 * groups.c
 *	  Who may use a consumer group's positions, and on which Kafka cluster.
 *
 * A consumer group's positions decide where its feeders start: whoever may
 * move them may make a group skip orders (forwards) or read them twice
 * (backwards).  So a group belongs to a role (received_orders_consumer_groups,
 * owner_role): the first role other than a superuser that uses it claims it;
 * afterwards only a role with the privileges of the owner (the owner, or a
 * member a DBA granted it to: GRANT owner TO other) may read or move its
 * positions.  Superusers may use every group and claim none.
 *
 * The calling role is the session's (SET ROLE included): every entry point
 * is SECURITY DEFINER, so the current user is the extension's owner, and
 * GetOuterUserId() is the role that called it.
 *
 * Positions are offsets of one Kafka cluster.  The feeder passes the id of
 * the cluster it is connected to when it reads the positions on a new
 * database session; the first id is recorded, and a different one is
 * refused (55000): another cluster with the same topic names must not
 * reuse them silently.
 *
 * A role claims a group by using it only while the group has no positions
 * and the role owns fewer than RO_MAX_GROUPS_PER_ROLE groups; a group's row
 * is entered on its first use, a superuser's too, so that a group with
 * positions always has one.
 *
 * The check runs once per call of the batch function: one kept SELECT,
 * plus one upsert only when something is to be recorded.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"

#include "received_orders.h"

PG_FUNCTION_INFO_V1(check_consumer_group);

static void GroupCheckName(text *consumer_group);
static void GroupCheckClaimable(const char *group, text *consumer_group,
								Oid caller);
static void GroupCheckOwner(const char *group, const char *owner, Oid caller);
static void GroupCheckCluster(const char *group, const char *recorded,
							  text *cluster_id);

/*
 * check_consumer_group(consumer_group text, kafka_cluster_id text DEFAULT NULL)
 *		RETURNS void
 *
 * RoGroupCheck for the extension's functions written in SQL.
 */
Datum
check_consumer_group(PG_FUNCTION_ARGS)
{
	RoCheckVersion();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("consumer_group must not be null")));
	SPI_connect();
	RoGroupCheck(PG_GETARG_TEXT_PP(0),
				 PG_ARGISNULL(1) ? NULL : PG_GETARG_TEXT_PP(1));
	SPI_finish();
	PG_RETURN_VOID();
}

/*
 * RoGroupCheck
 *		Raise unless the calling role may use the consumer group (claiming
 *		it when it has no owner) and, with a cluster id, unless the group's
 *		positions were taken on that Kafka cluster (recording it when none
 *		is recorded).  An installation not yet updated to consumer groups
 *		has none: nothing to check there.  The caller is connected to SPI.
 */
void
RoGroupCheck(text *consumer_group, text *cluster_id)
{
	Oid			caller = GetOuterUserId();
	bool		super = superuser_arg(caller);
	char	   *group;
	char	   *owner;
	char	   *recorded;
	bool		found;

	GroupCheckName(consumer_group);
	if (cluster_id != NULL && (VARSIZE_ANY_EXHDR(cluster_id) == 0 ||
							   VARSIZE_ANY_EXHDR(cluster_id) > RO_MAX_GROUP_BYTES))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a Kafka cluster id has 1 to %d bytes", RO_MAX_GROUP_BYTES)));
	/*
	 * An installation older than this library (ALTER EXTENSION ... UPDATE
	 * not run yet) has no groups: positions belong to no role until the
	 * update, which enters its groups unclaimed.
	 */
	if (!RoStoreHasGroups())
		return;
	group = text_to_cstring(consumer_group);
	found = RoStoreLookupGroup(consumer_group, &owner, &recorded);
	if (found && owner != NULL && !super)
		GroupCheckOwner(group, owner, caller);
	if (found && recorded != NULL && cluster_id != NULL)
		GroupCheckCluster(group, recorded, cluster_id);

	if (!found || (owner == NULL && !super) ||
		(recorded == NULL && cluster_id != NULL))
	{
		if (owner == NULL && !super)
			GroupCheckClaimable(group, consumer_group, caller);
		/* claim, record; then decide on what is there (another may have won) */
		RoStoreFillGroup(consumer_group,
						 super ? NULL : GetUserNameFromId(caller, false),
						 cluster_id);
		RoStoreLookupGroup(consumer_group, &owner, &recorded);
		if (owner != NULL && !super)
			GroupCheckOwner(group, owner, caller);
		if (recorded != NULL && cluster_id != NULL)
			GroupCheckCluster(group, recorded, cluster_id);
	}
}

/*
 * GroupCheckName
 *		A consumer group name as Kafka allows it: not empty, at most
 *		RO_MAX_GROUP_BYTES.
 */
static void
GroupCheckName(text *consumer_group)
{
	int			len = VARSIZE_ANY_EXHDR(consumer_group);

	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("consumer_group must not be empty")));
	if (len > RO_MAX_GROUP_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("consumer group is %d bytes long; at most %d are allowed",
						len, RO_MAX_GROUP_BYTES)));
}

/*
 * GroupCheckClaimable
 *		Raise unless the caller may claim the group by using it: the group
 *		must have no positions (42501: positions written while no role
 *		owned the group, by a superuser's feeder or before groups had
 *		owners, are handed over by a superuser, never taken by the first
 *		role that comes), and the caller must own fewer than
 *		RO_MAX_GROUPS_PER_ROLE groups (54000: a role creates groups by
 *		naming them, and each holds rows and a name another team may need).
 *		The table's trigger (received_orders_consumer_groups_claim_check)
 *		refuses the first case too, for a session running an older library.
 */
static void
GroupCheckClaimable(const char *group, text *consumer_group, Oid caller)
{
	const char *caller_name = GetUserNameFromId(caller, false);
	int64		owned;

	if (RoStoreGroupHasPositions(consumer_group))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for consumer group \"%s\"", group),
				 errdetail("The group has positions and no owner: role \"%s\" cannot claim it by using it.",
						   caller_name),
				 errhint("A superuser names the role of the group's feeders: SELECT received_orders.set_consumer_group_owner(%s, 'ROLE');",
						 quote_literal_cstr(group))));
	owned = RoStoreCountOwnedGroups(caller_name);
	if (owned < RO_MAX_GROUPS_PER_ROLE)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("role \"%s\" cannot claim consumer group \"%s\": it owns %lld groups already",
					caller_name, group, (long long) owned),
			 errdetail("A role claims at most %d consumer groups by using them.",
					   RO_MAX_GROUPS_PER_ROLE),
			 errhint("Use one of the role's groups, or have a superuser hand the group to the role: SELECT received_orders.set_consumer_group_owner(%s, %s);",
					 quote_literal_cstr(group), quote_literal_cstr(caller_name))));
}

/*
 * GroupCheckOwner
 *		Raise 42501 unless caller has the privileges of the group's owner (a
 *		role that no longer exists, after a restore elsewhere or a DROP ROLE,
 *		leaves the group to superusers until it is handed over).
 */
static void
GroupCheckOwner(const char *group, const char *owner, Oid caller)
{
	Oid			owner_oid = get_role_oid(owner, true);
	const char *caller_name;

	if (OidIsValid(owner_oid) && has_privs_of_role(caller, owner_oid))
		return;
	caller_name = GetUserNameFromId(caller, false);
	if (!OidIsValid(owner_oid))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for consumer group \"%s\"", group),
				 errdetail("The group's positions belong to role \"%s\", which does not exist.",
						   owner),
				 errhint("A superuser can hand the group over: SELECT received_orders.set_consumer_group_owner(%s, %s);",
						 quote_literal_cstr(group),
						 quote_literal_cstr(caller_name))));
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for consumer group \"%s\"", group),
			 errdetail("The group's positions belong to role \"%s\"; role \"%s\" does not have its privileges.",
					   owner, caller_name),
			 errhint("Use another consumer group, or have a superuser grant the owner's privileges (GRANT %s TO %s) or hand the group over (SELECT received_orders.set_consumer_group_owner(%s, %s)).",
					 quote_identifier(owner), quote_identifier(caller_name),
					 quote_literal_cstr(group), quote_literal_cstr(caller_name))));
}

/*
 * GroupCheckCluster
 *		Raise 55000 when the group's positions were taken on another Kafka
 *		cluster than the one of cluster_id.
 */
static void
GroupCheckCluster(const char *group, const char *recorded, text *cluster_id)
{
	char	   *given = text_to_cstring(cluster_id);

	if (strcmp(recorded, given) == 0)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("consumer group \"%s\" has positions of another Kafka cluster",
					group),
			 errdetail("Its positions were taken on the Kafka cluster with id \"%s\"; the caller is connected to the cluster with id \"%s\".",
					   recorded, given),
			 errhint("If the group really moved to that cluster, its positions do not apply there: forget them with SELECT received_orders.forget_consumer_positions(%s); or use another consumer group. Otherwise, point the feeder at the group's cluster.",
					 quote_literal_cstr(group))));
}
