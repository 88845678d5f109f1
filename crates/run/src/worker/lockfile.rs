//! `lockfile`: requests to a file are serialized across the jobs that use it (by path, as
//! fio shares one lock per file name): `exclusive` lets one request at a time through,
//! `readwrite` lets reads share and writes go alone. The lock is held from just before a
//! request is queued until the engine returns from queueing it (for synchronous engines,
//! the whole transfer).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

#[derive(Default)]
struct State {
    readers: u32,
    writer: bool,
}

#[derive(Default)]
pub struct FileLock {
    state: Mutex<State>,
    cv: Condvar,
}

impl FileLock {
    /// Take the lock: shared for `shared`, else exclusive.
    pub fn lock(&self, shared: bool) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let free = if shared {
                !s.writer
            } else {
                !s.writer && s.readers == 0
            };
            if free {
                break;
            }
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if shared {
            s.readers += 1;
        } else {
            s.writer = true;
        }
    }

    pub fn unlock(&self, shared: bool) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if shared {
            s.readers = s.readers.saturating_sub(1);
        } else {
            s.writer = false;
        }
        drop(s);
        self.cv.notify_all();
    }
}

static LOCKS: Mutex<Option<HashMap<PathBuf, Arc<FileLock>>>> = Mutex::new(None);

/// The lock of a file, shared by every job that names it.
pub fn of(path: &Path) -> Arc<FileLock> {
    let mut g = LOCKS.lock().unwrap_or_else(|e| e.into_inner());
    g.get_or_insert_with(HashMap::new)
        .entry(path.to_path_buf())
        .or_default()
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn writers_go_alone_and_readers_together() {
        let l = of(Path::new("/flexio-test/lock"));
        assert!(Arc::ptr_eq(&l, &of(Path::new("/flexio-test/lock"))));
        let inside = Arc::new(AtomicU32::new(0));
        let max_w = Arc::new(AtomicU32::new(0));
        let max_r = Arc::new(AtomicU32::new(0));
        std::thread::scope(|s| {
            for t in 0..4 {
                let (l, inside, max_w, max_r) = (l.clone(), &inside, &max_w, &max_r);
                s.spawn(move || {
                    for _ in 0..200 {
                        let shared = t % 2 == 0;
                        l.lock(shared);
                        let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        let m = if shared { max_r } else { max_w };
                        m.fetch_max(n, Ordering::SeqCst);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                        l.unlock(shared);
                    }
                });
            }
        });
        assert_eq!(max_w.load(Ordering::SeqCst), 1, "a writer was never alone");
        assert!(max_r.load(Ordering::SeqCst) <= 2);
    }
}
