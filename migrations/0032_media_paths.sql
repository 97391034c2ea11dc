-- Where an upload's files are is the server's to say, not a client's (issue 37, item 3;
-- docs/security.md). The service names them `<community>/<media id>/<safe name>` and
-- `<community>/<media id>/thumbnail.jpg`; these checks keep every row to that shape, so no row
-- can point the file layer at another community's upload or outside the media folder (which
-- LocalDirectoryStorage refuses as well). orbit_app may no longer UPDATE media at all
-- (sql/090_grants.sql): an upload never changes after it is recorded with its thumbnail.
ALTER TABLE media ADD CONSTRAINT media_storage_path_in_its_folder CHECK (
    storage_path ~ '^[0-9a-f-]{36}/[0-9a-f-]{36}/[A-Za-z0-9._-]{1,255}$'
    AND split_part(storage_path, '/', 1) = community_id::text
    AND split_part(storage_path, '/', 2) = id::text
    AND split_part(storage_path, '/', 3) NOT IN ('.', '..', 'thumbnail.jpg')
);
ALTER TABLE media ADD CONSTRAINT media_thumbnail_path_in_its_folder CHECK (
    thumbnail_path IS NULL OR thumbnail_path = community_id::text || '/' || id::text || '/thumbnail.jpg'
);
