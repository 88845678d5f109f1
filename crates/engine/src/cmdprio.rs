//! Per-request I/O priorities (fio's `cmdprio_*` options of io_uring and libaio). The
//! engines that take them list [`OPTIONS`] among their own; the job loop gives each
//! request its priority (a share of requests gets the command priority).

use flexio_job::engine_opts::parse;
use flexio_job::table::Kind;

flexio_job::engine_options! {
    /// Command priorities per direction (read, write).
    pub struct CmdprioOpts; rows OPTIONS;
    /// Share of requests (percent) sent with the command priority.
    cmdprio_percentage: [u32; 2] = [0, 0],
        "cmdprio_percentage", Kind::IntDir, "", "Send high priority I/O this percentage of the time",
        |v, _| parse::rw_ints(v, [0, 0], 0, 100);
    /// Their I/O priority class (1 real-time, 2 best-effort, 3 idle).
    cmdprio_class: [u32; 2] = [1, 1],
        "cmdprio_class", Kind::IntDir, "1", "Set asynchronous IO priority class",
        |v, _| parse::rw_ints(v, [1, 1], 1, 3);
    /// Their priority level within the class.
    cmdprio: [u32; 2] = [0, 0],
        "cmdprio", Kind::IntDir, "0", "Set asynchronous IO priority level",
        |v, _| parse::rw_ints(v, [0, 0], 0, 7);
}

impl CmdprioOpts {
    /// Whether any request gets a command priority.
    pub fn active(&self) -> bool {
        self.cmdprio_percentage.iter().any(|p| *p > 0)
    }

    /// The ioprio value (class << 13 | level) of command-priority requests per direction.
    pub fn values(&self) -> [u16; 2] {
        [0, 1].map(|d| ((self.cmdprio_class[d] << 13) | self.cmdprio[d]) as u16)
    }
}
