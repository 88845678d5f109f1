//! `--debug=parse,file,io,verify,rate,steadystate`: fio's debug log lines on stdout,
//! `<category padded to 8> <thread id padded to 5> <message>`, after fio's
//! `fio: set debug option <category>` announcements. Off by default; a category is one
//! relaxed load to test, and the per-I/O `io` lines run on the general job loop only (the
//! plain loop is not used while they are on).

use flexio_job::cli_extra::{Extra, DEBUG_CATEGORIES};
use std::io::Write;
use std::sync::atomic::{AtomicU32, Ordering};

static MASK: AtomicU32 = AtomicU32::new(0);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Cat {
    Parse = 0,
    File = 1,
    Io = 2,
    Verify = 3,
    Rate = 4,
    Steadystate = 5,
}

impl Cat {
    fn name(self) -> &'static str {
        DEBUG_CATEGORIES[self as usize]
    }
}

/// Turn on the categories `--debug` asked for and announce them as fio does.
pub fn init(x: &Extra) {
    MASK.store(x.debug, Ordering::Relaxed);
    let mut out = std::io::stdout().lock();
    for (i, c) in DEBUG_CATEGORIES.iter().enumerate() {
        if x.debug & (1 << i) != 0 {
            let _ = writeln!(out, "fio: set debug option {c}");
        }
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
        let _ = std::io::stdout()
            .lock()
            .write_all(line(c, tid, msg).as_bytes());
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
    }
}
