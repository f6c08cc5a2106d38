		-- sql/sql-only/group-cluster-check.sql: groups.c's GroupCheckCluster:
		-- the group's positions were taken on the caller's Kafka cluster
		IF recorded <> kafka_cluster_id COLLATE "C" THEN
			RAISE EXCEPTION 'consumer group "%" has positions of another Kafka cluster', group_name
				USING ERRCODE = 'object_not_in_prerequisite_state',
				      DETAIL = pg_catalog.format('Its positions were taken on the Kafka cluster with id "%s"; the caller is connected to the cluster with id "%s".', recorded, kafka_cluster_id),
				      HINT = pg_catalog.format('If the group really moved to that cluster, its positions do not apply there: forget them with SELECT received_orders.forget_consumer_positions(%s); or use another consumer group. Otherwise, point the feeder at the group''s cluster.',
				                               pg_catalog.quote_literal(group_name));
		END IF;
