//! `io_submit_mode=offload`: the job thread prepares requests and hands them to submitter
//! threads, which issue them, as fio's workqueue does: one submitter per request the job
//! keeps in flight (iodepth), each with its own instance of the engine built from the job's
//! configuration, stamping the issue and completion of its request itself. The job thread
//! keeps everything else (files, statistics, pacing), so a request's total latency (from
//! preparation) includes the hand-over, its completion latency does not.
//!
//! To the job loop this part is an engine whose requests complete later, in `reap`; the
//! loop takes each request's own stamps from [`Engine::stamps`]. Only engines whose
//! requests complete inside `queue` and need nothing but the request (`Caps::offload`) are
//! offloaded. The submitters are threads of the job thread, so they share its private
//! descriptor table: the descriptors in the requests are the job's own open files.
//!
//! Requests and completions pass through two queues behind mutexes, allocated once for
//! the job's depth (a lock per request: the price of offloading, and only for jobs that
//! ask for it).

use crate::clock::Clock;
use flexio_engine::{Caps, Completion, Engine, EngineConfig, FileInfo, IoReq, Queued};
use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};

/// Builds an engine instance for a submitter thread.
pub type Build = fn(&EngineConfig) -> Box<dyn Engine>;

#[derive(Clone, Copy)]
struct Done {
    idx: u32,
    res: i64,
    issue_ns: u64,
    end_ns: u64,
}

#[derive(Default)]
struct Queues {
    todo: VecDeque<IoReq>,
    done: Vec<Done>,
    stop: bool,
}

#[derive(Default)]
struct Shared {
    q: Mutex<Queues>,
    /// A request to issue (or stop).
    work: Condvar,
    /// A completion.
    finished: Condvar,
}

/// The capabilities the job loop sees with its requests offloaded, from the engine's:
/// requests complete later, in reap, and their submission is not measured (fio's
/// offloaded requests have no slat).
pub fn loop_caps(engine: Caps) -> Caps {
    Caps {
        syncio: false,
        has_commit: false,
        no_slat: true,
        ..engine
    }
}

pub struct Offload {
    inner: Box<dyn Engine>,
    shared: Arc<Shared>,
    submitters: Vec<std::thread::JoinHandle<()>>,
    /// Issue and completion stamps of each slot's last completed request.
    stamps: Vec<(u64, u64)>,
}

impl Offload {
    /// Offload `inner`'s requests to `threads` submitters, each with an engine from
    /// `build`. A submitter that cannot start its engine fails every request it takes with
    /// that error.
    pub fn new(
        inner: Box<dyn Engine>,
        build: Build,
        cfg: &EngineConfig,
        threads: u32,
        depth: usize,
        clock: Clock,
    ) -> io::Result<Offload> {
        let shared = Arc::new(Shared {
            q: Mutex::new(Queues {
                todo: VecDeque::with_capacity(depth),
                done: Vec::with_capacity(depth),
                stop: false,
            }),
            ..Default::default()
        });
        let mut submitters = Vec::new();
        // Each submitter has one request at a time: its engine is built for depth 1.
        let mut one = cfg.clone();
        one.iodepth = 1;
        for i in 0..threads.max(1) {
            let sh = shared.clone();
            let cfg = one.clone();
            let t = std::thread::Builder::new()
                .name(format!("flexio-sub{i}"))
                .spawn(move || serve(build, &cfg, clock, &sh))?;
            submitters.push(t);
        }
        Ok(Offload {
            inner,
            shared,
            submitters,
            stamps: vec![(0, 0); depth],
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queues> {
        self.shared.q.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A submitter: take a request, issue it on this thread's engine, hand back the result
/// with the times it was issued and completed.
fn serve(build: Build, cfg: &EngineConfig, clock: Clock, sh: &Shared) {
    let mut engine = build(cfg);
    let ready = engine
        .init()
        .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO));
    loop {
        let req = {
            let mut q = sh.q.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(r) = q.todo.pop_front() {
                    break r;
                }
                if q.stop {
                    return;
                }
                q = sh.work.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        let issue_ns = clock.now();
        let res = match ready {
            Err(errno) => -(errno as i64),
            Ok(()) => match engine.queue(&req) {
                Queued::Completed(r) => r,
                // Caps::offload engines complete in the call; anything else is refused.
                _ => -(libc::EINVAL as i64),
            },
        };
        let end_ns = clock.now();
        let mut q = sh.q.lock().unwrap_or_else(|e| e.into_inner());
        q.done.push(Done {
            idx: req.idx,
            res,
            issue_ns,
            end_ns,
        });
        drop(q);
        sh.finished.notify_one();
    }
}

impl Drop for Offload {
    fn drop(&mut self) {
        self.lock().stop = true;
        self.shared.work.notify_all();
        for t in self.submitters.drain(..) {
            let _ = t.join();
        }
    }
}

impl Engine for Offload {
    fn caps(&self) -> Caps {
        loop_caps(self.inner.caps())
    }
    fn init(&mut self) -> io::Result<()> {
        self.inner.init()
    }
    fn setup(&mut self, paths: &[&Path]) -> io::Result<()> {
        self.inner.setup(paths)
    }
    fn lost(&self) -> [u64; 3] {
        self.inner.lost()
    }
    fn init_notes(&self) -> Vec<String> {
        self.inner.init_notes()
    }
    fn post_init(&mut self, bufs: &flexio_engine::buffer::IoBuffers) -> io::Result<()> {
        self.inner.post_init(bufs)
    }
    fn open_file(&mut self, file: u32, f: &FileInfo) -> io::Result<()> {
        self.inner.open_file(file, f)
    }
    fn close_file(&mut self, file: u32) -> io::Result<()> {
        self.inner.close_file(file)
    }
    fn wrap_up(&mut self) -> io::Result<()> {
        self.inner.wrap_up()
    }
    fn failed_op(&self) -> Option<String> {
        self.inner.failed_op()
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        self.lock().todo.push_back(*io);
        self.shared.work.notify_one();
        Queued::Queued
    }
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<usize> {
        let mut q = self.shared.q.lock().unwrap_or_else(|e| e.into_inner());
        while q.done.len() < min {
            q = self
                .shared
                .finished
                .wait(q)
                .unwrap_or_else(|e| e.into_inner());
        }
        let n = q.done.len().min(max.max(1));
        for d in q.done.drain(..n) {
            if let Some(s) = self.stamps.get_mut(d.idx as usize) {
                *s = (d.issue_ns, d.end_ns);
            }
            out.push(Completion {
                idx: d.idx,
                res: d.res,
            });
        }
        Ok(n)
    }
    fn stamps(&self, idx: u32) -> Option<(u64, u64)> {
        self.stamps.get(idx as usize).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synchronous engine that answers with the request's length after a short wait.
    struct Echo;
    impl Engine for Echo {
        fn caps(&self) -> Caps {
            Caps {
                syncio: true,
                offload: true,
                ..Caps::default()
            }
        }
        fn queue(&mut self, io: &IoReq) -> Queued {
            std::thread::sleep(std::time::Duration::from_millis(2));
            Queued::Completed(io.len as i64)
        }
    }

    fn req(idx: u32, len: usize) -> IoReq {
        IoReq {
            idx,
            op: flexio_engine::Op::Read,
            file: 0,
            fd: -1,
            offset: 0,
            buf: std::ptr::null_mut(),
            len,
            ioprio: 0,
            sync_flags: 0,
        }
    }

    fn cfg() -> EngineConfig {
        crate::plan::engine_config(
            &flexio_job::JobOptions::default(),
            4,
            1,
            &[0; flexio_workload::rng::slot::COUNT],
        )
    }

    #[test]
    fn submitters_issue_requests_concurrently_with_their_own_stamps() {
        let clock = Clock::new();
        let mut o = Offload::new(Box::new(Echo), |_| Box::new(Echo), &cfg(), 4, 4, clock).unwrap();
        assert!(!o.caps().syncio && o.caps().no_slat && o.caps().offload);
        let t0 = clock.now();
        for i in 0..4 {
            assert_eq!(o.queue(&req(i, 100 + i as usize)), Queued::Queued);
        }
        let mut got = Vec::new();
        while got.len() < 4 {
            o.reap(1, 4, &mut got).unwrap();
        }
        let elapsed = clock.now() - t0;
        got.sort_by_key(|c| c.idx);
        for c in &got {
            assert_eq!(c.res, 100 + c.idx as i64);
            let (issue, end) = o.stamps(c.idx).unwrap();
            assert!(t0 <= issue && issue < end, "{issue} {end}");
        }
        // Four 2 ms requests on four submitters overlap.
        assert!(elapsed < 7_000_000, "took {elapsed} ns");
    }

    #[test]
    fn a_submitter_that_cannot_start_its_engine_fails_the_requests() {
        struct Broken;
        impl Engine for Broken {
            fn caps(&self) -> Caps {
                Caps::default()
            }
            fn init(&mut self) -> io::Result<()> {
                Err(io::Error::from_raw_os_error(libc::ENODEV))
            }
            fn queue(&mut self, _: &IoReq) -> Queued {
                Queued::Completed(0)
            }
        }
        let mut o = Offload::new(
            Box::new(Echo),
            |_| Box::new(Broken),
            &cfg(),
            1,
            1,
            Clock::new(),
        )
        .unwrap();
        o.queue(&req(0, 10));
        let mut got = Vec::new();
        o.reap(1, 1, &mut got).unwrap();
        assert_eq!(got[0].res, -(libc::ENODEV as i64));
    }
}
