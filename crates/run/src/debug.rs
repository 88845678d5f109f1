//! `--debug=<categories>`: fio's debug log lines on stdout,
//! `<category padded to 8> <thread id padded to 5> <message>`, after fio's
//! `fio: set debug option <category>` announcements (`fio: set all debug options`). Off by
//! default; a category is one relaxed load to test, and the per-I/O `io` lines run on the
//! general job loop only (the plain loop is not used while they are on).
//!
//! Every fio category is accepted. flexio prints lines where it has the event: `process`
//! (thread start, run-state changes), `file`, `io`, `mem` (I/O buffers), `verify`, `parse`
//! (options applied, steadystate thresholds), `random` (the newest fio's `rand_seeds[i]=`
//! lines of each thread, at planning; under `--compat=3.33` fio 3.33's `off rand` line of
//! each uniform offset draw and its busy-block lines, from the generator's trace hook),
//! `diskutil` (devices watched), `time` (the clock chosen), `rate`, `steadystate`. The
//! others name parts of fio flexio does not have (`blktrace` tracing, `job` forking, `mutex` semaphores, `profile` modules, `net` engine internals,
//! `compress` workers, `helperthread`, `zbd`, `sprandom`) and print nothing.

use flexio_job::cli_extra::{Extra, DEBUG_CATEGORIES};
use std::sync::atomic::{AtomicU32, Ordering};

static MASK: AtomicU32 = AtomicU32::new(0);

/// The categories flexio has events for; the value is the index in `DEBUG_CATEGORIES`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Cat {
    Process = 0,
    File = 1,
    Io = 2,
    Mem = 3,
    Verify = 5,
    Random = 6,
    Parse = 7,
    Diskutil = 8,
    Time = 12,
    Rate = 14,
    Steadystate = 16,
}

impl Cat {
    fn name(self) -> &'static str {
        DEBUG_CATEGORIES[self as usize]
    }
}

/// Turn on the categories `--debug` asked for and announce them as fio does.
pub fn init(x: &Extra) {
    MASK.store(x.debug, Ordering::Relaxed);
    for c in &x.debug_given {
        crate::notes::print(&match *c {
            "all" => "fio: set all debug options\n".to_string(),
            c => format!("fio: set debug option {c}\n"),
        });
    }
}

/// Whether category `c` is logged.
#[inline(always)]
pub fn on(c: Cat) -> bool {
    MASK.load(Ordering::Relaxed) & (1 << c as u32) != 0
}

/// The line for `msg` in category `c`, as fio prints it.
pub fn line(c: Cat, tid: i32, msg: &str) -> String {
    format!("{:<8} {tid:<5} {msg}\n", c.name())
}

/// Print `msg` in category `c` if it is on (the caller formats only after [`on`]).
pub fn log(c: Cat, msg: &str) {
    if on(c) {
        let tid = flexio_engine::platform::thread_id();
        crate::notes::print(&line(c, tid, msg));
    }
}

/// `dbg!`-style helper: formats only when the category is on.
#[macro_export]
macro_rules! debug_log {
    ($cat:expr, $($arg:tt)*) => {
        if $crate::debug::on($cat) {
            $crate::debug::log($cat, &format!($($arg)*));
        }
    };
}

/// fio 3.33's `random` line of an offset draw or a busy block (given only under
/// `--compat=3.33` with `--debug=random`).
pub fn rand_event(e: flexio_workload::gen::RandEvent) {
    use flexio_workload::gen::RandEvent;
    match e {
        RandEvent::Draw(r) => log(Cat::Random, &format!("off rand {r}")),
        RandEvent::Busy(b) => log(
            Cat::Random,
            &format!("get_next_rand_offset: offset {b} busy"),
        ),
    }
}

/// The `parse` lines for a loaded job set: one `handle_option=` line per option applied,
/// global options first, as fio logs each option it handles.
pub fn parse_lines(set: &flexio_job::JobSet) {
    if !on(Cat::Parse) {
        return;
    }
    let kb = set
        .jobs
        .first()
        .map(|j| j.opts.kb_base)
        .unwrap_or(flexio_job::value::KbBase::K1024);
    for (k, v) in set
        .global_echo
        .iter()
        .chain(set.jobs.iter().flat_map(|j| j.echo.iter()))
    {
        log(Cat::Parse, &format!("handle_option={k}, ptr={v}"));
        if k == "steadystate" {
            if let Some(l) = steadystate_line(v, kb, set.compat) {
                log(Cat::Parse, &l);
            }
        }
    }
}

/// The line fio's steadystate parser logs for the threshold it read: a percentage or an
/// IOPS limit as `%f`, a bandwidth in bytes, the newest fio's latency limit as its number.
fn steadystate_line(
    v: &str,
    kb: flexio_job::value::KbBase,
    compat: flexio_job::Compat,
) -> Option<String> {
    let c = flexio_job::options::SsCriterion::parse(v, kb, compat).ok()?;
    Some(if c.pct {
        format!("set steady state threshold to {:.6}%", c.limit)
    } else if c.iops {
        format!("set steady state IOPS threshold to {:.6}", c.limit)
    } else if c.lat {
        format!(
            "set steady state latency threshold to {} nsec",
            c.limit as i64
        )
    } else {
        format!("set steady state BW threshold to {}", c.limit as i64)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_layout_is_fios() {
        assert_eq!(
            line(Cat::Parse, 24396, "dup options"),
            "parse    24396 dup options\n"
        );
        assert_eq!(line(Cat::Io, 7, "x"), "io       7     x\n");
        // Each flexio category is fio's of the same name.
        for (c, n) in [
            (Cat::Process, "process"),
            (Cat::File, "file"),
            (Cat::Io, "io"),
            (Cat::Mem, "mem"),
            (Cat::Verify, "verify"),
            (Cat::Random, "random"),
            (Cat::Parse, "parse"),
            (Cat::Diskutil, "diskutil"),
            (Cat::Time, "time"),
            (Cat::Rate, "rate"),
            (Cat::Steadystate, "steadystate"),
        ] {
            assert_eq!(c.name(), n);
        }
    }

    #[test]
    fn steadystate_lines_are_fios() {
        let kb = flexio_job::value::KbBase::K1024;
        let newest = flexio_job::Compat::default();
        let l = |v: &str| steadystate_line(v, kb, newest).unwrap();
        // fio 3.33 --debug=parse, and fio's t/steadystate_tests.py.
        assert_eq!(l("iops:10"), "set steady state IOPS threshold to 10.000000");
        assert_eq!(l("iops:10%"), "set steady state threshold to 10.000000%");
        assert_eq!(l("bw:.1%"), "set steady state threshold to 0.100000%");
        assert_eq!(l("bw:12"), "set steady state BW threshold to 12");
        assert_eq!(l("bw_slope:12k"), "set steady state BW threshold to 12288");
        assert_eq!(
            l("iops_slope:0.5"),
            "set steady state IOPS threshold to 0.500000"
        );
        assert_eq!(
            l("lat:250"),
            "set steady state latency threshold to 250 nsec"
        );
        assert!(steadystate_line("nope:1", kb, newest).is_none());
    }
}
