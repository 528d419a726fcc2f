-- V6 (teams, docs/teams.md): how far this machine's `calls` have been shipped to a team's
-- PostgreSQL database. The rows not shipped yet are the spool: they stay in `calls` (they are this
-- machine's history anyway) and are sent in `calls.id` order when the database answers. A row the
-- database already has is skipped there by its source key, so a batch sent twice counts once.
-- Migrations are append-only: this file never changes once shipped.

CREATE TABLE team_shipping (
    database         TEXT PRIMARY KEY,           -- host:port/dbname, never a password
    shipped_through  INTEGER NOT NULL DEFAULT 0, -- the last calls.id the database has
    given_up         INTEGER NOT NULL DEFAULT 0, -- rows never sent: the spool was full (oldest first)
    last_shipped     TEXT,                       -- when a batch last arrived
    last_error       TEXT,                       -- why the last attempt failed, NULL once one succeeds
    last_error_at    TEXT
);
