-- V1: the initial schema of state.db (SPEC §3).
-- Migrations are append-only: once a migration has shipped it is never edited; a change is a new
-- V<n>__<what>.sql file. The schema is a user interface (people query it with sqlite3), so column
-- names are plain words and every timestamp is UTC text 'YYYY-MM-DDTHH:MM:SS.sssZ' (fixed width:
-- text order is time order).

-- One row per client session, from the proxy or from a transcript.
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,   -- transcript session id, or the proxy's own session key
    source      TEXT NOT NULL,      -- 'proxy' | 'transcript:claude-code' | 'transcript:codex'
    client      TEXT,               -- client name: 'claude-code', 'codex-mcp-client', ...
    first_seen  TEXT NOT NULL,
    last_seen   TEXT NOT NULL
);

-- One row per tool call. Never arguments, results or query text.
CREATE TABLE calls (
    id              INTEGER PRIMARY KEY,
    ts              TEXT NOT NULL,
    session_id      TEXT NOT NULL,
    tool            TEXT NOT NULL,      -- the name as the upstream knows it
    via             TEXT NOT NULL,      -- 'direct' | 'call_tool' | 'transcript:claude-code' | 'transcript:codex'
    ok              INTEGER NOT NULL,   -- 1 success, 0 failure (error, isError, denial, rejection)
    error_kind      TEXT,               -- NULL on success; 'error' | 'denied' | 'timeout' | 'upstream'
    ms              INTEGER,            -- duration where known
    client          TEXT,
    client_call_id  TEXT,               -- Claude Code tool_use id / Codex call_id, from _meta or the transcript
    source_key      TEXT NOT NULL UNIQUE -- 'proxy:<id>' | 'claude-code:<tool_use_id>' | 'codex:<call_id>'
);
CREATE INDEX calls_tool_ts ON calls (tool, ts);
CREATE INDEX calls_ts ON calls (ts);
CREATE INDEX calls_client_call_id ON calls (client_call_id) WHERE client_call_id IS NOT NULL;

-- One row per search_tools. Never the query text.
CREATE TABLE searches (
    id            INTEGER PRIMARY KEY,
    ts            TEXT NOT NULL,
    session_id    TEXT,
    client        TEXT,
    mode          TEXT NOT NULL,        -- 'exact' | 'backend' | 'ranked' | 'catalog'
    result_count  INTEGER NOT NULL,
    reply_bytes   INTEGER NOT NULL
);
CREATE INDEX searches_ts ON searches (ts);

-- The last-good upstream catalog, one row per tool ever seen.
CREATE TABLE catalog (
    name         TEXT PRIMARY KEY,
    backend      TEXT,
    schema_hash  TEXT NOT NULL,
    first_seen   TEXT NOT NULL,
    last_seen    TEXT NOT NULL,
    present      INTEGER NOT NULL DEFAULT 1  -- 1 while the upstream's last good list has it
);

-- The current listed set, in listing order, with why each tool is there.
CREATE TABLE working_set (
    tool          TEXT PRIMARY KEY,
    position      INTEGER NOT NULL,
    reason        TEXT NOT NULL,        -- 'promoted' | 'pin' | 'pin-file'
    since         TEXT NOT NULL,        -- when it was (last) listed
    sessions      INTEGER,              -- figures behind the decision, at the last run
    calls         INTEGER,
    last_success  TEXT,
    run_id        INTEGER REFERENCES promotion_runs (id)
);

-- One row per real (not dry) `mws promote` run.
CREATE TABLE promotion_runs (
    id              INTEGER PRIMARY KEY,
    ts              TEXT NOT NULL,      -- the run's `now`
    catalog_source  TEXT NOT NULL,      -- 'live' | 'catalog.json' | 'skipped'
    listed          INTEGER NOT NULL,
    promoted        INTEGER NOT NULL,
    demoted         INTEGER NOT NULL,
    dropped         INTEGER NOT NULL
);

-- Each tool's fate in each run: the answer to "why did X fall out".
CREATE TABLE transitions (
    run_id        INTEGER NOT NULL REFERENCES promotion_runs (id),
    tool          TEXT NOT NULL,
    before        INTEGER NOT NULL,     -- 1 if listed before the run
    after         INTEGER NOT NULL,     -- 1 if listed after the run
    action        TEXT NOT NULL,        -- 'promoted' | 'kept' | 'demoted' | 'dropped' | 'pinned' | 'unchanged'
    reason        TEXT NOT NULL,
    sessions      INTEGER,
    calls         INTEGER,
    last_success  TEXT,
    PRIMARY KEY (run_id, tool)
);

-- Front-matter pins seen in pinFiles: when each was first declared (for pin decay).
CREATE TABLE pin_declarations (
    tool        TEXT NOT NULL,
    file        TEXT NOT NULL,
    first_seen  TEXT NOT NULL,
    last_seen   TEXT NOT NULL,
    PRIMARY KEY (tool, file)
);

-- Per transcript file: how far it was read, so that ingest is incremental and idempotent.
CREATE TABLE ingest_files (
    path        TEXT PRIMARY KEY,
    adapter     TEXT NOT NULL,          -- 'claude-code' | 'codex'
    offset      INTEGER NOT NULL,       -- bytes consumed (always at a line boundary)
    size        INTEGER NOT NULL,       -- file size when last read
    mtime_ns    INTEGER NOT NULL,
    head_hash   TEXT NOT NULL,          -- hash of the first bytes: a changed head means a new file
    calls       INTEGER NOT NULL DEFAULT 0,
    skipped     INTEGER NOT NULL DEFAULT 0,
    ingested_at TEXT NOT NULL
);

-- Tool calls seen in a transcript whose result has not been read yet (the file ended between the
-- call and its result); completed or dropped by a later ingest.
CREATE TABLE ingest_pending (
    source_key      TEXT PRIMARY KEY,
    path            TEXT NOT NULL,
    session_id      TEXT NOT NULL,
    tool            TEXT NOT NULL,
    ts              TEXT NOT NULL,
    client          TEXT,
    client_call_id  TEXT
);

-- Usage per tool: calls, successes, distinct successful sessions, last success.
CREATE VIEW tool_usage AS
SELECT tool,
       COUNT(*)                                              AS calls,
       SUM(ok)                                               AS ok_calls,
       COUNT(*) - SUM(ok)                                    AS error_calls,
       COUNT(DISTINCT CASE WHEN ok = 1 THEN session_id END)  AS ok_sessions,
       MAX(CASE WHEN ok = 1 THEN ts END)                     AS last_success,
       MAX(ts)                                               AS last_call
FROM calls GROUP BY tool;

-- Calls per day and tool.
CREATE VIEW daily_calls AS
SELECT substr(ts, 1, 10) AS day, tool, COUNT(*) AS calls, SUM(ok) AS ok_calls
FROM calls GROUP BY day, tool;

-- Searches per day.
CREATE VIEW daily_searches AS
SELECT substr(ts, 1, 10) AS day,
       COUNT(*) AS searches,
       SUM(result_count = 0) AS zero_results,
       CAST(AVG(reply_bytes) AS INTEGER) AS avg_reply_bytes,
       MAX(reply_bytes) AS max_reply_bytes
FROM searches GROUP BY day;

-- Tools the upstream lists that were never called.
CREATE VIEW never_called AS
SELECT c.name, c.backend, c.first_seen
FROM catalog c
WHERE c.present = 1 AND NOT EXISTS (SELECT 1 FROM calls WHERE calls.tool = c.name);
