//! `null`: transfers nothing. At queue depth 1 every request completes in `queue`; deeper,
//! requests are queued and a commit "completes" the whole batch (as fio's null engine),
//! which exercises the asynchronous path of the core at no device cost.

use crate::api::{EngineDef, Caps, Completion, Engine, EngineConfig, IoReq, Queued};
use flexio_job::engine_opts::parse;
use flexio_job::table::Kind;
use std::io;

flexio_job::engine_options! {
    /// The null engine's options (flexio's own test aid).
    pub struct NullOpts; rows OPTIONS;
    /// (duration ns, I/O number): sleep once inside that I/O.
    null_stall: Option<(u64, u64)> = None,
        "null_stall", Kind::Str, "",
        "flexio test aid: stall one I/O for this long, <time>[@<I/O number, default 1000>]",
        |v, _| {
            let s = flexio_job::table::req(v)?;
            let (t, n) = match s.split_once('@') {
                Some((t, n)) => (
                    t,
                    n.parse::<u64>().map_err(|_| format!("'{n}' is not an I/O number"))?,
                ),
                None => (s, 1000),
            };
            Ok(Some((parse::time_us(Some(t), false)? * 1000, n.max(1))))
        };
}

pub struct Null {
    depth: usize,
    /// (duration ns, I/O number): sleep once inside that I/O (null_stall test aid).
    stall: Option<(u64, u64)>,
    count: u64,
    queued: Vec<Completion>,
    events: Vec<Completion>,
}

impl Null {
    pub fn new(depth: usize) -> Self {
        let d = depth.max(1);
        Null {
            depth: d,
            stall: None,
            count: 0,
            queued: Vec::with_capacity(d),
            events: Vec::with_capacity(d),
        }
    }

    pub fn with_stall(mut self, stall: Option<(u64, u64)>) -> Self {
        self.stall = stall;
        self
    }
}

impl EngineDef for Null {
    const NAME: &'static str = "null";
    const HELP: &'static str = "Doesn't transfer any data, just pretends to (tool overhead)";
    const OPTIONS: &'static [&'static [flexio_job::table::OptDef]] = &[OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        Null::new(cfg.iodepth as usize).with_stall(NullOpts::from_values(&cfg.values).null_stall)
    }
}

impl Engine for Null {
    fn caps(&self) -> Caps {
        Caps {
            syncio: self.depth == 1,
            diskless: true,
            has_commit: true,
            queue_completes: self.depth == 1,
            trim: true,
            no_fd: true,
            measures_tool: true,
            fake_io: true,
            offload: true,
            // fsync=N / fdatasync=N / sync_file_range: requests like the others, completed
            // (or queued and committed) at no cost and counted, as fio's null engine does.
            diskless_syncs: true,
            sync_range: true,
            ..Caps::default()
        }
    }
    #[inline]
    fn queue(&mut self, io: &IoReq) -> Queued {
        if let Some((ns, nth)) = self.stall {
            self.count += 1;
            if self.count == nth {
                std::thread::sleep(std::time::Duration::from_nanos(ns));
                self.stall = None;
            }
        }
        if self.depth == 1 {
            return Queued::Completed(io.len as i64);
        }
        if !self.events.is_empty() {
            return Queued::Busy;
        }
        self.queued.push(Completion {
            idx: io.idx,
            res: io.len as i64,
        });
        Queued::Queued
    }
    fn commit(&mut self) -> io::Result<usize> {
        if !self.events.is_empty() {
            return Ok(0);
        }
        let n = self.queued.len();
        std::mem::swap(&mut self.queued, &mut self.events);
        Ok(n)
    }
    fn reap(&mut self, min: usize, _max: usize, out: &mut Vec<Completion>) -> io::Result<usize> {
        if min == 0 && self.events.is_empty() {
            return Ok(0);
        }
        let n = self.events.len();
        out.append(&mut self.events);
        Ok(n)
    }
}
