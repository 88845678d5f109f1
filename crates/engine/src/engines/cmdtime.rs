//! `cmdtime`: times a command, run again and again. Every request of the job runs `cmd`
//! once and waits for it: the request's latency is the command's wall time (start to exit,
//! as `time` measures it), so the job's count, mean, deviation, percentiles, JSON, report
//! and compare all apply. The job needs `number_ios=N` (N runs) or a `runtime`.
//!
//! `cmd_before` and `cmd_after` run untimed before and after every run (`cmd_after` of the
//! last run when the job ends): a mount-time study is `cmd=mount ...`, `cmd_after=umount
//! ...`. A command is split at spaces (no shell: its time is the program's own) unless
//! `cmd_shell=1` (then `/bin/sh -c`, whose start-up is part of the time). Standard input is
//! /dev/null, standard output is discarded, standard error is kept for the message when a
//! command fails: a non-zero exit of `cmd` fails that request (EIO, with the command, its
//! exit status and last line of standard error), and of `cmd_before`/`cmd_after` the job.

use crate::api::{Caps, Engine, EngineConfig, EngineDef, IoReq, Queued};
use flexio_job::engine_opts::parse;
use flexio_job::table::{Kind, OptDef};
use std::io;
use std::process::{Command, Stdio};

flexio_job::engine_options! {
    /// cmdtime's options.
    pub struct CmdTimeOpts; rows OPTIONS;
    /// The timed command.
    cmd: Option<String> = None,
        "cmd", Kind::Str, "", "cmdtime: the command to time (split at spaces; mandatory)",
        |v, kb| parse::string(v, kb).map(Some);
    /// Untimed, before every run.
    cmd_before: Option<String> = None,
        "cmd_before", Kind::Str, "", "cmdtime: an untimed command before every run",
        |v, kb| parse::string(v, kb).map(Some);
    /// Untimed, after every run.
    cmd_after: Option<String> = None,
        "cmd_after", Kind::Str, "", "cmdtime: an untimed command after every run (e.g. umount)",
        |v, kb| parse::string(v, kb).map(Some);
    /// Through /bin/sh -c.
    cmd_shell: bool = false,
        "cmd_shell", Kind::Bool, "0", "cmdtime: run the commands through /bin/sh -c",
        parse::boolean;
}

/// The one kind of operation: a run of the command.
pub const KINDS: &[&str] = &["cmd"];

pub struct CmdTime {
    opts: CmdTimeOpts,
    /// `cmd_after` is due (the last run succeeded).
    after_due: bool,
    /// Why the last run failed.
    failure: Option<String>,
}

/// The command's program and arguments as they are run.
fn argv(cmdline: &str, shell: bool) -> Vec<String> {
    if shell {
        vec!["/bin/sh".into(), "-c".into(), cmdline.into()]
    } else {
        cmdline.split_whitespace().map(String::from).collect()
    }
}

/// Run a command to its end; `Err` says how it failed: an errno and `'<command>' (<how>)`
/// (not started, or the exit status with the last line of its standard error).
fn run(cmdline: &str, shell: bool) -> Result<(), (i32, String)> {
    let a = argv(cmdline, shell);
    let Some((prog, args)) = a.split_first() else {
        return Err((libc::EINVAL, "the command is empty".into()));
    };
    let out = Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| {
            (
                e.raw_os_error().unwrap_or(libc::EIO),
                format!("'{cmdline}' (could not be started)"),
            )
        })?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    let how = match out.status.code() {
        Some(c) => format!("exit status {c}"),
        None => "killed by a signal".into(),
    };
    let tail = if last.is_empty() {
        String::new()
    } else {
        format!(": {}", last.trim())
    };
    Err((libc::EIO, format!("'{cmdline}' ({how}{tail})")))
}

impl CmdTime {
    fn untimed_cmd(&self, which: &str, c: &Option<String>) -> io::Result<()> {
        match c {
            None => Ok(()),
            Some(c) => run(c, self.opts.cmd_shell).map_err(|(errno, m)| {
                io::Error::new(
                    io::Error::from_raw_os_error(errno).kind(),
                    format!("{which} {m} failed"),
                )
            }),
        }
    }
}

impl EngineDef for CmdTime {
    const NAME: &'static str = "cmdtime";
    const HELP: &'static str =
        "Times a command run again and again (cmd; cmd_before/cmd_after untimed); no I/O";
    const OPTIONS: &'static [&'static [OptDef]] = &[OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        CmdTime {
            opts: CmdTimeOpts::from_values(&cfg.values),
            after_due: false,
            failure: None,
        }
    }
    fn probe(cfg: &EngineConfig) -> Result<(), String> {
        let o = CmdTimeOpts::from_values(&cfg.values);
        let Some(cmd) = &o.cmd else {
            return Err("cmdtime: no cmd is defined, it is mandatory to define one".into());
        };
        if cfg.number_ios == 0 && cfg.runtime_us == 0 {
            return Err(
                "cmdtime: say how many runs with number_ios=N (or how long with runtime=)".into(),
            );
        }
        for (name, c) in [
            ("cmd", Some(cmd)),
            ("cmd_before", o.cmd_before.as_ref()),
            ("cmd_after", o.cmd_after.as_ref()),
        ] {
            let Some(c) = c else { continue };
            let a = argv(c, o.cmd_shell);
            match a.first() {
                None => return Err(format!("cmdtime: {name} is empty")),
                Some(p) if !crate::exec::findable(p) => {
                    return Err(format!(
                        "cmdtime: {name}: program '{p}' is not an executable file"
                    ))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}

impl Engine for CmdTime {
    fn caps(&self) -> Caps {
        Caps {
            syncio: true,
            diskless: true,
            no_fd: true,
            noio: true,
            op_kinds: KINDS,
            untimed: true,
            ..Caps::default()
        }
    }
    fn init_notes(&self) -> Vec<String> {
        let o = &self.opts;
        let mut v = vec![format!(
            "cmdtime: timing '{}'{}",
            o.cmd.as_deref().unwrap_or(""),
            if o.cmd_shell { " (through /bin/sh -c)" } else { "" }
        )];
        if let Some(b) = &o.cmd_before {
            v.push(format!("cmdtime: untimed before every run: '{b}'"));
        }
        if let Some(a) = &o.cmd_after {
            v.push(format!("cmdtime: untimed after every run: '{a}'"));
        }
        v
    }
    fn untimed(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.after_due) {
            self.untimed_cmd("cmd_after", &self.opts.cmd_after)?;
        }
        self.untimed_cmd("cmd_before", &self.opts.cmd_before)
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        let Some(cmd) = self.opts.cmd.as_deref() else {
            return Queued::Completed(-(libc::EINVAL as i64));
        };
        match run(cmd, self.opts.cmd_shell) {
            Ok(()) => {
                self.after_due = true;
                Queued::Completed(io.len as i64)
            }
            Err((errno, m)) => {
                self.failure = Some(m);
                Queued::Completed(-(errno as i64))
            }
        }
    }
    fn failed_op(&self) -> Option<String> {
        self.failure.as_ref().map(|m| format!("cmd {m}"))
    }
    fn wrap_up(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.after_due) {
            self.untimed_cmd("cmd_after", &self.opts.cmd_after)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(opts: &[(&str, &str)], n: u64) -> EngineConfig {
        let mut o = flexio_job::JobOptions::default();
        for (k, v) in opts {
            let row = OPTIONS.iter().find(|r| r.name == *k).unwrap();
            (row.set)(&mut o, Some(v)).unwrap();
        }
        EngineConfig {
            values: o.engine.clone(),
            number_ios: n,
            ..EngineConfig::default()
        }
    }

    #[test]
    fn probe_and_failures() {
        assert!(CmdTime::probe(&cfg(&[], 3)).unwrap_err().contains("mandatory"));
        assert!(CmdTime::probe(&cfg(&[("cmd", "true")], 0)).unwrap_err().contains("number_ios"));
        assert!(CmdTime::probe(&cfg(&[("cmd", "no-such-program-x")], 3)).is_err());
        assert!(CmdTime::probe(&cfg(&[("cmd", "true"), ("cmd_after", "true")], 3)).is_ok());
        let e = run("sh -c false", false).unwrap_err();
        assert_eq!(e.0, libc::EIO);
        assert!(e.1.contains("exit status 1"), "{}", e.1);
        let e = run("echo oops >&2; exit 3", true).unwrap_err();
        assert_eq!(e.1, "'echo oops >&2; exit 3' (exit status 3: oops)");
        let e = run("no-such-program-x", false).unwrap_err();
        assert_eq!((e.0, e.1.contains("could not be started")), (libc::ENOENT, true));
    }

    #[test]
    fn after_runs_between_and_at_the_end() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("log");
        let l = log.display();
        let c = cfg(
            &[
                ("cmd", &format!("echo run >> {l}")),
                ("cmd_after", &format!("echo after >> {l}")),
                ("cmd_shell", "1"),
            ],
            2,
        );
        let mut e = CmdTime::build(&c);
        let req = IoReq {
            idx: 0,
            op: crate::api::Op::Read,
            file: 0,
            fd: -1,
            offset: 0,
            buf: std::ptr::null_mut(),
            len: 4096,
            ioprio: 0,
            sync_flags: 0,
        };
        for _ in 0..2 {
            e.untimed().unwrap();
            assert_eq!(e.queue(&req), Queued::Completed(4096));
        }
        e.wrap_up().unwrap();
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "run\nafter\nrun\nafter\n");
    }
}
