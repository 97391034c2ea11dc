-- Posts, reactions, comments and poll votes (spec: "Posts (Feed)" and what hangs off it).
--
-- Differences from the draft DDL:
-- * reactions, comments and poll_votes carry community_id, filled from the post by trigger
--   (row-level security and its indexes) and tied to it by a (post_id, community_id) foreign
--   key, so no child points at a post of another community.
-- * a reply's parent comment must be on the same post: (parent_id, post_id) references
--   comments(id, post_id). The draft lets a reply hang under a comment of another post, even
--   of another community.
-- * poll_votes: the draft has no unique constraint at all. Never the same option twice
--   (UNIQUE(post_id, user_id, option_index)); one vote per user on single-choice polls via a
--   partial unique index on single_choice, a flag the vote copies from the poll (trigger).
-- * a poll post has poll data with 2 to 20 options; other posts have none.
-- * editable_until is set from created_at by trigger and never changes (sql/020).
-- * reaction_counts and comment_count are maintained by triggers (sql/040); orbit_app cannot
--   write them.

CREATE TABLE posts (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    community_id UUID NOT NULL REFERENCES communities(id) ON DELETE CASCADE,
    author_id UUID NOT NULL REFERENCES users(id),
    type post_type NOT NULL DEFAULT 'text',
    content TEXT,
    media_urls JSONB NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(media_urls) = 'array'),
    is_pinned BOOLEAN NOT NULL DEFAULT FALSE,
    is_announcement BOOLEAN NOT NULL DEFAULT FALSE,
    linked_event_id UUID,
    poll_data JSONB,
    editable_until TIMESTAMP WITH TIME ZONE NOT NULL,
    reaction_counts JSONB NOT NULL DEFAULT '{}',
    comment_count INTEGER NOT NULL DEFAULT 0 CHECK (comment_count >= 0),
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    deleted_at TIMESTAMP WITH TIME ZONE,

    CONSTRAINT posts_id_community_key UNIQUE (id, community_id),
    -- A shared event is an event of the post's own community; if it is removed, the link goes.
    CONSTRAINT posts_linked_event_fkey FOREIGN KEY (linked_event_id, community_id)
        REFERENCES events(id, community_id) ON DELETE SET NULL (linked_event_id),
    -- A poll has 2 to 20 options; other posts carry no poll data. (COALESCE: a CHECK that
    -- evaluates to NULL passes, so a poll without poll_data must come out FALSE, not NULL.)
    CONSTRAINT posts_poll_data_check CHECK (
        CASE WHEN type = 'poll' THEN coalesce(
            jsonb_typeof(poll_data -> 'options') = 'array'
            AND jsonb_array_length(CASE WHEN jsonb_typeof(poll_data -> 'options') = 'array'
                                        THEN poll_data -> 'options' ELSE '[]' END) BETWEEN 2 AND 20,
            FALSE)
        ELSE poll_data IS NULL
        END
    )
);

CREATE INDEX idx_posts_community ON posts(community_id, created_at DESC) WHERE deleted_at IS NULL;
CREATE INDEX idx_posts_pinned ON posts(community_id) WHERE is_pinned = TRUE AND deleted_at IS NULL;
CREATE INDEX idx_posts_author ON posts(author_id);
CREATE INDEX idx_posts_linked_event ON posts(linked_event_id) WHERE linked_event_id IS NOT NULL;
-- Row-level security filters every post by community, deleted or not.
CREATE INDEX idx_posts_community_all ON posts(community_id);

CREATE TABLE reactions (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    post_id UUID NOT NULL,
    user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    type reaction_type NOT NULL,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    community_id UUID NOT NULL,

    UNIQUE(post_id, user_id),
    CONSTRAINT reactions_post_fkey FOREIGN KEY (post_id, community_id)
        REFERENCES posts(id, community_id) ON DELETE CASCADE
);

CREATE INDEX idx_reactions_post ON reactions(post_id);
CREATE INDEX idx_reactions_community ON reactions(community_id);
CREATE INDEX idx_reactions_user ON reactions(user_id);

CREATE TABLE comments (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    post_id UUID NOT NULL,
    author_id UUID NOT NULL REFERENCES users(id),
    parent_id UUID,
    content TEXT NOT NULL,
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    updated_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    deleted_at TIMESTAMP WITH TIME ZONE,
    community_id UUID NOT NULL,

    CONSTRAINT comments_id_post_key UNIQUE (id, post_id),
    CONSTRAINT comments_post_fkey FOREIGN KEY (post_id, community_id)
        REFERENCES posts(id, community_id) ON DELETE CASCADE,
    -- Hard-deleting a comment (retention) takes its replies with it.
    CONSTRAINT comments_parent_fkey FOREIGN KEY (parent_id, post_id)
        REFERENCES comments(id, post_id) ON DELETE CASCADE
);

CREATE INDEX idx_comments_post ON comments(post_id, created_at) WHERE deleted_at IS NULL;
CREATE INDEX idx_comments_community ON comments(community_id);
CREATE INDEX idx_comments_parent ON comments(parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX idx_comments_author ON comments(author_id);

CREATE TABLE poll_votes (
    id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
    post_id UUID NOT NULL,
    user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    option_index INTEGER NOT NULL CHECK (option_index >= 0),
    created_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
    community_id UUID NOT NULL,
    -- Copied from the poll's allowMultiple by trigger; drives the one-vote index below.
    single_choice BOOLEAN NOT NULL DEFAULT TRUE,

    CONSTRAINT poll_votes_post_id_user_id_option_index_key UNIQUE (post_id, user_id, option_index),
    CONSTRAINT poll_votes_post_fkey FOREIGN KEY (post_id, community_id)
        REFERENCES posts(id, community_id) ON DELETE CASCADE
);

CREATE INDEX idx_poll_votes_post ON poll_votes(post_id);
CREATE INDEX idx_poll_votes_community ON poll_votes(community_id);
CREATE INDEX idx_poll_votes_user ON poll_votes(user_id);
CREATE UNIQUE INDEX poll_votes_single_choice_key ON poll_votes(post_id, user_id) WHERE single_choice;
