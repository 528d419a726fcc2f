-- V2: a covering index for promotion's usage query (SPEC §8: promotion over 1M calls under 1 s).
-- `mws promote` sums successful calls and distinct sessions per tool within a time window; with
-- every column it reads in the index, SQLite scans the index alone instead of looking up each
-- table row (about 3x faster on 1M rows). It starts with (tool, ts), so it serves every query the
-- V1 index calls_tool_ts served, and that index is dropped to keep inserts cheap.
CREATE INDEX calls_usage ON calls (tool, ts, ok, session_id);
DROP INDEX calls_tool_ts;
