//! fio's run triggers: `--trigger-file=F` (when F appears; it is removed) or
//! `--trigger-timeout=T` (T after the start) stop every job, as fio does, and run the
//! `--trigger=cmd` command through the shell. The run then reports normally (exit status as
//! without the trigger, not the interrupted 128). With `--client`, the trigger (polled by
//! the client) also sends `--trigger-remote=cmd` to every server, which stops its jobs and
//! runs that command (`src/remote`); a local run has no servers and ignores it, as fio.

use flexio_job::cli_extra::Extra;
use std::path::PathBuf;

pub struct Trigger {
    file: Option<PathBuf>,
    /// Clock time (ns) at which the timeout fires.
    deadline_ns: Option<u64>,
    cmd: Option<String>,
    next_check_ns: u64,
    fired: bool,
}

impl Trigger {
    /// `start_ns`: the run's start on the clock the polls use.
    pub fn new(x: &Extra, start_ns: u64) -> Trigger {
        Trigger {
            file: x.trigger_file.as_ref().map(PathBuf::from),
            deadline_ns: x.trigger_timeout_us.map(|us| start_ns + us * 1000),
            cmd: x.trigger_cmd.clone(),
            next_check_ns: 0,
            fired: false,
        }
    }

    pub fn fired(&self) -> bool {
        self.fired
    }

    /// Whether the trigger fires now (once): the timeout passed or the file exists (checked
    /// at most every 100 ms, removed when seen). Firing runs the command.
    pub fn poll(&mut self, now_ns: u64) -> bool {
        if self.fired || now_ns < self.next_check_ns {
            return false;
        }
        self.next_check_ns = now_ns + 100_000_000;
        let by_time = self.deadline_ns.is_some_and(|d| now_ns >= d);
        let by_file = self.file.as_ref().is_some_and(|f| {
            let there = f.exists();
            if there {
                let _ = std::fs::remove_file(f);
            }
            there
        });
        if !(by_time || by_file) {
            return false;
        }
        self.fired = true;
        if let Some(cmd) = &self.cmd {
            exec(cmd);
        }
        true
    }
}

/// Run a trigger command through the shell and wait for it (fio's `system()`).
pub fn exec(cmd: &str) {
    match std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(cmd)
        .status()
    {
        Ok(s) if s.success() => {}
        Ok(s) => eprintln!("flexio: trigger command '{cmd}' ended with {s}"),
        Err(e) => eprintln!("flexio: cannot run trigger command '{cmd}': {e}"),
    }
}
