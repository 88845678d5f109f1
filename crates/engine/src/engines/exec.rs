//! `exec`: runs a program as the job. The first request starts `program arguments`
//! (arguments split at spaces, as fio does; `%r` becomes the job's runtime in seconds and
//! `%n` the job's name), with its standard output and error in `<job>.stdout` and
//! `<job>.stderr` unless `std_redirect=0`. Every later request waits 50 ms and looks
//! whether the program is still running, and the job thinks 50 ms between requests (as
//! fio's engine: about ten requests a second); the job's requests and their latencies are
//! that polling, no data moves.
//!
//! The job ends at its runtime or, unlike fio 3.33 (which polls an exited program until the
//! runtime and never ends without one), when the program exits. A program still running
//! when the job ends gets SIGTERM, then SIGKILL after `grace_time` seconds; flexio stops
//! waiting as soon as it exits instead of always sleeping the whole grace time.

use crate::api::{Caps, Engine, EngineConfig, EngineDef, IoReq, Queued};
use flexio_job::engine_opts::parse;
use flexio_job::table::{Kind, OptDef};
use std::io;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

flexio_job::engine_options! {
    /// exec's options.
    pub struct ExecOpts; rows OPTIONS;
    /// The program to run (mandatory).
    program: Option<String> = None,
        "program", Kind::Str, "", "Program to execute",
        |v, kb| parse::string(v, kb).map(Some);
    /// Its arguments, split at spaces.
    arguments: Option<String> = None,
        "arguments", Kind::Str, "", "Arguments to pass",
        |v, kb| parse::string(v, kb).map(Some);
    /// Seconds between SIGTERM and SIGKILL.
    grace_time: u32 = 1,
        "grace_time", Kind::Int { min: 0, max: i32::MAX as i64 }, "1",
        "Grace time before sending a SIGKILL",
        |v, kb| parse::int(v, kb, 0, i32::MAX as i64).map(|n| n as u32);
    /// Standard output and error into `<job>.stdout` / `<job>.stderr`.
    std_redirect: bool = true,
        "std_redirect", Kind::Bool, "1", "Redirect stdout & stderr to files", parse::boolean;
}

/// How often a running program is looked at (fio's exec sets this think time).
const POLL_US: u64 = 50_000;

pub struct Exec {
    opts: ExecOpts,
    job: String,
    runtime_us: u64,
    child: Option<Child>,
}

impl Exec {
    /// The arguments with `%r` (runtime in seconds) and `%n` (job name) replaced.
    fn expanded(&self) -> Option<String> {
        self.opts.arguments.as_ref().map(|a| {
            a.replace("%r", &(self.runtime_us / 1_000_000).to_string())
                .replace("%n", &self.job)
        })
    }

    fn program(&self) -> &str {
        self.opts.program.as_deref().unwrap_or("")
    }

    fn start(&mut self) -> io::Result<()> {
        let args = self.expanded().unwrap_or_default();
        let mut cmd = Command::new(self.program());
        cmd.args(args.split(' ').filter(|a| !a.is_empty()));
        if self.opts.std_redirect {
            let out = std::fs::File::create(format!("{}.stdout", self.job))?;
            let err = std::fs::File::create(format!("{}.stderr", self.job))?;
            cmd.stdout(Stdio::from(out)).stderr(Stdio::from(err));
        }
        cmd.stdin(Stdio::null());
        self.child = Some(cmd.spawn()?);
        Ok(())
    }

    /// SIGTERM, up to `grace_time` seconds for the program to exit, then SIGKILL.
    fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
        let end = Instant::now() + Duration::from_secs(self.opts.grace_time as u64);
        while Instant::now() < end {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Whether `prog` names an executable file (directly, or through PATH when it has no `/`).
pub(crate) fn findable(prog: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let ok = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if prog.contains('/') {
        return ok(Path::new(prog));
    }
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| ok(&d.join(prog)))
    })
}

impl EngineDef for Exec {
    const NAME: &'static str = "exec";
    const HELP: &'static str = "Runs a program as the job (program, arguments); no I/O";
    const OPTIONS: &'static [&'static [OptDef]] = &[OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        Exec {
            opts: ExecOpts::from_values(&cfg.values),
            job: cfg.job_name.clone(),
            runtime_us: cfg.runtime_us,
            child: None,
        }
    }
    fn probe(cfg: &EngineConfig) -> Result<(), String> {
        match ExecOpts::from_values(&cfg.values).program {
            None => Err("no program is defined, it is mandatory to define one".into()),
            Some(p) if !findable(&p) => {
                Err(format!("exec: program '{p}' is not an executable file"))
            }
            Some(_) => Ok(()),
        }
    }
}

impl Engine for Exec {
    fn caps(&self) -> Caps {
        Caps {
            syncio: true,
            diskless: true,
            no_fd: true,
            noio: true,
            think_us: POLL_US,
            ..Caps::default()
        }
    }
    fn init(&mut self) -> io::Result<()> {
        if self.opts.program.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no program is defined, it is mandatory to define one",
            ));
        }
        Ok(())
    }
    fn init_notes(&self) -> Vec<String> {
        let raw = self.opts.arguments.as_deref().unwrap_or("(null)");
        let args = self.expanded().unwrap_or_else(|| "(null)".into());
        let (job, prog) = (&self.job, self.program());
        let second = if self.opts.std_redirect {
            format!("{job} : Saving output of {prog} {args} : stdout={job}.stdout stderr={job}.stderr")
        } else {
            format!("{job} : Running {prog} {args}")
        };
        vec![format!("{job} : program={prog}, arguments={raw}"), second]
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        match &mut self.child {
            None => {
                if let Err(e) = self.start() {
                    return Queued::Completed(-(e.raw_os_error().unwrap_or(libc::EIO) as i64));
                }
            }
            Some(c) => {
                // As fio's engine: a poll request waits one period, then looks.
                std::thread::sleep(Duration::from_micros(POLL_US));
                if !matches!(c.try_wait(), Ok(None)) {
                    return Queued::Finished;
                }
            }
        }
        Queued::Completed(io.len as i64)
    }
}

impl Drop for Exec {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(opts: &[(&str, &str)]) -> EngineConfig {
        let mut o = flexio_job::JobOptions::default();
        for (k, v) in opts {
            let row = OPTIONS.iter().find(|r| r.name == *k).unwrap();
            (row.set)(&mut o, Some(v)).unwrap();
        }
        EngineConfig {
            values: o.engine.clone(),
            job_name: "job1".into(),
            runtime_us: 7_000_000,
            ..EngineConfig::default()
        }
    }

    #[test]
    fn substitution_and_notes() {
        let e = Exec::build(&cfg(&[("program", "/bin/echo"), ("arguments", "%r %n x%n")]));
        assert_eq!(e.expanded().unwrap(), "7 job1 xjob1");
        assert_eq!(
            e.init_notes(),
            [
                "job1 : program=/bin/echo, arguments=%r %n x%n",
                "job1 : Saving output of /bin/echo 7 job1 xjob1 : stdout=job1.stdout stderr=job1.stderr"
            ]
        );
        assert!(Exec::probe(&cfg(&[])).is_err());
        assert!(Exec::probe(&cfg(&[("program", "no-such-program-here")])).is_err());
        assert!(Exec::probe(&cfg(&[("program", "sh")])).is_ok());
    }

    #[test]
    fn a_running_program_is_stopped() {
        let mut e = Exec::build(&cfg(&[
            ("program", "sleep"),
            ("arguments", "30"),
            ("grace_time", "0"),
            ("std_redirect", "0"),
        ]));
        e.start().unwrap();
        let t = Instant::now();
        e.stop();
        assert!(e.child.is_none());
        assert!(t.elapsed() < Duration::from_secs(10));
    }
}
