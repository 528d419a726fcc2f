-- V9 (retention, docs/database.md#what-is-kept-and-for-how-long): per-day sums of the calls
-- removed once they are older than `historyDays`, so that the day-by-day history and each tool's
-- last success outlive the rows themselves. Why: without a horizon `calls` grows without bound
-- (a heavy user adds millions of rows a year) and every promotion, report and what-if pays for
-- it. A row here is one tool's calls on one UTC day, summed; never arguments, results or
-- sessions. `daily_calls` and `never_called` read these sums beside `calls`.
-- Migrations are append-only: this file never changes once shipped.

CREATE TABLE call_days (
    day           TEXT    NOT NULL,   -- 'YYYY-MM-DD', UTC
    tool          TEXT    NOT NULL,
    calls         INTEGER NOT NULL,   -- calls removed that day
    ok_calls      INTEGER NOT NULL,   -- of which successes
    last_success  TEXT,               -- the day's last successful call, NULL if none
    PRIMARY KEY (tool, day)
) WITHOUT ROWID;

DROP VIEW daily_calls;
CREATE VIEW daily_calls AS
SELECT day, tool, SUM(calls) AS calls, SUM(ok_calls) AS ok_calls
FROM (SELECT substr(ts, 1, 10) AS day, tool, COUNT(*) AS calls, SUM(ok) AS ok_calls
      FROM calls GROUP BY day, tool
      UNION ALL
      SELECT day, tool, calls, ok_calls FROM call_days)
GROUP BY day, tool;

DROP VIEW never_called;
CREATE VIEW never_called AS
SELECT c.name, c.backend, c.first_seen
FROM catalog c
WHERE c.present = 1
  AND NOT EXISTS (SELECT 1 FROM calls WHERE calls.tool = c.name)
  AND NOT EXISTS (SELECT 1 FROM call_days WHERE call_days.tool = c.name);
