-- Corrections (docs/money.md, "Notes, days and other corrections"): an expense has a time of day
-- besides its day (the community's local time, optional), and a receipt that is an image
-- uploaded to the community's media (its id; receipt_url then holds the upload's address).
SET LOCAL lock_timeout = '5s';
SET LOCAL statement_timeout = '1min';
-- NULL columns change only the catalog.
ALTER TABLE transactions ADD COLUMN transaction_time TIME;
-- No foreign key: an upload is removed by a hard delete, and a key would need an index on
-- transactions to find what names it; as a photo post keeps its media's addresses, an expense
-- keeps the id (sql/150_expenses.sql checks, when it is set, that it is an image of the community).
ALTER TABLE transactions ADD COLUMN receipt_media_id UUID;
