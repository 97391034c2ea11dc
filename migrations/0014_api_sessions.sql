-- The HTTP API (issue 9): refresh-token rotation with reuse detection, and idempotent POSTs.
--
-- A refresh token is used once: using it stores used_at and issues its successor in the same
-- family (the tokens of one sign-in on one device). A token presented again after it was used
-- means it leaked, so the whole family is revoked. Only SHA-256 hashes of tokens are stored.
ALTER TABLE refresh_tokens ADD COLUMN family_id UUID NOT NULL DEFAULT gen_random_uuid();
ALTER TABLE refresh_tokens ADD COLUMN used_at TIMESTAMP WITH TIME ZONE;
CREATE INDEX idx_refresh_tokens_family ON refresh_tokens (family_id);

-- The first response to a POST carrying an Idempotency-Key, per user, replayed to retries
-- until it expires. A row without a status is a request still in progress.
CREATE TABLE idempotency_keys (
    user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    key VARCHAR(255) NOT NULL,
    request_hash VARCHAR(64) NOT NULL,
    status_code INTEGER CHECK (status_code BETWEEN 100 AND 599),
    response_body BYTEA,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    expires_at TIMESTAMP WITH TIME ZONE NOT NULL,
    PRIMARY KEY (user_id, key)
);
CREATE INDEX idx_idempotency_keys_expires ON idempotency_keys (expires_at);

ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
ALTER TABLE idempotency_keys FORCE ROW LEVEL SECURITY;
