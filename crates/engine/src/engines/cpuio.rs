//! `cpuio`: moves no data, burns CPU. Each request spins for `cpuchunks` µs (a bare loop,
//! or `cpumode=qsort`: sorting a scrambled array over and over until the chunk is used),
//! and the job then pauses `cpuchunks × (100 − cpuload) / cpuload` µs (the engine's think
//! time), so the job uses `cpuload` percent of one CPU. The job needs no file or size and
//! runs until its runtime; with `exit_on_io_done=1` it ends once the stonewall segment's
//! I/O jobs (those on other engines) have finished, as fio's engine does.

use crate::api::{Caps, Engine, EngineConfig, EngineDef, IoReq, Queued, IO_JOBS_PENDING};
use flexio_job::engine_opts::parse;
use flexio_job::table::{Kind, OptDef};
use std::io;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How a chunk burns its CPU time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuMode {
    Noop,
    Qsort,
}

flexio_job::engine_options! {
    /// cpuio's options.
    pub struct CpuOpts; rows OPTIONS;
    /// Percentage of one CPU to use (mandatory; above 100 counts as 100).
    cpuload: u32 = 0,
        "cpuload", Kind::Int { min: 0, max: u32::MAX as i64 }, "",
        "Use this percentage of CPU",
        |v, kb| parse::int(v, kb, 0, u32::MAX as i64).map(|n| n as u32);
    /// Length of one burn cycle, µs.
    cpuchunks: u32 = 50_000,
        "cpuchunks", Kind::Int { min: 0, max: u32::MAX as i64 }, "50000",
        "Length of the CPU burn cycles (usecs)",
        |v, kb| parse::int(v, kb, 0, u32::MAX as i64).map(|n| n as u32);
    /// Bare loop or qsort.
    cpumode: CpuMode = CpuMode::Noop,
        "cpumode", Kind::Choice(&[
            ("noop", "do nothing"),
            ("qsort", "QuickSort a random array"),
        ]), "noop", "Stress mode",
        |v, _| parse::choice(v, &[("noop", CpuMode::Noop), ("qsort", CpuMode::Qsort)]);
    /// End when the I/O jobs are done.
    exit_on_io_done: bool = false,
        "exit_on_io_done", Kind::Bool, "0", "Exit when IO threads finish", parse::boolean;
}

/// Elements sorted per qsort round (small enough to stay in the L1/L2 caches).
const QSORT_LEN: usize = 4096;

pub struct CpuIo {
    opts: CpuOpts,
    job: String,
    /// The qsort working array (allocated once; rescrambled before each sort).
    work: Vec<u64>,
    state: u64,
}

impl CpuIo {
    fn load(&self) -> u32 {
        self.opts.cpuload.min(100)
    }

    /// Spin for `us` microseconds.
    fn burn_noop(us: u64) {
        let end = Instant::now() + Duration::from_micros(us);
        while Instant::now() < end {
            std::hint::spin_loop();
        }
    }

    /// Sort a freshly scrambled array until `us` microseconds are used.
    fn burn_qsort(&mut self, us: u64) {
        let end = Instant::now() + Duration::from_micros(us);
        loop {
            for x in self.work.iter_mut() {
                // xorshift64: cheap, deterministic scrambling.
                self.state ^= self.state << 13;
                self.state ^= self.state >> 7;
                self.state ^= self.state << 17;
                *x = self.state;
            }
            self.work.sort_unstable();
            std::hint::black_box(&self.work);
            if Instant::now() >= end {
                break;
            }
        }
    }
}

impl EngineDef for CpuIo {
    const NAME: &'static str = "cpuio";
    const HELP: &'static str = "Burns CPU cycles (cpuload percent in cpuchunks µs cycles); no I/O";
    const OPTIONS: &'static [&'static [OptDef]] = &[OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        let opts = CpuOpts::from_values(&cfg.values);
        let work = if opts.cpumode == CpuMode::Qsort {
            vec![0; QSORT_LEN]
        } else {
            Vec::new()
        };
        CpuIo {
            opts,
            job: cfg.job_name.clone(),
            work,
            state: 0x9e37_79b9_7f4a_7c15,
        }
    }
    fn probe(cfg: &EngineConfig) -> Result<(), String> {
        if CpuOpts::from_values(&cfg.values).cpuload == 0 {
            return Err("cpu thread needs rate (cpuload=)".into());
        }
        Ok(())
    }
}

impl Engine for CpuIo {
    fn caps(&self) -> Caps {
        let load = self.load().max(1) as u64;
        Caps {
            syncio: true,
            diskless: true,
            no_fd: true,
            noio: true,
            think_us: self.opts.cpuchunks as u64 * (100 - load) / load,
            ..Caps::default()
        }
    }
    fn init(&mut self) -> io::Result<()> {
        if self.opts.cpuload == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cpu thread needs rate (cpuload=)",
            ));
        }
        Ok(())
    }
    fn init_notes(&self) -> Vec<String> {
        let mode = match self.opts.cpumode {
            CpuMode::Noop => "noop",
            CpuMode::Qsort => "qsort",
        };
        vec![format!(
            "{} ({mode}): ioengine=cpuio, cpuload={}, cpucycle={}",
            self.job,
            self.load(),
            self.opts.cpuchunks
        )]
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        if self.opts.exit_on_io_done && IO_JOBS_PENDING.load(Ordering::Relaxed) == 0 {
            return Queued::Finished;
        }
        let us = self.opts.cpuchunks as u64;
        match self.opts.cpumode {
            CpuMode::Noop => Self::burn_noop(us),
            CpuMode::Qsort => self.burn_qsort(us),
        }
        Queued::Completed(io.len as i64)
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
            job_name: "c".into(),
            ..EngineConfig::default()
        }
    }

    #[test]
    fn think_time_gives_the_load() {
        let e = CpuIo::build(&cfg(&[("cpuload", "25"), ("cpuchunks", "1000")]));
        assert_eq!(e.caps().think_us, 3000);
        let e = CpuIo::build(&cfg(&[("cpuload", "250")]));
        assert_eq!(e.caps().think_us, 0, "load above 100 counts as 100");
        assert!(CpuIo::probe(&cfg(&[])).is_err(), "cpuload is mandatory");
        let e = CpuIo::build(&cfg(&[("cpuload", "50"), ("cpumode", "qsort")]));
        assert_eq!(
            e.init_notes(),
            ["c (qsort): ioengine=cpuio, cpuload=50, cpucycle=50000"]
        );
    }

    #[test]
    fn a_chunk_takes_its_time() {
        for mode in ["noop", "qsort"] {
            let mut e = CpuIo::build(&cfg(&[
                ("cpuload", "100"),
                ("cpuchunks", "2000"),
                ("cpumode", mode),
            ]));
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
            let t = Instant::now();
            assert_eq!(e.queue(&req), Queued::Completed(4096));
            assert!(t.elapsed() >= Duration::from_micros(2000), "{mode}");
        }
    }
}
