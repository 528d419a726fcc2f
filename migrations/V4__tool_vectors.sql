-- V4 (search): sentence vectors of tool definitions, so that a restart embeds nothing.
-- Why: embedding a catalog takes seconds to minutes; `mws serve` computes the vectors it lacks in
-- the background and ranks by keywords until they exist. A row is keyed by the model that made it
-- and the hash of the text embedded (a tool's name and the start of its description), so a changed
-- tool gets a new row and another model never reads this one's vectors. Tool definitions are the
-- upstream's, not the user's: no query, argument or result is ever stored here.
-- Migrations are append-only: this file never changes once shipped.

CREATE TABLE tool_vectors (
    model     TEXT    NOT NULL,  -- embedder id (`embed::Embedder::id`)
    tool_hash TEXT    NOT NULL,  -- hash of the embedded text (`search::semantic::text_hash`)
    dim       INTEGER NOT NULL,  -- vector length
    vector    BLOB    NOT NULL,  -- dim little-endian f32, unit length
    PRIMARY KEY (model, tool_hash)
) WITHOUT ROWID;
