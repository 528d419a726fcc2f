//! Memory `mws serve` no longer uses, given back to the system once the process goes quiet.
//!
//! - **Freed heap.** glibc's malloc keeps freed chunks in its arenas for reuse, so the garbage of
//!   a burst of work (loading catalogs, the first listing of a new catalog, a big result) stays
//!   in RSS for the life of the process: about 5 MB in front of ten servers, 0.4 MB in front of
//!   one. `malloc_trim` returns the free pages.
//! - **Code that ran once.** The kernel maps the binary's code in windows around each page run,
//!   and keeps them mapped: startup code (configuration, migrations, the first index) stays in
//!   RSS beside the serving path, about 4 MB of it. Unmapping the code mapping
//!   (`MADV_DONTNEED`) leaves the pages in the page cache, shared and clean; what runs next is
//!   mapped back by a minor fault. Only the executable's `r-xp` mapping, and only while none of
//!   its pages was ever written (`Anonymous: 0 kB` in smaps: a debugger's breakpoint or a text
//!   relocation would be lost).
//!
//! Both run once a second of work is followed by a quiet second (by the process's own CPU time).
//! Under steady load they never run (the pages would come straight back), and idle the task does
//! nothing but read a clock each tick. Must not touch anything but the allocator and the code
//! mapping.

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
                    unsafe { libc::malloc_trim(0) };
                    drop_code_pages();
                })
                .await;
            }
            // The trim's own CPU time is not work.
            last = cpu_time();
        }
    }
}

/// Unmaps this executable's code pages (see the module's doc); they come back as they run.
/// Does nothing when the mapping cannot be found or one of its pages was written.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn drop_code_pages() {
    let here = drop_code_pages as *const () as usize;
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return;
    };
    let Some((start, len)) = clean_code_mapping(&smaps, here) else {
        return;
    };
    // SAFETY: the range is exactly one private, read-only, executable file mapping of this
    // binary with no page ever written, so discarding its page tables loses nothing: every page
    // is read back from the file on its next use.
    unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
}

/// In `/proc/self/smaps` text, the `r-xp` file mapping holding address `here`, as (start,
/// length), when its `Anonymous` line says none of its pages was written.
#[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
fn clean_code_mapping(smaps: &str, here: usize) -> Option<(usize, usize)> {
    let mut found: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        let mut words = line.split_ascii_whitespace();
        let (Some(first), Some(second)) = (words.next(), words.next()) else {
            continue;
        };
        if let Some((a, b)) = first.split_once('-') {
            // A mapping's header: `start-end perms offset dev inode path`.
            if found.is_some() {
                return None; // its fields had no Anonymous line
            }
            let (Ok(start), Ok(end)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
            else {
                continue;
            };
            let file_backed = words.nth(2).is_some_and(|inode| inode != "0");
            if second == "r-xp" && file_backed && start <= here && here < end {
                found = Some((start, end - start));
            }
        } else if first == "Anonymous:" && found.is_some() {
            return (second == "0").then_some(found?);
        }
    }
    None
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

    const SMAPS: &str = "\
5600a000-5600b000 r--p 00000000 fe:00 326279                     /usr/local/bin/mws
Rss:                   4 kB
Anonymous:             0 kB
5600b000-5610b000 r-xp 00001000 fe:00 326279                     /usr/local/bin/mws
Size:               1024 kB
Rss:                 512 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
5610b000-5620b000 r--p 00101000 fe:00 326279                     /usr/local/bin/mws
Anonymous:           128 kB
7f0000000000-7f0000021000 rw-p 00000000 00:00 0
Anonymous:           132 kB
7f0000100000-7f0000200000 r-xp 00000000 00:00 0
Anonymous:             0 kB
";

    #[test]
    fn the_code_mapping_is_found_around_an_address_in_it() {
        let got = clean_code_mapping(SMAPS, 0x5600b000 + 0x1234);
        assert_eq!(got, Some((0x5600b000, 0x100000)));
        assert_eq!(clean_code_mapping(SMAPS, 0x5610afff), got);
    }

    #[test]
    fn no_other_mapping_is_ever_taken_for_code() {
        // Read-only data (relocated pages written once), anonymous memory, an anonymous
        // executable mapping (a JIT's), and addresses outside every mapping.
        for here in [
            0x5600a010,
            0x5610b000,
            0x7f0000000010,
            0x7f0000100010,
            0x10,
            usize::MAX,
        ] {
            assert_eq!(clean_code_mapping(SMAPS, here), None, "{here:#x}");
        }
    }

    #[test]
    fn written_code_pages_or_unreadable_smaps_keep_the_mapping() {
        let written = SMAPS.replacen(
            "Anonymous:             0 kB\nVmFlags",
            "Anonymous:             4 kB\nVmFlags",
            1,
        );
        assert_eq!(clean_code_mapping(&written, 0x5600b010), None);
        // The mapping's fields cut off before its Anonymous line.
        let cut = "5600b000-5610b000 r-xp 00001000 fe:00 326279 /usr/local/bin/mws\nRss: 512 kB\n";
        assert_eq!(clean_code_mapping(cut, 0x5600b010), None);
        let next =
            format!("{cut}5610b000-5620b000 r--p 00101000 fe:00 326279 /x\nAnonymous: 0 kB\n");
        assert_eq!(clean_code_mapping(&next, 0x5600b010), None);
        for junk in [
            "",
            "\n\n",
            "zz-yy r-xp 0 fe:00 1 /x\nAnonymous: 0 kB",
            "Anonymous: 0 kB",
        ] {
            assert_eq!(clean_code_mapping(junk, 0x5600b010), None, "{junk:?}");
        }
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn code_runs_on_after_its_pages_are_dropped() {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let here = drop_code_pages as *const () as usize;
        assert!(
            clean_code_mapping(&smaps, here).is_some(),
            "this test binary's code mapping was not found"
        );
        let resident = || {
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            status
                .lines()
                .find_map(|l| l.strip_prefix("RssFile:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").parse::<u64>().ok())
                .unwrap()
        };
        let before = resident();
        drop_code_pages();
        let after = resident();
        // Other tests run meanwhile and map some code back; most of it stays out.
        assert!(after < before, "RssFile {before} kB -> {after} kB");
        // Code keeps running, read back from the file as it runs, and the mapping is still
        // clean (nothing of it was written).
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        assert!(clean_code_mapping(&smaps, here).is_some());
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
