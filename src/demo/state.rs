//! The demo upstream's whole world, in memory: one user's mailbox, calendars, drive, browser and a
//! code-search index, seeded at start relative to `now`. Ids come from one counter so they are
//! unique and stable for a given sequence of calls. Must not do I/O.

use time::{Duration, OffsetDateTime};

use super::tools::browser::Browser;
use super::tools::calendar::Calendars;
use super::tools::codesearch::CodeIndex;
use super::tools::drive::Drive;
use super::tools::mail::Mailbox;

/// The demo user.
pub const USER: &str = "alex@example.com";

pub struct State {
    /// When the server started; seeded data is placed around it.
    pub now: OffsetDateTime,
    seq: u64,
    pub mail: Mailbox,
    pub calendar: Calendars,
    pub drive: Drive,
    pub browser: Browser,
    pub code: CodeIndex,
}

impl State {
    pub fn seeded(now: OffsetDateTime) -> State {
        // Whole seconds keep every timestamp we print in one shape.
        let now = now.replace_nanosecond(0).unwrap_or(now);
        State {
            now,
            seq: 1000,
            mail: Mailbox::seeded(now),
            calendar: Calendars::seeded(now),
            drive: Drive::seeded(now),
            browser: Browser::new(),
            code: CodeIndex::seeded(),
        }
    }

    /// A fresh id with a prefix: `msg_1001`, `evt_1002`...
    pub fn id(&mut self, prefix: &str) -> String {
        self.seq += 1;
        format!("{prefix}_{}", self.seq)
    }

    /// The time of a change: one second after the previous one, so order is visible.
    pub fn tick(&mut self) -> String {
        self.seq += 1;
        crate::clock::fmt(self.now + Duration::seconds((self.seq - 1000) as i64))
    }
}

/// `now` shifted by `minutes`, formatted; for seeding.
pub fn at(now: OffsetDateTime, minutes: i64) -> String {
    crate::clock::fmt(now + Duration::minutes(minutes))
}
