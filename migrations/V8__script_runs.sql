-- V8 (proxy, code mode, docs/code-mode.md): one row per `run_script`, the script's own run. Its
-- tool calls are `calls` rows with via = 'script', like any other call. Why: `mws report` and
-- sqlite3 can show how scripts end (which limit stopped them) and what they cost. Never the
-- script's text, its arguments or what it returned: only sizes and counts.
-- Migrations are append-only: this file never changes once shipped.

CREATE TABLE script_runs (
    id            INTEGER PRIMARY KEY,
    ts            TEXT NOT NULL,
    session_id    TEXT,
    client        TEXT,
    outcome       TEXT NOT NULL,     -- 'ok' | 'syntax' | 'error' | 'never_settled' | a limit: 'time' | 'memory' | 'stack' | 'calls' | 'output'
    ms            INTEGER NOT NULL,  -- the whole run, its tool calls included
    calls         INTEGER NOT NULL,  -- tool calls the script made (each a `calls` row, via 'script')
    memory_bytes  INTEGER NOT NULL,  -- the engine's memory at the end of the run
    output_bytes  INTEGER NOT NULL   -- bytes of the returned value, before result shaping
);
CREATE INDEX script_runs_ts ON script_runs (ts);
