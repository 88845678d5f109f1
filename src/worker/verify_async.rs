//! `verify_async=N`: N verifier threads check the blocks a job reads back, while the job
//! thread goes on reading (fio's async verify threads). The job thread copies a completed
//! read into a pooled buffer and hands it over with what the check expects; outcomes come
//! back with the buffer (for `verify_dump`) and are reported by the job thread, so the
//! messages, error counting and `verify_fatal` are the same as checking inline. Buffers
//! are reused: at most `limit` checks are outstanding, after which the job thread waits
//! for one.

use crate::verify::format::{Expect, Place};
use crate::verify::{Format, Mismatch};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

struct Work {
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
}

pub struct AsyncVerifier {
    tx: Option<mpsc::Sender<Work>>,
    rx: mpsc::Receiver<Done>,
    threads: Vec<std::thread::JoinHandle<()>>,
    pool: Vec<Vec<u8>>,
    pending: usize,
    limit: usize,
}

impl AsyncVerifier {
    /// `threads` verifier threads checking with `fmt`; `paths` names the job's files;
    /// `limit` bounds the checks outstanding.
    pub fn new(
        threads: u32,
        fmt: &Format,
        paths: Vec<String>,
        limit: usize,
    ) -> std::io::Result<AsyncVerifier> {
        let (tx, work_rx) = mpsc::channel::<Work>();
        let (done_tx, rx) = mpsc::channel::<Done>();
        let work_rx = Arc::new(Mutex::new(work_rx));
        let paths = Arc::new(paths);
        let mut handles = Vec::new();
        for i in 0..threads.max(1) {
            let (work_rx, done_tx) = (Arc::clone(&work_rx), done_tx.clone());
            let (fmt, paths) = (fmt.clone(), Arc::clone(&paths));
            let h = std::thread::Builder::new()
                .name(format!("flexio-verify-{i}"))
                .spawn(move || loop {
                    let w = match work_rx.lock() {
                        Ok(rx) => match rx.recv() {
                            Ok(w) => w,
                            Err(_) => return,
                        },
                        Err(_) => return,
                    };
                    let mut buf = w.buf;
                    let file = paths.get(w.file as usize).map(String::as_str);
                    let place = Place {
                        file: file.unwrap_or(""),
                        flags: if w.phase { "88" } else { "8" },
                    };
                    let mismatch = fmt.check(&mut buf, w.offset, &w.exp, &place).err();
                    let done = Done {
                        buf,
                        file: w.file,
                        mismatch,
                    };
                    if done_tx.send(done).is_err() {
                        return;
                    }
                })?;
            handles.push(h);
        }
        Ok(AsyncVerifier {
            tx: Some(tx),
            rx,
            threads: handles,
            pool: Vec::new(),
            pending: 0,
            limit: limit.max(1),
        })
    }

    /// Whether another check can be handed over without waiting for one.
    pub fn has_room(&self) -> bool {
        self.pending < self.limit
    }

    /// Hand over a copy of `data` read at `offset` of file `file`.
    pub fn submit(&mut self, data: &[u8], offset: u64, file: u32, exp: Expect, phase: bool) {
        let mut buf = self.pool.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(data);
        let Some(tx) = &self.tx else { return };
        let w = Work {
            buf,
            offset,
            file,
            exp,
            phase,
        };
        if tx.send(w).is_ok() {
            self.pending += 1;
        }
    }

    /// The next finished check: waiting for one when `wait` (and one is outstanding).
    pub fn next_done(&mut self, wait: bool) -> Option<Done> {
        if self.pending == 0 {
            return None;
        }
        let d = if wait {
            self.rx.recv().ok()
        } else {
            self.rx.try_recv().ok()
        };
        if d.is_some() {
            self.pending -= 1;
        } else if wait {
            // Every verifier thread is gone: nothing more will come back.
            self.pending = 0;
        }
        d
    }

    /// Give a finished check's buffer back to the pool.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        self.pool.push(buf);
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
