-- V3 (ingest): line numbers for incremental reads, and lookups of pending calls by file.
-- Why: a malformed line is reported as `path:line: reason`; when a run resumes at a byte offset it
-- needs the number of lines already consumed to name the right line. A Codex `turn_aborted` ends
-- every call of its file still waiting for a result, found by path.
-- Migrations are append-only: this file never changes once shipped.

ALTER TABLE ingest_files ADD COLUMN lines INTEGER NOT NULL DEFAULT 0;  -- complete lines consumed

CREATE INDEX ingest_pending_path ON ingest_pending (path);
