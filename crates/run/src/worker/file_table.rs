//! The job's open files: descriptors, the `openfiles` limit (which idle file to close when
//! another must open), requests in flight per file, and the per-loop steps on open files
//! (cache invalidation, fsync on close). File-operation engines' "first use per loop" is
//! tracked here too.

use crate::files;
use crate::plan::{FilePlan, OpenPlan};
use flexio_engine::os;
use flexio_engine::{Engine, FileInfo};
use std::os::fd::{AsRawFd, OwnedFd};

/// What to do to open another file within the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Room {
    /// Below the limit: open.
    Free,
    /// Close this idle file first.
    Close(usize),
    /// Every open file has I/O in flight: wait for a completion.
    Wait,
}

/// The set of open files as a two-level bitmap: finding the next open file after an index
/// costs a few word scans whatever the number of files (100,000 files under an
/// `openfiles` cap of 64 would otherwise be scanned one by one at every open).
struct OpenSet {
    words: Vec<u64>,
    /// Bit `w` set: `words[w]` is not zero.
    summary: Vec<u64>,
}

impl OpenSet {
    fn new(n: usize) -> Self {
        let words = n.div_ceil(64);
        OpenSet {
            words: vec![0; words],
            summary: vec![0; words.div_ceil(64)],
        }
    }

    fn insert(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
        self.summary[i / 4096] |= 1 << ((i / 64) % 64);
    }

    fn remove(&mut self, i: usize) {
        let w = i / 64;
        self.words[w] &= !(1 << (i % 64));
        if self.words[w] == 0 {
            self.summary[w / 64] &= !(1 << (w % 64));
        }
    }

    /// The first member at or after `from` and below `to`.
    fn next_in(&self, from: usize, to: usize) -> Option<usize> {
        if from >= to {
            return None;
        }
        let w = from / 64;
        let bits = self.words[w] & (u64::MAX << (from % 64));
        let found = if bits != 0 {
            Some(w * 64 + bits.trailing_zeros() as usize)
        } else {
            // The next non-empty word after `w`, through the summary.
            let from_w = w + 1;
            let mut sw = from_w / 64;
            let mut sbits = self.summary.get(sw).map_or(0, |s| {
                s & u64::MAX.checked_shl((from_w % 64) as u32).unwrap_or(0)
            });
            loop {
                if sbits != 0 {
                    let word = sw * 64 + sbits.trailing_zeros() as usize;
                    break Some(word * 64 + self.words[word].trailing_zeros() as usize);
                }
                sw += 1;
                if sw >= self.summary.len() || sw * 4096 >= to {
                    break None;
                }
                sbits = self.summary[sw];
            }
        };
        found.filter(|&i| i < to)
    }
}

/// The flag in a file's count of requests in flight that says its close waits for them.
const CLOSING: u32 = 1 << 31;

pub struct FileTable {
    fds: Vec<Option<OwnedFd>>,
    raw: Vec<i32>,
    open: u32,
    /// Which files are open (for the search of one to close).
    open_set: OpenSet,
    /// Requests in flight per file (a file with I/O in flight is never closed), with
    /// [`CLOSING`] set while the file's close waits for them.
    inflight: Vec<u32>,
    /// Where the search for a file to close starts (the longest-open one).
    cursor: usize,
    /// File-operation engines: which files had their operation in this loop.
    op_done: Vec<bool>,
}

impl FileTable {
    pub fn new(nfiles: usize) -> Self {
        FileTable {
            fds: (0..nfiles).map(|_| None).collect(),
            raw: vec![-1; nfiles],
            open: 0,
            open_set: OpenSet::new(nfiles),
            inflight: vec![0; nfiles],
            cursor: 0,
            op_done: vec![false; nfiles],
        }
    }

    /// The descriptor of file `i` (-1 when not open).
    #[inline]
    pub fn raw(&self, i: usize) -> i32 {
        self.raw.get(i).copied().unwrap_or(-1)
    }

    /// File `i`'s descriptor, borrowed, when it is open.
    pub fn borrow(&self, i: usize) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.fds.get(i)?.as_ref().map(|f| f.as_fd())
    }

    #[inline]
    pub fn is_open(&self, i: usize) -> bool {
        self.fds[i].is_some()
    }

    /// Files open now.
    pub fn open_count(&self) -> u32 {
        self.open
    }

    /// Whether file `i` has requests in flight.
    pub fn busy(&self, i: usize) -> bool {
        self.inflight[i] & !CLOSING > 0
    }

    /// File `i` is done while it has requests in flight: it is closed when the last of
    /// them completes ([`Self::finished`] says when), as fio closes a file it marked
    /// closing.
    pub fn defer_close(&mut self, i: usize) {
        self.inflight[i] |= CLOSING;
    }

    /// Whether file `i`'s close waits for its requests in flight.
    pub fn closing(&self, i: usize) -> bool {
        self.inflight[i] & CLOSING != 0
    }

    /// fsync file `i` (open); whether it succeeded.
    pub fn fsync(&self, i: usize) -> bool {
        match &self.fds[i] {
            Some(fd) => os::fs::fsync(fd).is_ok(),
            None => false,
        }
    }

    /// A request on file `i` was submitted / completed.
    #[inline]
    pub fn started(&mut self, i: usize) {
        self.inflight[i] += 1;
    }
    /// Whether the file is now due to close (its close was deferred and this was its
    /// last request in flight).
    #[inline]
    pub fn finished(&mut self, i: usize) -> bool {
        let v = self.inflight[i];
        let v = (v & CLOSING) | (v & !CLOSING).saturating_sub(1);
        self.inflight[i] = v;
        v == CLOSING
    }

    /// Whether another file may open under `limit`, else which file to close first.
    pub fn room(&self, limit: u32) -> Room {
        if self.open < limit {
            return Room::Free;
        }
        // The first open file without I/O in flight at or after the cursor, wrapping.
        let n = self.fds.len();
        for (from, to) in [(self.cursor, n), (0, self.cursor)] {
            let mut k = from;
            while let Some(c) = self.open_set.next_in(k, to) {
                if self.inflight[c] == 0 {
                    return Room::Close(c);
                }
                k = c + 1;
            }
        }
        Room::Wait
    }

    /// Open file `i`: descriptor, cache invalidation or pre-read, fadvise, engine hook. A
    /// failed invalidation is not fatal: its message is returned as `Ok(Some(warning))`.
    pub fn open<E: Engine>(
        &mut self,
        i: usize,
        f: &FilePlan,
        p: &OpenPlan,
        e: &mut E,
        engine: &str,
    ) -> Result<Option<String>, (i32, String)> {
        crate::debug_log!(
            crate::debug::Cat::File,
            "open file {}, flags {:?}",
            f.path.display(),
            p.flags
        );
        let fd = files::open(&f.path, p.flags_for(f)).map_err(|e| {
            let errno = e.raw_os_error().unwrap_or(libc::EIO);
            (errno, format!("open '{}': {e}", f.path.display()))
        })?;
        if let Some((hint, per_file)) = p.write_hint {
            if let Err(e) = flexio_engine::platform::set_write_hint(
                std::os::fd::AsFd::as_fd(&fd),
                hint,
                per_file,
            ) {
                let errno = e.raw_os_error().unwrap_or(libc::EINVAL);
                let how = if per_file {
                    "F_SET_FILE_RW_HINT (per open file, used with direct=1; Linux 5.17 and later no longer have it)"
                } else {
                    "F_SET_RW_HINT"
                };
                return Err((
                    errno,
                    format!(
                        "write_hint on '{}': the kernel refuses {how}: {e}",
                        f.path.display()
                    ),
                ));
            }
        }
        let mut warning = None;
        if p.pre_read {
            // Pre-read through a buffered descriptor (O_DIRECT would bypass the cache).
            if let Ok(b) = files::open(&f.path, os::fs::OFlags::RDONLY | os::fs::OFlags::CLOEXEC) {
                let _ = files::pre_read(&b, f.region.start, f.region.len);
            }
        } else if p.invalidate && !f.is_char_dev() {
            // A character device has no page cache (fio skips it too).
            if let Err(e) = files::invalidate(&fd, f.region.start, f.region.len) {
                warning = Some(format!(
                    "fio: cache invalidation of {} failed: {e}",
                    f.path.display()
                ));
            }
        }
        if let Some(adv) = p.advice {
            let len = std::num::NonZeroU64::new(f.region.len);
            let _ = os::fs::fadvise(&fd, f.region.start, len, adv);
        }
        let info = FileInfo {
            path: &f.path,
            fd: fd.as_raw_fd(),
            size: f.region.start + f.region.len,
            writable: p.writable,
            random: p.random,
        };
        e.open_file(i as u32, &info).map_err(|err| {
            (
                err.raw_os_error().unwrap_or(libc::EIO),
                format!("ioengine {engine} open of '{}': {err}", f.path.display()),
            )
        })?;
        self.raw[i] = fd.as_raw_fd();
        self.fds[i] = Some(fd);
        self.open_set.insert(i);
        self.open += 1;
        Ok(warning)
    }

    /// Close file `i` (fsync first when `fsync`), telling the engine.
    pub fn close<E: Engine>(&mut self, i: usize, e: &mut E, fsync: bool) {
        self.inflight[i] &= !CLOSING;
        if let Some(fd) = self.fds[i].take() {
            crate::debug_log!(crate::debug::Cat::File, "close file {i}");
            let _ = e.close_file(i as u32);
            if fsync {
                let _ = os::fs::fsync(&fd);
            }
            drop(fd);
            self.raw[i] = -1;
            self.open_set.remove(i);
            self.open -= 1;
            self.cursor = (i + 1) % self.fds.len();
        }
    }

    /// Close every file.
    pub fn close_all<E: Engine>(&mut self, e: &mut E, fsync: bool) {
        for i in 0..self.fds.len() {
            self.close(i, e, fsync);
        }
    }

    /// One syncfs per file system of the open files (end_syncfs); returns how many were
    /// issued. Files on one file system share a device number.
    pub fn syncfs_all(&self) -> usize {
        let mut done: Vec<u64> = Vec::new();
        for fd in self.fds.iter().flatten() {
            let dev = os::fs::fstat(fd).map(|st| st.st_dev).unwrap_or(u64::MAX);
            if done.contains(&dev) {
                continue;
            }
            done.push(dev);
            let _ = flexio_engine::platform::syncfs(os::fd::AsFd::as_fd(fd));
        }
        done.len()
    }

    /// A new loop: the file-operation engines time each file's first use again. The
    /// files were closed at the loop's end and open again at their next use.
    pub fn next_loop(&mut self) {
        self.op_done.iter_mut().for_each(|d| *d = false);
    }

    /// Drop the page cache of one open file again (a time-based job starting over, as fio's
    /// loop_cache_invalidate).
    #[cold]
    pub fn invalidate(&self, i: usize, f: &FilePlan) {
        if f.is_char_dev() {
            return;
        }
        if let Some(Some(fd)) = self.fds.get(i) {
            let _ = files::invalidate(fd, f.region.start, f.region.len);
        }
    }

    /// File-operation engines: whether this is file `i`'s first use in this loop (the
    /// measured operation happens then); marks it used.
    pub fn first_use(&mut self, i: usize) -> bool {
        !std::mem::replace(&mut self.op_done[i], true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flexio_engine::null::Null;
    use flexio_workload::Region;

    fn plan(dir: &std::path::Path, n: usize) -> Vec<FilePlan> {
        (0..n)
            .map(|i| FilePlan {
                path: dir.join(format!("f{i}")),
                need: 4096,
                region: Region {
                    start: 0,
                    len: 4096,
                },
                block: None,
                seen: None,
            })
            .collect()
    }

    fn open_plan() -> OpenPlan {
        OpenPlan {
            flags: os::fs::OFlags::RDWR | os::fs::OFlags::CREATE | os::fs::OFlags::CLOEXEC,
            writable: true,
            limit: Some(2),
            pre_read: false,
            invalidate: true,
            advice: None,
            random: false,
            fsync_on_close: false,
            char_rdwr: false,
            write_hint: None,
        }
    }

    #[test]
    fn limit_closes_the_longest_open_idle_file() {
        let d = tempfile::tempdir().unwrap();
        let files = plan(d.path(), 3);
        let p = open_plan();
        let mut e = Null::new(1);
        let mut t = FileTable::new(3);
        assert_eq!(t.room(2), Room::Free);
        t.open(0, &files[0], &p, &mut e, "null").unwrap();
        t.open(1, &files[1], &p, &mut e, "null").unwrap();
        assert!(t.raw(0) >= 0 && t.is_open(1));
        assert_eq!(t.room(2), Room::Close(0));
        t.started(0);
        assert_eq!(t.room(2), Room::Close(1), "file 0 has I/O in flight");
        t.started(1);
        assert_eq!(t.room(2), Room::Wait);
        t.finished(1);
        t.close(1, &mut e, false);
        assert_eq!((t.open_count(), t.raw(1)), (1, -1));
        assert_eq!(t.room(2), Room::Free);
        t.open(2, &files[2], &p, &mut e, "null").unwrap();
        t.finished(0);
        assert_eq!(
            t.room(2),
            Room::Close(2),
            "the search starts after the last closed"
        );
        t.close_all(&mut e, true);
        assert_eq!(t.open_count(), 0);
    }

    #[test]
    fn open_set_finds_the_next_open_file_across_words() {
        let n = 10_000;
        let mut set = OpenSet::new(n);
        let members = [3, 63, 64, 4095, 4096, 8191, 9999];
        for &i in &members {
            set.insert(i);
        }
        // Against the plain scan, from every start and for a few ends.
        for to in [n, 4096, 64, 5000] {
            for from in 0..n {
                let want = members.iter().copied().find(|&i| i >= from && i < to);
                assert_eq!(set.next_in(from, to), want, "from {from} to {to}");
            }
        }
        set.remove(4095);
        set.remove(63);
        assert_eq!(set.next_in(4, n), Some(64));
        assert_eq!(set.next_in(65, n), Some(4096));
        set.remove(64);
        assert_eq!(set.next_in(4, n), Some(4096));
        assert_eq!(set.next_in(0, 3), None);
    }

    #[test]
    fn open_errors_name_the_file() {
        let d = tempfile::tempdir().unwrap();
        let mut files = plan(d.path(), 1);
        files[0].path = d.path().join("missing/dir/f");
        let p = OpenPlan {
            flags: os::fs::OFlags::RDONLY,
            ..open_plan()
        };
        let (errno, msg) = FileTable::new(1)
            .open(0, &files[0], &p, &mut Null::new(1), "null")
            .unwrap_err();
        assert_eq!(errno, libc::ENOENT);
        assert!(msg.contains("missing/dir/f"), "{msg}");
    }

    #[test]
    fn file_ops_count_once_per_loop() {
        let mut t = FileTable::new(2);
        assert!(t.first_use(1));
        assert!(!t.first_use(1));
        t.next_loop();
        assert!(t.first_use(1));
    }
}
