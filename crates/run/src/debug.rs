//! `--debug=<categories>`: fio's debug log lines on stdout,
//! `<category padded to 8> <thread id padded to 5> <message>`, after fio's
//! `fio: set debug option <category>` announcements (`fio: set all debug options`). Off by
//! default; a category is one relaxed load to test, and the per-I/O `io` lines run on the
//! general job loop only (the plain loop is not used while they are on).
//!
//! Every fio category is accepted. flexio prints lines where it has the event: `process`
//! (thread start, run-state changes), `file`, `io`, `mem` (I/O buffers), `verify`, `parse`,
//! `diskutil` (devices watched), `time` (the clock chosen), `rate`, `steadystate`. The
//! others name parts of fio flexio does not have (`blktrace` tracing, `random`'s internal
//! maps, `job` forking, `mutex` semaphores, `profile` modules, `net` engine internals,
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

/// The `parse` lines for a loaded job set: one `handle_option=` line per option applied,
/// global options first, as fio logs each option it handles.
pub fn parse_lines(set: &flexio_job::JobSet) {
    if !on(Cat::Parse) {
        return;
    }
    for (k, v) in set
        .global_echo
        .iter()
        .chain(set.jobs.iter().flat_map(|j| j.echo.iter()))
    {
        log(Cat::Parse, &format!("handle_option={k}, ptr={v}"));
    }
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
            (Cat::Parse, "parse"),
            (Cat::Diskutil, "diskutil"),
            (Cat::Time, "time"),
            (Cat::Rate, "rate"),
            (Cat::Steadystate, "steadystate"),
        ] {
            assert_eq!(c.name(), n);
        }
    }
}
