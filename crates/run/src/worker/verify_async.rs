//! `verify_async=N`: N verifier threads check the blocks a job reads back, while the job
//! thread goes on reading (fio's async verify threads). The job thread copies a completed
//! read into a pooled buffer and hands it over with what the check expects; outcomes come
//! back with the buffer (for `verify_dump`) and are reported by the job thread, so the
//! messages, error counting and `verify_fatal` are the same as checking inline. Outcomes
//! are delivered in the order the reads were handed over, whichever thread finishes first,
//! so failures are reported in offset order and the job thread is never more than `limit`
//! checks ahead of the oldest one not yet reported: a failure under `verify_fatal` stops
//! the job within `limit` reads of the failing one, however the threads are scheduled.
//! Buffers are reused. `verify_async_cpus` pins the verifier threads (each thread sets its own CPU
//! affinity before its first check; a refusal fails the job before any I/O).

use crate::verify::format::{Expect, Place};
use crate::verify::{Format, Mismatch};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

struct Work {
    seq: u64,
    buf: Vec<u8>,
    offset: u64,
    file: u32,
    exp: Expect,
    /// A read-back of a logged write (fio's flags 88) rather than a plain read.
    phase: bool,
}

/// One check done.
pub struct Done {
    pub buf: Vec<u8>,
    pub file: u32,
    pub mismatch: Option<Box<Mismatch>>,
    /// The check panicked (a flexio bug): the job fails rather than waiting for an outcome
    /// that would never come.
    pub panicked: bool,
}

pub struct AsyncVerifier {
    tx: Option<mpsc::Sender<Work>>,
    rx: mpsc::Receiver<(u64, Done)>,
    threads: Vec<std::thread::JoinHandle<()>>,
    pool: Vec<Vec<u8>>,
    /// The sequence number the next submission gets.
    next: u64,
    /// The outcomes from the oldest undelivered submission on, by sequence number: `None`
    /// while that check is still being done.
    held: std::collections::VecDeque<Option<Done>>,
    limit: usize,
}

impl AsyncVerifier {
    /// `threads` verifier threads checking with `fmt`, on the CPUs `cpus` when given;
    /// `paths` names the job's files; `limit` bounds the checks outstanding.
    pub fn new(
        threads: u32,
        cpus: Option<&[usize]>,
        fmt: &Format,
        paths: Vec<String>,
        limit: usize,
    ) -> std::io::Result<AsyncVerifier> {
        let (tx, work_rx) = mpsc::channel::<Work>();
        let (done_tx, rx) = mpsc::channel::<(u64, Done)>();
        let (ready_tx, ready_rx) = mpsc::channel::<std::io::Result<()>>();
        let work_rx = Arc::new(Mutex::new(work_rx));
        let paths = Arc::new(paths);
        let cpus: Option<Arc<[usize]>> = cpus.map(Arc::from);
        let mut handles = Vec::new();
        for i in 0..threads.max(1) {
            let (work_rx, done_tx) = (Arc::clone(&work_rx), done_tx.clone());
            let (fmt, paths) = (fmt.clone(), Arc::clone(&paths));
            let (cpus, ready_tx) = (cpus.clone(), ready_tx.clone());
            let h = std::thread::Builder::new()
                .name(format!("flexio-verify-{i}"))
                .spawn(move || {
                    let placed = match cpus.as_deref() {
                        Some(c) => pin(c),
                        None => Ok(()),
                    };
                    let ok = placed.is_ok();
                    let _ = ready_tx.send(placed);
                    drop(ready_tx);
                    if ok {
                        serve(&work_rx, &done_tx, &fmt, &paths);
                    }
                })?;
            handles.push(h);
        }
        drop(ready_tx);
        let mut v = AsyncVerifier {
            tx: Some(tx),
            rx,
            threads: handles,
            pool: Vec::new(),
            next: 0,
            held: std::collections::VecDeque::new(),
            limit: limit.max(1),
        };
        // Every thread placed before the job starts: a refusal fails the job up front.
        for _ in 0..v.threads.len() {
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    v.tx = None;
                    return Err(e);
                }
                Err(_) => {
                    v.tx = None;
                    return Err(std::io::Error::other("a verifier thread ended at start"));
                }
            }
        }
        Ok(v)
    }
    /// Whether another check can be handed over without waiting for the oldest one.
    pub fn has_room(&self) -> bool {
        self.held.len() < self.limit
    }

    /// Hand over a copy of `data` read at `offset` of file `file`.
    pub fn submit(&mut self, data: &[u8], offset: u64, file: u32, exp: Expect, phase: bool) {
        let mut buf = self.pool.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(data);
        let Some(tx) = &self.tx else { return };
        let w = Work {
            seq: self.next,
            buf,
            offset,
            file,
            exp,
            phase,
        };
        if tx.send(w).is_ok() {
            self.next += 1;
            self.held.push_back(None);
        }
    }

    /// The oldest outstanding check's outcome, once it is done: waiting for it when
    /// `wait` (and one is outstanding). Outcomes come out in submission order.
    pub fn next_done(&mut self, wait: bool) -> Option<Done> {
        loop {
            match self.held.front() {
                None => return None,
                Some(Some(_)) => return self.held.pop_front().flatten(),
                Some(None) => {}
            }
            let got = if wait {
                self.rx.recv().ok()
            } else {
                self.rx.try_recv().ok()
            };
            let Some((seq, d)) = got else {
                if wait {
                    // Every verifier thread is gone: nothing more will come back.
                    self.held.clear();
                }
                return None;
            };
            let oldest = self.next - self.held.len() as u64;
            if let Some(at) = seq
                .checked_sub(oldest)
                .and_then(|i| self.held.get_mut(i as usize))
            {
                *at = Some(d);
            }
        }
    }

    /// Give a finished check's buffer back to the pool.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        self.pool.push(buf);
    }
}

/// Pin the calling verifier thread to `cpus` (verify_async_cpus).
fn pin(cpus: &[usize]) -> std::io::Result<()> {
    let mut set = flexio_engine::os::thread::CpuSet::new();
    for c in cpus {
        set.set(*c);
    }
    flexio_engine::os::thread::sched_setaffinity(None, &set).map_err(|e| {
        std::io::Error::new(
            std::io::Error::from(e).kind(),
            format!("verify thread affinity failed: cannot set CPU affinity to {cpus:?}: {e}"),
        )
    })
}

/// The offset at which a unit test's check panics.
#[cfg(test)]
const PANIC_AT: u64 = u64::MAX - 4095;

/// A verifier thread's loop: check what comes until the job thread hangs up.
fn serve(
    work_rx: &Mutex<mpsc::Receiver<Work>>,
    done_tx: &mpsc::Sender<(u64, Done)>,
    fmt: &Format,
    paths: &[String],
) {
    loop {
        let w = match work_rx.lock() {
            Ok(rx) => match rx.recv() {
                Ok(w) => w,
                Err(_) => return,
            },
            Err(_) => return,
        };
        let (seq, mut buf) = (w.seq, w.buf);
        let file = paths.get(w.file as usize).map(String::as_str);
        let place = Place {
            file: file.unwrap_or(""),
            flags: if w.phase { "88" } else { "8" },
        };
        // A check that panics still answers, so the job thread is never left waiting for
        // its outcome (the other verifier threads keep the channel open).
        let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            #[cfg(test)]
            if w.offset == PANIC_AT {
                panic!("a check made to panic by a test");
            }
            fmt.check(&mut buf, w.offset, &w.exp, &place).err()
        }));
        let panicked = checked.is_err();
        let done = Done {
            buf,
            file: w.file,
            mismatch: checked.unwrap_or(None),
            panicked,
        };
        if done_tx.send((seq, done)).is_err() {
            return;
        }
    }
}

impl Drop for AsyncVerifier {
    fn drop(&mut self) {
        self.tx = None;
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::format::Stamp;
    use crate::verify::{Generation, Kind};

    fn block(fmt: &Format, offset: u64, n: u64) -> Vec<u8> {
        let mut b = vec![0u8; 4096];
        let st = Stamp {
            seed: 100 + n,
            numberio: n,
            time: (1, 2),
        };
        fmt.fill(&mut b, offset, st);
        b
    }

    #[test]
    fn checks_come_back_with_their_buffers_and_outcomes() {
        let fmt = Format::new(Generation::Latest, Kind::Crc32c, 1);
        let paths: Vec<String> = (0..8).map(|i| format!("file{i}")).collect();
        let mut v = AsyncVerifier::new(3, None, &fmt, paths, 64).unwrap();
        // Files 2 and 5 get a flipped data byte; file 5's is a read-back (flags 88).
        for f in 0..8u32 {
            let off = u64::from(f) * 4096;
            let mut b = block(&fmt, off, u64::from(f));
            if f == 2 || f == 5 {
                b[1000] ^= 0xff;
            }
            v.submit(&b, off, f, Expect::default(), f == 5);
        }
        let mut bad = Vec::new();
        for f in 0..8 {
            let d = v.next_done(true).expect("a check comes back");
            assert_eq!(d.file, f, "outcomes in submission order");
            assert_eq!(d.buf.len(), 4096);
            if let Some(m) = d.mismatch {
                assert_eq!(m.file, format!("file{}", d.file));
                let want = if d.file == 5 { "flags=88)" } else { "flags=8)" };
                assert!(m.fio_lines[0].ends_with(want), "{}", m.fio_lines[0]);
                assert!(m.fio_lines[0].starts_with("crc32c: verify failed at file file"));
                bad.push(d.file);
            }
            v.recycle(d.buf);
        }
        assert_eq!(bad, [2, 5]);
        assert!(v.next_done(true).is_none(), "nothing outstanding: no wait");
        assert_eq!(v.pool.len(), 8);
    }

    #[test]
    fn at_most_limit_checks_are_outstanding_and_buffers_are_reused() {
        let fmt = Format::new(Generation::Fio333, Kind::Md5, 1);
        let mut v = AsyncVerifier::new(1, None, &fmt, vec!["f".into()], 2).unwrap();
        let b = block(&fmt, 0, 1);
        assert!(v.has_room());
        v.submit(&b, 0, 0, Expect::default(), false);
        assert!(v.has_room());
        v.submit(&b, 0, 0, Expect::default(), false);
        assert!(!v.has_room(), "limit reached");
        let d = v.next_done(true).unwrap();
        assert!(d.mismatch.is_none());
        assert!(v.has_room());
        let ptr = d.buf.as_ptr();
        v.recycle(d.buf);
        // The next submission copies into the recycled buffer rather than a new one.
        v.submit(&b, 0, 0, Expect::default(), false);
        assert!(v.pool.is_empty());
        let mut seen = Vec::new();
        while let Some(d) = v.next_done(true) {
            assert!(d.mismatch.is_none());
            seen.push(d.buf.as_ptr());
        }
        assert_eq!(seen.len(), 2);
        assert!(seen.contains(&ptr));
    }

    #[test]
    fn a_slow_oldest_check_holds_back_the_later_ones_and_the_room() {
        let fmt = Format::new(Generation::Latest, Kind::Crc32c, 1);
        let mut v = AsyncVerifier::new(2, None, &fmt, vec!["f".into()], 3).unwrap();
        // The first check is of 16 MiB (damaged), the next two of 4 KiB: the second thread
        // finishes those long before the first is done.
        let mut big = vec![0u8; 16 << 20];
        fmt.fill(
            &mut big,
            0,
            Stamp {
                seed: 7,
                numberio: 0,
                time: (1, 2),
            },
        );
        big[5000] ^= 1;
        v.submit(&big, 0, 0, Expect::default(), false);
        for n in 1..3u64 {
            let b = block(&fmt, n * 4096, n);
            v.submit(&b, n * 4096, 0, Expect::default(), false);
        }
        assert!(!v.has_room(), "three outstanding");
        let first = v.next_done(true).unwrap();
        assert_eq!(first.buf.len(), 16 << 20, "the oldest comes out first");
        assert!(first.mismatch.is_some());
        assert!(v.has_room());
        for _ in 1..3 {
            let d = v.next_done(true).unwrap();
            assert_eq!((d.buf.len(), d.mismatch.is_none()), (4096, true));
        }
        assert!(v.next_done(false).is_none());
    }

    #[test]
    fn a_limit_of_zero_still_allows_one_check() {
        let fmt = Format::new(Generation::Latest, Kind::Crc32c, 1);
        let mut v = AsyncVerifier::new(0, None, &fmt, vec!["f".into()], 0).unwrap();
        assert!(v.has_room());
        v.submit(&block(&fmt, 0, 1), 0, 0, Expect::default(), false);
        assert!(!v.has_room());
        // Zero threads means one verifier thread: the check is done.
        assert!(v.next_done(true).unwrap().mismatch.is_none());
    }

    #[test]
    fn a_check_that_panics_still_answers_and_the_later_ones_follow() {
        let fmt = Format::new(Generation::Latest, Kind::Crc32c, 1);
        let paths = vec!["f".to_string()];
        let mut v = AsyncVerifier::new(2, None, &fmt, paths, 8).unwrap();
        v.submit(&block(&fmt, 0, 0), 0, 0, Expect::default(), false);
        v.submit(&[0u8; 4096], PANIC_AT, 0, Expect::default(), false);
        v.submit(&block(&fmt, 4096, 1), 4096, 0, Expect::default(), false);
        let got: Vec<(bool, bool)> = std::iter::from_fn(|| v.next_done(true))
            .map(|d| (d.panicked, d.mismatch.is_some()))
            .collect();
        assert_eq!(got, [(false, false), (true, false), (false, false)]);
    }
}
