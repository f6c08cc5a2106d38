-- sql/sql-only/check_consumer_group.sql: the twin of groups.c's
-- check_consumer_group (RoGroupCheck): may the calling role use the group,
-- claiming it when unclaimed, and were its positions taken on the given
-- Kafka cluster (recorded when none is)?  The calling role is the
-- session's (SET ROLE included), never a SECURITY DEFINER function's owner:
-- C's GetOuterUserId, which is the role setting, else the session user.
DECLARE
	group_name CONSTANT text := consumer_group;
	caller CONSTANT name := CASE WHEN pg_catalog.current_setting('role') = 'none' THEN session_user
	                             ELSE pg_catalog.current_setting('role') END;
	super boolean;
	owner name;
	recorded text;
	found_group boolean;
	owned bigint;
BEGIN
	IF consumer_group IS NULL THEN
		RAISE EXCEPTION 'consumer_group must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF pg_catalog.octet_length(consumer_group) = 0 THEN
		RAISE EXCEPTION 'consumer_group must not be empty'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF pg_catalog.octet_length(consumer_group) > 255 THEN
		RAISE EXCEPTION 'consumer group is % bytes long; at most 255 are allowed', pg_catalog.octet_length(consumer_group)
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF kafka_cluster_id IS NOT NULL AND (pg_catalog.octet_length(kafka_cluster_id) = 0
	                                     OR pg_catalog.octet_length(kafka_cluster_id) > 255) THEN
		RAISE EXCEPTION 'a Kafka cluster id has 1 to 255 bytes'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;

	super := coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = caller), false);
	SELECT g.owner_role, g.kafka_cluster_id INTO owner, recorded
	  FROM received_orders.received_orders_consumer_groups g
	 WHERE g.consumer_group = group_name;
	found_group := FOUND;
	IF found_group AND owner IS NOT NULL AND NOT super THEN
--@include group-owner-check
	END IF;
	IF found_group AND recorded IS NOT NULL AND kafka_cluster_id IS NOT NULL THEN
--@include group-cluster-check
	END IF;
	IF NOT found_group OR (owner IS NULL AND NOT super) OR (recorded IS NULL AND kafka_cluster_id IS NOT NULL) THEN
		IF owner IS NULL AND NOT super THEN
			-- GroupCheckClaimable
			IF EXISTS (SELECT FROM received_orders.received_orders_positions p
			            WHERE p.consumer_group = group_name) THEN
				RAISE EXCEPTION 'permission denied for consumer group "%"', group_name
					USING ERRCODE = 'insufficient_privilege',
					      DETAIL = pg_catalog.format('The group has positions and no owner: role "%s" cannot claim it by using it.', caller),
					      HINT = pg_catalog.format('A superuser names the role of the group''s feeders: SELECT received_orders.set_consumer_group_owner(%s, ''ROLE'');',
					                               pg_catalog.quote_literal(group_name));
			END IF;
			SELECT pg_catalog.count(*) INTO owned
			  FROM received_orders.received_orders_consumer_groups g
			 WHERE g.owner_role = caller;
			IF owned >= 16 THEN
				RAISE EXCEPTION 'role "%" cannot claim consumer group "%": it owns % groups already', caller, group_name, owned
					USING ERRCODE = 'program_limit_exceeded',
					      DETAIL = 'A role claims at most 16 consumer groups by using them.',
					      HINT = pg_catalog.format('Use one of the role''s groups, or have a superuser hand the group to the role: SELECT received_orders.set_consumer_group_owner(%s, %s);',
					                               pg_catalog.quote_literal(group_name), pg_catalog.quote_literal(caller));
			END IF;
		END IF;
		-- claim, record; then decide on what is there (another may have won)
		INSERT INTO received_orders.received_orders_consumer_groups AS g (consumer_group, owner_role, kafka_cluster_id)
		VALUES (group_name, CASE WHEN super THEN NULL ELSE caller END, kafka_cluster_id)
		ON CONFLICT ON CONSTRAINT received_orders_consumer_groups_pkey
		DO UPDATE SET owner_role = coalesce(g.owner_role, EXCLUDED.owner_role),
		              kafka_cluster_id = coalesce(g.kafka_cluster_id, EXCLUDED.kafka_cluster_id),
		              updated_at = pg_catalog.now()
		 WHERE (g.owner_role IS NULL AND EXCLUDED.owner_role IS NOT NULL)
		    OR (g.kafka_cluster_id IS NULL AND EXCLUDED.kafka_cluster_id IS NOT NULL);
		SELECT g.owner_role, g.kafka_cluster_id INTO owner, recorded
		  FROM received_orders.received_orders_consumer_groups g
		 WHERE g.consumer_group = group_name;
		IF owner IS NOT NULL AND NOT super THEN
--@include group-owner-check
		END IF;
		IF recorded IS NOT NULL AND kafka_cluster_id IS NOT NULL THEN
--@include group-cluster-check
		END IF;
	END IF;
END
