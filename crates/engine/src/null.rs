//! `null`: transfers nothing. At queue depth 1 every request completes in `queue`; deeper,
//! requests are queued and a commit "completes" the whole batch (as fio's null engine),
//! which exercises the asynchronous path of the core at no device cost.

use crate::{Caps, Completion, Engine, IoReq, Queued};
use std::io;

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

impl Engine for Null {
    fn name(&self) -> &'static str {
        "null"
    }
    fn caps(&self) -> Caps {
        Caps {
            syncio: self.depth == 1,
            diskless: true,
            has_commit: true,
            trim: true,
            no_fd: true,
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
