-- The split of an expense as it was entered (issue 24, item 3; docs/money.md): the method and
-- its inputs (SplitMethod's stored form, as recurring_charges.split), so an edit starts from what
-- was entered — a new total alone is divided again by the same method and inputs. NULL for
-- settlements and for expenses written before it was kept.
ALTER TABLE transactions ADD COLUMN split_input JSONB;
