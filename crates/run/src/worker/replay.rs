//! Trace replay (`read_iolog`): the trace's entries in order, and fio's pacing between them
//! (`iolog_delay`): an entry's delay counts from the previous issue, and time overslept
//! is taken off the next delay.

use crate::iolog::{self, Entry};
use crate::plan::ReplayPlan;

pub struct Replay {
    reader: iolog::Reader,
    /// Messages while reading (already printed when the plan scanned the trace).
    notes: Vec<String>,
    last_issue_ns: u64,
    /// µs overslept by the last delay, taken off the next one.
    time_offset_us: u64,
    pub redirect: bool,
}

impl Replay {
    pub fn open(p: &ReplayPlan) -> Result<Self, String> {
        Ok(Replay {
            reader: iolog::open(&p.trace, &p.opts, &p.files)?,
            notes: Vec::new(),
            last_issue_ns: 0,
            time_offset_us: 0,
            redirect: p.opts.redirect.is_some(),
        })
    }

    /// The next entry; `Ok(None)` at the end of the trace.
    pub fn next_entry(&mut self) -> Result<Option<Entry>, String> {
        let r = self.reader.next_entry(&mut self.notes);
        self.notes.clear();
        r
    }

    /// How long to sleep (µs) before an entry with `delay` µs, at `now_ns`.
    pub fn sleep_for(&mut self, delay: u64, now_ns: u64) -> u64 {
        let since = now_ns.saturating_sub(self.last_issue_ns) / 1000;
        if delay < self.time_offset_us {
            self.time_offset_us = 0;
            return 0;
        }
        let d = delay - self.time_offset_us;
        if d < since {
            return 0;
        }
        d - since
    }

    /// A sleep for an entry of `delay` µs took `slept_us`.
    pub fn slept(&mut self, delay: u64, slept_us: u64) {
        self.time_offset_us = slept_us.saturating_sub(delay);
    }

    /// An entry was issued (or a file action done) at `now_ns`.
    #[inline]
    pub fn issued(&mut self, now_ns: u64) {
        self.last_issue_ns = now_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iolog::{Format, ReplayOpts};

    fn replay() -> (tempfile::TempDir, Replay) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        std::fs::write(&p, "fio version 2 iolog\n/a add\n/a read 0 512\n").unwrap();
        let plan = ReplayPlan {
            trace: p,
            opts: ReplayOpts::default(),
            files: vec!["/a".into()],
            format: Format::Text(2),
            notes: Vec::new(),
        };
        let r = Replay::open(&plan).unwrap();
        (d, r)
    }

    #[test]
    fn delays_count_from_the_last_issue_and_oversleep_is_repaid() {
        let (_d, mut r) = replay();
        r.issued(1_000_000);
        // 300 µs since the last issue: 700 µs left of a 1000 µs delay.
        assert_eq!(r.sleep_for(1000, 1_300_000), 700);
        // Already late: no sleep.
        assert_eq!(r.sleep_for(1000, 2_500_000), 0);
        // Overslept by 200 µs: the next delay is shorter by that much.
        r.slept(1000, 1200);
        r.issued(5_000_000);
        assert_eq!(r.sleep_for(500, 5_000_000), 300);
        // A delay below the overshoot resets it.
        r.slept(100, 400);
        assert_eq!(r.sleep_for(100, 5_000_000), 0);
        assert_eq!(r.sleep_for(100, 5_000_000), 100);
        let e = r.next_entry().unwrap().unwrap();
        assert_eq!(e.act, crate::iolog::Act::Add);
        assert_eq!(r.next_entry().unwrap().unwrap().len, 512);
        assert!(r.next_entry().unwrap().is_none());
    }
}
