-- V4 (proxy): how many bytes of a call's result the proxy cut to fit `results.maxTokens`.
-- Why: `mws report` shows how many results were shaped and the bytes saved. Only the count is
-- stored: tool results are never stored. NULL when the result passed whole (or the call was seen
-- only in a transcript).
-- Migrations are append-only: this file never changes once shipped.

ALTER TABLE calls ADD COLUMN bytes_saved INTEGER;
