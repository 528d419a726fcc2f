//! `promote.schedule` (docs/configuration.md): when `mws serve` runs ingest + promote by itself.
//! `"daily HH:MM"` (local time), `"every N{s,m,h}"`, or `"off"`. Pure: parsing and the next run
//! time from `now` and the local offset; the loop that waits and runs is in `cmd/serve.rs`.

use std::fmt;

use time::{Duration, OffsetDateTime, Time, UtcOffset};

/// The default: daily at 04:00 local time, when nobody is working.
pub const DEFAULT: Schedule = Schedule::Daily { hour: 4, minute: 0 };
/// The shortest `every` period. Lowering it lets promotion run back to back.
pub const MIN_EVERY_SECS: u64 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "String")]
pub enum Schedule {
    Off,
    Daily { hour: u8, minute: u8 },
    Every { secs: u64 },
}

impl Default for Schedule {
    fn default() -> Self {
        DEFAULT
    }
}

impl TryFrom<String> for Schedule {
    type Error = String;
    fn try_from(s: String) -> Result<Schedule, String> {
        s.parse()
    }
}

impl std::str::FromStr for Schedule {
    type Err = String;
    fn from_str(s: &str) -> Result<Schedule, String> {
        let bad = || {
            format!(
                "{s:?} is not a schedule: expected \"off\", \"daily HH:MM\" (local time) or \
                 \"every N\" with a unit s, m or h, like \"every 6h\""
            )
        };
        let s = s.trim();
        if s == "off" {
            return Ok(Schedule::Off);
        }
        if let Some(at) = s.strip_prefix("daily ") {
            let (h, m) = at.trim().split_once(':').ok_or_else(bad)?;
            let hour: u8 = h.parse().map_err(|_| bad())?;
            let minute: u8 = m.parse().map_err(|_| bad())?;
            if hour > 23 || minute > 59 || m.len() != 2 {
                return Err(bad());
            }
            return Ok(Schedule::Daily { hour, minute });
        }
        if let Some(p) = s.strip_prefix("every ") {
            let p = p.trim();
            let unit = p.chars().last().ok_or_else(bad)?;
            let n: u64 = p[..p.len() - unit.len_utf8()].parse().map_err(|_| bad())?;
            let secs = match unit {
                's' => n,
                'm' => n.saturating_mul(60),
                'h' => n.saturating_mul(3600),
                _ => return Err(bad()),
            };
            if secs < MIN_EVERY_SECS {
                return Err(bad());
            }
            return Ok(Schedule::Every { secs });
        }
        Err(bad())
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Schedule::Off => f.write_str("off"),
            Schedule::Daily { hour, minute } => write!(f, "daily {hour:02}:{minute:02}"),
            Schedule::Every { secs } => write!(f, "every {secs}s"),
        }
    }
}

impl Schedule {
    /// The next run strictly after `now` (`None`: off). `Daily` is in `local` time.
    pub fn next(self, now: OffsetDateTime, local: UtcOffset) -> Option<OffsetDateTime> {
        match self {
            Schedule::Off => None,
            Schedule::Every { secs } => {
                Some(now + Duration::seconds(i64::try_from(secs).unwrap_or(i64::MAX / 2)))
            }
            Schedule::Daily { hour, minute } => {
                let here = now.to_offset(local);
                let at = Time::from_hms(hour, minute, 0).ok()?;
                let today = here.replace_time(at);
                Some(if today > here {
                    today
                } else {
                    today + Duration::days(1)
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::{datetime, offset};

    #[test]
    fn parses_and_refuses() {
        for (input, want) in [
            ("off", Ok(Schedule::Off)),
            ("daily 04:00", Ok(Schedule::Daily { hour: 4, minute: 0 })),
            (
                "daily 23:59",
                Ok(Schedule::Daily {
                    hour: 23,
                    minute: 59,
                }),
            ),
            ("every 2s", Ok(Schedule::Every { secs: 2 })),
            ("every 6h", Ok(Schedule::Every { secs: 21600 })),
        ] {
            assert_eq!(input.parse::<Schedule>(), want, "{input}");
        }
        for bad in [
            "",
            "daily",
            "daily 24:00",
            "daily 4:5",
            "every 0s",
            "every 3d",
            "weekly",
        ] {
            assert_eq!(
                bad.parse::<Schedule>(),
                Err(format!(
                    "{bad:?} is not a schedule: expected \"off\", \"daily HH:MM\" (local time) or \
                     \"every N\" with a unit s, m or h, like \"every 6h\""
                ))
            );
        }
    }

    #[test]
    fn next_runs() {
        let now = datetime!(2026-12-01 10:30 UTC);
        let daily = Schedule::Daily { hour: 4, minute: 0 };
        // 10:30 UTC is 12:30 at +02:00: tomorrow 04:00 local, 02:00 UTC.
        assert_eq!(
            daily.next(now, offset!(+2)),
            Some(datetime!(2026-12-02 02:00 UTC))
        );
        // 10:30 UTC is 02:30 at -08:00: today 04:00 local, 12:00 UTC.
        assert_eq!(
            daily.next(now, offset!(-8)),
            Some(datetime!(2026-12-01 12:00 UTC))
        );
        let every = Schedule::Every { secs: 90 };
        assert_eq!(
            every.next(now, UtcOffset::UTC),
            Some(datetime!(2026-12-01 10:31:30 UTC))
        );
        assert_eq!(Schedule::Off.next(now, UtcOffset::UTC), None);
    }
}
