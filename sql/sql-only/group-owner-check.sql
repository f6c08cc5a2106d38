		-- sql/sql-only/group-owner-check.sql: groups.c's GroupCheckOwner:
		-- the caller must have the privileges of the group's owner (role
		-- names in group_name, owner, caller)
		IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles r WHERE r.rolname = owner) THEN
			RAISE EXCEPTION 'permission denied for consumer group "%"', group_name
				USING ERRCODE = 'insufficient_privilege',
				      DETAIL = pg_catalog.format('The group''s positions belong to role "%s", which does not exist.', owner),
				      HINT = pg_catalog.format('A superuser can hand the group over: SELECT received_orders.set_consumer_group_owner(%s, %s);',
				                               pg_catalog.quote_literal(group_name), pg_catalog.quote_literal(caller));
		END IF;
		IF NOT pg_catalog.pg_has_role(caller, owner, 'USAGE') THEN
			RAISE EXCEPTION 'permission denied for consumer group "%"', group_name
				USING ERRCODE = 'insufficient_privilege',
				      DETAIL = pg_catalog.format('The group''s positions belong to role "%s"; role "%s" does not have its privileges.', owner, caller),
				      HINT = pg_catalog.format('Use another consumer group, or have a superuser grant the owner''s privileges (GRANT %s TO %s) or hand the group over (SELECT received_orders.set_consumer_group_owner(%s, %s)).',
				                               pg_catalog.quote_ident(owner), pg_catalog.quote_ident(caller),
				                               pg_catalog.quote_literal(group_name), pg_catalog.quote_literal(caller));
		END IF;
