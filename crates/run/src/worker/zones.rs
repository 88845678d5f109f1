//! `zonemode=zbd` in the job thread: the thread's side of its files' zone tables (shared
//! with the other threads on the same files). It answers the generator's questions (which
//! direction, where sequential I/O continues, where each I/O really goes), records what a
//! request does to the write pointers when it is queued and when it completes, and tells
//! the loop what to do first: wait for the requests in flight, reset a real device's zone.
//!
//! The zone decisions themselves are `flexio_workload::zbd`'s; this part only locks the
//! tables and keeps the thread's counts.

use crate::plan::zones::ZbdPlan;
use flexio_workload::zbd::{Actions, Adjust, JobZones, ZoneSet};
use flexio_workload::Zoned;
use std::sync::MutexGuard;

/// A failure of the zone logic that ends the job: errno, fio's function text, and the line
/// fio logs with it.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub errno: i32,
    pub func: &'static str,
    pub log: Option<String>,
}

/// What the loop must do before submitting the I/O just drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Before {
    pub quiesce: bool,
    /// Reset this range of file `.0` (a real zoned device) after quiescing.
    pub reset: Option<(usize, u64, u64)>,
}

pub struct Zones {
    plan: ZbdPlan,
    job: JobZones,
    /// Resets before the measured part began (ramp): not reported.
    resets_before: u64,
    failure: Option<Failure>,
    before: Before,
    /// zoneskip: per file, the start of the zone the job went to last, and whether its
    /// next sequential I/O starts there (a loop began, or the file ran out of data).
    skip_base: Vec<u64>,
    skip_fresh: Vec<bool>,
    /// Zones of real devices to reset before the loop's first I/O (verify).
    device_resets: Vec<(usize, u64, u64)>,
}

impl Zones {
    pub fn new(plan: &ZbdPlan) -> Zones {
        Zones {
            job: JobZones::new(plan.params),
            plan: plan.clone(),
            resets_before: 0,
            failure: None,
            before: Before::default(),
            skip_base: plan.files.iter().map(|f| f.range.offset).collect(),
            skip_fresh: vec![true; plan.files.len()],
            device_resets: Vec::new(),
        }
    }

    fn set(&self, file: usize) -> MutexGuard<'_, ZoneSet> {
        self.plan.files[file]
            .set
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// A loop starts (fio resets a file's zone accounting when a job opens it; a verifying
    /// writer resets the zones of its range that hold data).
    pub fn loop_start(&mut self) {
        for i in 0..self.plan.files.len() {
            self.file_reset(i);
            self.skip_fresh[i] = true;
        }
    }

    fn file_reset(&mut self, i: usize) {
        let r = self.plan.files[i].range;
        let p = self.job.params;
        let mut job = std::mem::take(&mut self.job);
        let dev = {
            let mut s = self.set(i);
            s.file_reset(&p, &r);
            s.reset_for_verify(&mut job, &r)
        };
        self.job = job;
        if self.plan.files[i].device {
            self.device_resets
                .extend(dev.into_iter().map(|(off, len)| (i, off, len)));
        }
    }

    /// The real device zones to reset before the next I/O (taken once).
    pub fn take_device_resets(&mut self) -> Vec<(usize, u64, u64)> {
        std::mem::take(&mut self.device_resets)
    }

    /// The measured part starts (after ramp): resets are counted from here.
    pub fn restart_count(&mut self) {
        self.resets_before = self.job.resets;
    }

    /// Zone resets in the measured part.
    pub fn resets(&self) -> u64 {
        self.job.resets - self.resets_before
    }

    /// What must happen before the I/O just drawn (taken once).
    pub fn take_before(&mut self) -> Before {
        std::mem::take(&mut self.before)
    }

    /// A failure that ends the job (taken once).
    pub fn take_failure(&mut self) -> Option<Failure> {
        self.failure.take()
    }

    fn note(&mut self, file: usize, a: Actions) {
        self.before.quiesce |= a.quiesce;
        if let Some((off, len)) = a.reset {
            if self.plan.files[file].device {
                self.before.reset = Some((file, off, len));
            }
        }
    }

    /// A request was queued (the write pointer moves now, as in fio).
    pub fn queued(&mut self, file: usize, ddir: usize, offset: u64, len: u64) {
        let mut job = std::mem::take(&mut self.job);
        self.set(file).queued(&mut job, ddir, offset, len, false);
        self.job = job;
    }

    /// A request completed: a write that filled its zone closes it.
    pub fn completed(&mut self, file: usize, ddir: usize, offset: u64, len: u64) {
        if ddir != 1 {
            return;
        }
        let mut job = std::mem::take(&mut self.job);
        self.set(file).completed(&mut job, ddir, offset, len);
        self.job = job;
    }

    /// A trim: a write-pointer zone is reset instead (`Ok(true)`: done, no engine call);
    /// `Ok(false)`: a conventional zone, trimmed by the engine.
    pub fn trim(&mut self, file: usize, offset: u64) -> Result<bool, String> {
        let mut job = std::mem::take(&mut self.job);
        let mut a = Actions::default();
        let r = self.set(file).trim(&mut job, offset, &mut a);
        self.job = job;
        self.note(file, a);
        r
    }
}

impl Zoned for Zones {
    const ON: bool = true;

    fn ddir(&mut self, file: usize, ddir: usize) -> usize {
        let p = self.job.params;
        self.set(file).adjust_ddir(&p, ddir)
    }

    fn continue_at(&mut self, file: usize, ddir: usize, pos: u64) -> u64 {
        let p = self.job.params;
        if p.zone_skip == 0 || p.random {
            return self.set(file).skip_capacity_gap(&p, ddir, pos);
        }
        // zoneskip: a loop (or a pass after the file ran out) continues from the zone
        // the job went to last.
        let pos = if std::mem::take(&mut self.skip_fresh[file]) {
            self.skip_base[file]
        } else {
            pos
        };
        let r = self.plan.files[file].range;
        let mut job = std::mem::take(&mut self.job);
        let mut base = self.skip_base[file];
        let at = {
            let s = self.set(file);
            let to = s.skip_capacity_gap(&p, ddir, pos);
            s.skip_zones(&mut job, &r, ddir, pos, to, &mut base)
        };
        self.skip_base[file] = base;
        self.job = job;
        at
    }

    fn restarted(&mut self, file: usize) {
        self.file_reset(file);
    }

    fn seq_end(&mut self, file: usize, len: u64) -> u64 {
        let p = self.job.params;
        if p.zone_skip == 0 || p.random {
            return len;
        }
        let f = &self.plan.files[file];
        self.skip_base[file] - f.range.offset + len
    }

    fn adjust(&mut self, file: usize, ddir: usize, offset: u64, len: u64) -> Option<(u64, u64)> {
        let r = self.plan.files[file].range;
        let mut job = std::mem::take(&mut self.job);
        job.zone_bytes += len;
        let a = self.set(file).adjust(&mut job, &r, ddir, offset, len);
        if matches!(a, Adjust::Eof { .. }) && job.params.zone_skip > 0 {
            // The file has nothing more: its next pass starts from its start again.
            job.zone_bytes = 0;
            self.skip_base[file] = r.offset;
            self.skip_fresh[file] = true;
        }
        self.job = job;
        match a {
            Adjust::Go {
                offset,
                len,
                actions,
            } => {
                self.note(file, actions);
                Some((offset, len))
            }
            Adjust::Eof { actions } => {
                self.note(file, actions);
                None
            }
            Adjust::Fail {
                errno,
                func,
                log,
                actions,
            } => {
                self.note(file, actions);
                if self.failure.is_none() {
                    self.failure = Some(Failure { errno, func, log });
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::zones::FileZones;
    use flexio_workload::zbd::JobParams;
    use std::sync::{Arc, Mutex};

    fn zones(size: u64, zone: u64, max_open: u32) -> Zones {
        let mut set = ZoneSet::emulated(size, zone, 0).unwrap();
        set.set_max_open(max_open);
        let range = set.fit_range(0, size, false, &mut Vec::new()).unwrap();
        Zones::new(&ZbdPlan {
            params: JobParams {
                min_bs: [4096; 3],
                writes: true,
                ..Default::default()
            },
            files: vec![FileZones {
                set: Arc::new(Mutex::new(set)),
                range,
                device: false,
            }],
            notes: Vec::new(),
        })
    }

    #[test]
    fn a_full_zone_is_reset_after_quiescing_and_counted() {
        let mut z = zones(1 << 20, 1 << 20, 0);
        z.loop_start();
        for k in 0..16u64 {
            let (off, len) = z.adjust(0, 1, k * 65536, 65536).unwrap();
            assert_eq!((off, len), (k * 65536, 65536));
            z.queued(0, 1, off, len);
            z.completed(0, 1, off, len);
        }
        assert_eq!(z.take_before(), Before::default());
        let (off, _) = z.adjust(0, 1, 0, 65536).unwrap();
        assert_eq!((off, z.resets()), (0, 1));
        // An emulated zone needs no system call, but fio drains the queue first.
        assert_eq!(
            z.take_before(),
            Before {
                quiesce: true,
                reset: None
            }
        );
        z.restart_count();
        assert_eq!(z.resets(), 0);
    }

    #[test]
    fn a_write_larger_than_a_zone_fails_the_job() {
        let mut z = zones(4 << 20, 1 << 20, 0);
        assert_eq!(z.adjust(0, 1, 0, 2 << 20), None);
        let f = z.take_failure().unwrap();
        assert_eq!(
            (f.errno, f.func),
            (libc::EINVAL, "I/O buflen exceeds zone size")
        );
        assert!(z.take_failure().is_none());
    }

    #[test]
    fn trims_reset_zones_without_the_engine() {
        let mut z = zones(2 << 20, 1 << 20, 0);
        let (off, len) = z.adjust(0, 1, 0, 4096).unwrap();
        z.queued(0, 1, off, len);
        assert_eq!(z.trim(0, 0), Ok(true));
        assert_eq!(z.resets(), 1);
        assert!(z.trim(0, 4096).is_err());
    }
}
