-- The sum of a transaction's splits equals its total_amount (spec: Splits, "Sum of split
-- amounts should equal transaction total"), checked by PostgreSQL at commit.
--
-- A deferred constraint trigger checks each touched transaction when the database transaction
-- commits, so the service can insert a transaction and its splits, or replace splits, in any
-- order in between. It fires on every change that can break the rule: a new transaction, a
-- changed total, and any insert, update or delete of a split.
CREATE OR REPLACE FUNCTION orbit.check_split_sum() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    checked_id uuid;
    total bigint;
    split_sum bigint;
BEGIN
    IF TG_TABLE_NAME = 'transactions' THEN
        checked_id := NEW.id;
    ELSIF TG_OP = 'DELETE' THEN
        checked_id := OLD.transaction_id;
    ELSE
        checked_id := NEW.transaction_id;
    END IF;
    SELECT t.total_amount INTO total FROM public.transactions t WHERE t.id = checked_id;
    IF NOT FOUND THEN
        RETURN NULL; -- the transaction was deleted, and its splits with it
    END IF;
    SELECT coalesce(sum(s.amount), 0) INTO split_sum FROM public.splits s WHERE s.transaction_id = checked_id;
    IF split_sum <> total THEN
        RAISE EXCEPTION 'the splits of transaction % add up to %, not its total_amount %', checked_id, split_sum, total
            USING ERRCODE = 'check_violation', CONSTRAINT = 'splits_sum_total', TABLE = 'splits';
    END IF;
    RETURN NULL;
END
$$;

ALTER FUNCTION orbit.check_split_sum() OWNER TO orbit_admin;

DROP TRIGGER IF EXISTS trigger_transactions_split_sum ON transactions;
CREATE CONSTRAINT TRIGGER trigger_transactions_split_sum
    AFTER INSERT OR UPDATE OF total_amount ON transactions
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION orbit.check_split_sum();
DROP TRIGGER IF EXISTS trigger_splits_sum ON splits;
CREATE CONSTRAINT TRIGGER trigger_splits_sum
    AFTER INSERT OR UPDATE OF amount, transaction_id OR DELETE ON splits
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION orbit.check_split_sum();
