//! `historyDays` (docs/configuration.md#history): how long the usage history is kept, checked
//! against every window it feeds, and the cutoff it gives at a given `now`. Only the value and
//! its rules; removing rows is `store::retention`. Must not do I/O or read the clock.

use time::OffsetDateTime;

use super::Config;

/// Default `historyDays`: twice the longest default promotion period (`pinDecayDays`, 90), so
/// that promotion always reads a full window and `mws what-if` can replay a 90-day window under
/// 90-day settings. About half a year of heavy use stays on disk. Raising it keeps more
/// history to report on and makes every promotion, report and what-if read more.
pub const DEFAULT_HISTORY_DAYS: u32 = 180;

/// The promotion windows the history feeds, by field: `promote.windowDays` (team priors and
/// per-project promotion read it too), `keepDays` and `pinDecayDays`.
fn windows(config: &Config) -> [(&'static str, u32); 3] {
    let p = &config.promote;
    [
        ("promote.windowDays", p.window_days),
        ("promote.keepDays", p.keep_days),
        ("promote.pinDecayDays", p.pin_decay_days),
    ]
}

impl Config {
    /// The days of history kept: `historyDays` when set (0 keeps everything), else
    /// `DEFAULT_HISTORY_DAYS` or the longest promotion window, whichever is longer, so that a
    /// config with long windows keeps what they read without saying so twice.
    pub fn history_days(&self) -> u32 {
        self.history_days_set.unwrap_or_else(|| {
            windows(self)
                .iter()
                .map(|w| w.1)
                .fold(DEFAULT_HISTORY_DAYS, u32::max)
        })
    }
}

/// Checks that a `historyDays` the config sets covers every window it feeds (0 keeps
/// everything). The message names both fields.
pub fn check(config: &Config) -> Result<(), String> {
    let Some(days) = config.history_days_set.filter(|&d| d > 0) else {
        return Ok(());
    };
    for (field, window) in windows(config) {
        if days < window {
            return Err(format!(
                "`historyDays`: {days} is shorter than `{field}` ({window}); the history must \
                 cover every window promotion reads: set historyDays to at least {window} \
                 (0 keeps everything)"
            ));
        }
    }
    Ok(())
}

/// The first moment the history keeps at `now` (stored form), or `None` when it keeps
/// everything (`historyDays` 0).
pub fn cutoff(days: u32, now: OffsetDateTime) -> Option<String> {
    (days > 0).then(|| crate::clock::fmt(now - time::Duration::days(i64::from(days))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_json(text: &str) -> Result<(), String> {
        check(&crate::config::parse(text).map_err(|p| p.message)?)
    }

    #[test]
    fn a_history_shorter_than_a_window_is_refused_naming_both_fields() {
        let cases: &[(&str, Result<(), &str>)] = &[
            ("{}", Ok(())),
            (r#"{"historyDays": 0}"#, Ok(())),
            (r#"{"historyDays": 90}"#, Ok(())),
            (r#"{"promote": {"keepDays": 400}}"#, Ok(())),
            (
                r#"{"historyDays": 60}"#,
                Err(
                    "`historyDays`: 60 is shorter than `promote.pinDecayDays` (90); the history \
                     must cover every window promotion reads: set historyDays to at least 90 (0 \
                     keeps everything)",
                ),
            ),
            (
                r#"{"historyDays": 20, "promote": {"pinDecayDays": 10, "keepDays": 14}}"#,
                Err(
                    "`historyDays`: 20 is shorter than `promote.windowDays` (30); the history \
                     must cover every window promotion reads: set historyDays to at least 30 (0 \
                     keeps everything)",
                ),
            ),
            (
                r#"{"historyDays": 365, "promote": {"keepDays": 400}}"#,
                Err(
                    "`historyDays`: 365 is shorter than `promote.keepDays` (400); the history \
                     must cover every window promotion reads: set historyDays to at least 400 \
                     (0 keeps everything)",
                ),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(check_json(text), want.map_err(String::from), "{text}");
        }
    }

    #[test]
    fn unset_the_history_covers_the_longest_window() {
        let days = |text: &str| crate::config::parse(text).unwrap().history_days();
        assert_eq!(days("{}"), DEFAULT_HISTORY_DAYS);
        assert_eq!(days(r#"{"promote": {"windowDays": 36500}}"#), 36500);
        assert_eq!(days(r#"{"promote": {"pinDecayDays": 400}}"#), 400);
        assert_eq!(days(r#"{"historyDays": 0}"#), 0);
        assert_eq!(days(r#"{"historyDays": 365}"#), 365);
    }

    #[test]
    fn the_cutoff_is_history_days_before_now() {
        let now = crate::clock::parse("2026-07-01T12:00:00.000Z").unwrap();
        assert_eq!(
            cutoff(180, now).as_deref(),
            Some("2026-01-02T12:00:00.000Z")
        );
        assert_eq!(cutoff(0, now), None);
    }
}
