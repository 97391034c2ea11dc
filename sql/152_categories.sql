-- A community's own categories (sql/README.md; docs/money.md, "Categories"): this file owns the
-- policies of expense_categories and the rights on it, its updated_at trigger, and the rule that
-- a new or changed expense never takes an archived category.

-- An expense's category is one in use when it is set: an archived category stays on the
-- expenses that have it, and is offered for no other. Checked for every writer (the services,
-- the recurring-charges job, an operator), only when category_id is set or changed.
CREATE OR REPLACE FUNCTION orbit.check_category_in_use() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.category_id IS NOT DISTINCT FROM OLD.category_id THEN
        RETURN NEW;
    END IF;
    IF EXISTS (SELECT FROM public.expense_categories k WHERE k.id = NEW.category_id AND k.archived_at IS NOT NULL) THEN
        RAISE EXCEPTION 'category % is archived', NEW.category_id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'transactions_category_archived', TABLE = 'transactions';
    END IF;
    RETURN NEW;
END
$$;

ALTER FUNCTION orbit.check_category_in_use() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_transactions_category_in_use ON transactions;
CREATE TRIGGER trigger_transactions_category_in_use BEFORE INSERT OR UPDATE OF category_id ON transactions
    FOR EACH ROW WHEN (NEW.category_id IS NOT NULL) EXECUTE FUNCTION orbit.check_category_in_use();

DROP TRIGGER IF EXISTS trigger_expense_categories_updated_at ON expense_categories;
CREATE TRIGGER trigger_expense_categories_updated_at BEFORE UPDATE ON expense_categories
    FOR EACH ROW EXECUTE FUNCTION orbit.touch_updated_at();

-- Policies. This file owns every policy on expense_categories: it drops them all and recreates
-- the ones below, so a policy removed here is removed from the database too.
DO $$
DECLARE
    policy record;
BEGIN
    FOR policy IN
        SELECT policyname, tablename FROM pg_catalog.pg_policies
        WHERE schemaname = 'public' AND tablename IN ('expense_categories')
    LOOP
        EXECUTE format('DROP POLICY %I ON public.%I', policy.policyname, policy.tablename);
    END LOOP;
END
$$;

-- expense_categories: members read them and add them as themselves; their creator (while a
-- member) or an admin renames, archives and unarchives one. Never deleted: expenses name them.
CREATE POLICY expense_categories_select ON expense_categories FOR SELECT TO orbit_app
    USING (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));
CREATE POLICY expense_categories_insert ON expense_categories FOR INSERT TO orbit_app
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]) AND created_by = (SELECT orbit.app_user_id()));
CREATE POLICY expense_categories_update ON expense_categories FOR UPDATE TO orbit_app
    USING (community_id = ANY ((SELECT orbit.admin_community_ids())::uuid[])
           OR (created_by = (SELECT orbit.app_user_id()) AND community_id = ANY ((SELECT orbit.member_community_ids())::uuid[])))
    WITH CHECK (community_id = ANY ((SELECT orbit.member_community_ids())::uuid[]));

-- Rights (sql/README.md, "Rights"): this file revokes every right on its tables and functions and
-- grants exactly these; orbit_admin, the operators' role, gets everything on them. orbit_app
-- changes only what a category says and whether it is archived: never its community or creator.
REVOKE ALL ON expense_categories FROM orbit_app, orbit_admin;
GRANT SELECT, INSERT ON expense_categories TO orbit_app;
GRANT UPDATE (name, emoji, archived_at) ON expense_categories TO orbit_app;
GRANT ALL ON expense_categories TO orbit_admin;
REVOKE ALL ON FUNCTION orbit.check_category_in_use() FROM PUBLIC, orbit_app;
GRANT EXECUTE ON FUNCTION orbit.check_category_in_use() TO orbit_admin;
