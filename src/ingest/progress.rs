//! The ingest progress bar: on stderr, only on a terminal, and only once a run has lasted
//! `PROGRESS_AFTER`, so that quick runs print nothing but their summary.

use std::cell::Cell;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A run shorter than this shows no progress bar. Raising it hides the bar for longer runs.
pub const PROGRESS_AFTER: Duration = Duration::from_secs(1);

/// A progress bar on stderr that appears only on a terminal and once the run has taken
/// `PROGRESS_AFTER`.
pub struct Bar {
    bar: Option<ProgressBar>,
    started: Instant,
    shown: Cell<bool>,
}

impl Bar {
    pub fn new(enabled: bool, total: u64) -> Bar {
        use std::io::IsTerminal;
        let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
            if let Ok(style) = ProgressStyle::with_template(
                "ingest {bar:30} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
            ) {
                b.set_style(style);
            }
            b
        });
        Bar {
            bar,
            started: Instant::now(),
            shown: Cell::new(false),
        }
    }

    pub fn inc(&self, n: u64) {
        let Some(b) = &self.bar else { return };
        b.inc(n);
        if !self.shown.get() && self.started.elapsed() >= PROGRESS_AFTER {
            self.shown.set(true);
            b.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
