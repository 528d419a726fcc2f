-- V7 (working sets per project, docs/working-set.md): which project each call was made in, and the
-- tools each project lists beside the user-wide working set.
-- Why: a developer's tools differ by repository; promotion per project lists a tool used in one
-- project only in that project's sessions. A project is a normalised folder path (the client's
-- working directory or first root, a transcript's `cwd`); NULL where it cannot be known. Only the
-- path is stored, never anything read from the folder.
-- Migrations are append-only: this file never changes once shipped.

ALTER TABLE calls ADD COLUMN project TEXT;
ALTER TABLE ingest_pending ADD COLUMN project TEXT;
CREATE INDEX calls_project_usage ON calls (project, tool, ts, ok, session_id) WHERE project IS NOT NULL;

-- The tools a project lists, as the last `mws promote` decided from that project's sessions
-- (the same rules as `working_set`, over calls with this `project`).
CREATE TABLE project_tools (
    project       TEXT NOT NULL,
    tool          TEXT NOT NULL,
    position      INTEGER NOT NULL,     -- listing order within the project (append-only)
    reason        TEXT NOT NULL,        -- 'promoted'
    since         TEXT NOT NULL,        -- when it was (last) listed for the project
    sessions      INTEGER,              -- figures behind the decision, at the last run
    calls         INTEGER,
    last_success  TEXT,
    run_id        INTEGER REFERENCES promotion_runs (id),
    PRIMARY KEY (project, tool)
);

-- One row per tool per project in each run's per-project decision table.
CREATE TABLE project_transitions (
    run_id        INTEGER NOT NULL REFERENCES promotion_runs (id),
    project       TEXT NOT NULL,
    tool          TEXT NOT NULL,
    before        INTEGER NOT NULL,
    after         INTEGER NOT NULL,
    action        TEXT NOT NULL,
    reason        TEXT NOT NULL,
    sessions      INTEGER,
    calls         INTEGER,
    last_success  TEXT,
    PRIMARY KEY (run_id, project, tool)
);

-- How many projects used each listed tool (a successful call within windowDays, or listing it): a tool used in
-- `promote.everywhereProjects` projects or more, or in none known, is listed in every session.
ALTER TABLE working_set ADD COLUMN projects INTEGER;
