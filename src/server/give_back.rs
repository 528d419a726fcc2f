//! Heap memory `mws serve` has freed, given back to the system once the process goes quiet.
//! glibc's malloc keeps freed chunks in its arenas for reuse, so the garbage of a burst of work
//! (loading catalogs, the first listing of a new catalog, a big result) stays in RSS for the
//! life of the process: about 5 MB in front of ten servers, 0.4 MB in front of one. A second of
//! work followed by a quiet second (by the process's own CPU time) runs `malloc_trim` once. Under
//! steady load it never runs (the pages would come straight back), and idle it does nothing but
//! read a clock each tick. Must not touch anything but the allocator.

use std::time::Duration;

/// How often the process's CPU time is read.
pub const TICK: Duration = Duration::from_secs(1);

/// CPU time spent in one tick under which the process counts as quiet. An idle `mws serve`
/// spends well under a millisecond a second; one call costs about a tenth of one.
pub const QUIET_CPU: Duration = Duration::from_millis(5);

/// Whether the last tick ends a stretch of work: true once per quiet tick that follows work.
#[derive(Debug)]
pub struct Quiet {
    worked: bool,
}

impl Default for Quiet {
    /// Starting up is work: the first quiet tick gives its garbage back.
    fn default() -> Quiet {
        Quiet { worked: true }
    }
}

impl Quiet {
    /// The CPU time the process spent over the last tick; true when memory should be given back
    /// now.
    pub fn tick(&mut self, spent: Duration) -> bool {
        if spent >= QUIET_CPU {
            self.worked = true;
            return false;
        }
        std::mem::replace(&mut self.worked, false)
    }
}

/// Runs for the life of `mws serve`. Does nothing where the allocator is not glibc's.
pub async fn give_back_when_quiet() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut quiet = Quiet::default();
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        let mut last = cpu_time();
        loop {
            tick.tick().await;
            let now = cpu_time();
            if quiet.tick(now.saturating_sub(last)) {
                // Off the worker: a trim walks every arena, a request must not wait for it.
                let _ = tokio::task::spawn_blocking(|| {
                    // SAFETY: malloc_trim only returns free pages of glibc's own arenas.
                    unsafe { libc::malloc_trim(0) }
                })
                .await;
            }
            // The trim's own CPU time is not work.
            last = cpu_time();
        }
    }
}

/// The CPU time this process has used, all threads together.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } == 0;
    if !ok {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUSY: Duration = Duration::from_millis(80);
    const IDLE: Duration = Duration::from_micros(300);

    #[test]
    fn the_first_quiet_tick_after_start_gives_back_once() {
        let mut q = Quiet::default();
        assert!(q.tick(IDLE));
        assert!(!q.tick(IDLE));
        assert!(!q.tick(IDLE));
    }

    #[test]
    fn steady_load_never_gives_back_and_its_end_does_once() {
        let mut q = Quiet::default();
        for _ in 0..100 {
            assert!(!q.tick(BUSY));
        }
        assert!(q.tick(IDLE));
        assert!(!q.tick(IDLE));
    }

    #[test]
    fn each_burst_is_given_back_after_it() {
        let mut q = Quiet::default();
        assert!(!q.tick(BUSY));
        assert!(q.tick(IDLE));
        assert!(!q.tick(QUIET_CPU - Duration::from_micros(1)));
        assert!(!q.tick(QUIET_CPU));
        assert!(q.tick(Duration::ZERO));
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn the_process_cpu_clock_moves_with_work() {
        let before = cpu_time();
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(20) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        assert!(cpu_time() > before, "{x}");
    }
}
