//! What the extra program switches change in a run (see `flexio_job::cli_extra`):
//! `--aux-path` places the state files, `--debug=file` lists each thread's files, and
//! [`RunExtras`] carries `--idle-prof`, the trigger and `--bandwidth-log` through a run.

use crate::debug::Cat;
use crate::plan::ThreadPlan;
use flexio_job::cli_extra::{Extra, IdleProf};
use std::path::Path;

/// Adjust the plans for the switches: `--aux-path=DIR` puts verify state files and
/// verify_dump's files in DIR.
pub fn after_plan(x: &Extra, plans: &mut [ThreadPlan]) {
    if let Some(aux) = &x.aux_path {
        for t in plans.iter_mut() {
            if let Some(v) = &mut t.verify {
                v.state_file = Path::new(aux).join(&v.state_file);
                v.aux_path = Some(aux.clone());
            }
        }
    }
    if crate::debug::on(Cat::File) {
        for t in plans.iter() {
            for (i, f) in t.files.iter().enumerate() {
                crate::debug::log(
                    Cat::File,
                    &format!(
                        "{}: add file {} at {i}, region {}+{}",
                        t.name,
                        f.path.display(),
                        f.region.start,
                        f.region.len
                    ),
                );
            }
        }
    }
}

/// Per-run state of the extra switches.
pub struct RunExtras {
    /// --idle-prof: the mode, /proc/stat at the start, and fio's unit of work calibrated.
    idle: Option<(IdleProf, crate::idle::CpuTimes, (f64, f64))>,
    pub trigger: crate::trigger::Trigger,
}

impl RunExtras {
    /// At the start of the run (`now_ns` on the run's clock).
    pub fn start(x: &Extra, now_ns: u64) -> RunExtras {
        RunExtras {
            idle: x
                .idle_prof
                .map(|m| (m, crate::idle::read(), crate::idle::calibrate())),
            trigger: crate::trigger::Trigger::new(x, now_ns),
        }
    }

    /// The final report with the CPU idleness added (`--idle-prof`).
    pub fn decorate(&self, text: String, json: bool, normal: bool) -> String {
        match &self.idle {
            Some((mode, at_start, unit)) => {
                let (sys, cpus) = crate::idle::idleness(at_start, &crate::idle::read());
                crate::idle::decorate(&text, *mode, sys, &cpus, *unit, json, normal)
            }
            None => text,
        }
    }
}
