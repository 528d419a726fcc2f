-- V1 of a team's PostgreSQL database (docs/teams.md): every member's usage history, one row per
-- tool call, with the user it belongs to. The same columns as state.db's `calls` and `sessions`
-- (timestamps are the same fixed-width UTC text, so text order is time order and the promotion
-- SQL reads the same on both engines). Never arguments, results or query text.
-- Migrations are append-only: once shipped, a file never changes; a change is a new V<n> file.

-- One row per member whose mws has written here.
CREATE TABLE members (
    user_name        TEXT PRIMARY KEY,
    in_team_figures  BOOLEAN NOT NULL DEFAULT TRUE,  -- false: counted in no team prior or report
    first_seen       TEXT NOT NULL,
    last_seen        TEXT NOT NULL
);

CREATE TABLE sessions (
    user_name   TEXT NOT NULL,
    id          TEXT NOT NULL,
    source      TEXT NOT NULL,
    client      TEXT,
    first_seen  TEXT NOT NULL,
    last_seen   TEXT NOT NULL,
    PRIMARY KEY (user_name, id)
);

CREATE TABLE calls (
    id              BIGSERIAL PRIMARY KEY,
    user_name       TEXT NOT NULL,
    ts              TEXT NOT NULL,
    session_id      TEXT NOT NULL,
    tool            TEXT NOT NULL,
    via             TEXT NOT NULL,
    ok              INTEGER NOT NULL,   -- 1 success, 0 failure
    error_kind      TEXT,
    ms              BIGINT,
    client          TEXT,
    client_call_id  TEXT,
    source_key      TEXT NOT NULL,      -- the row's key on the member's machine
    UNIQUE (user_name, source_key)
);
-- Promotion per member reads (user_name, tool, ts, ok, session_id) from the index alone.
CREATE INDEX calls_usage ON calls (user_name, tool, ts, ok, session_id);
-- Team priors and the team report read a window of every member's calls.
CREATE INDEX calls_ts ON calls (ts, ok, tool, user_name);
