//! Trace capture (`write_iolog`): the job's file actions and I/O as fio's version-3 iolog,
//! through one buffered writer (fio appends to the file, with an 8 KiB buffer). Each line is
//! written with integer-to-digit copies: no formatting machinery and no allocation per I/O.

use crate::iolog::text::{write_line, VER3};
use crate::iolog::Act;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::Path;

pub struct Capture {
    out: BufWriter<File>,
    start_ns: u64,
    names: Vec<Box<[u8]>>,
    /// Files of an engine without descriptors (null, the file engines) logged as opened:
    /// fio logs their open at first use and their close at the end like any file's.
    opened: Vec<bool>,
    /// The first write error (the log then stops; the job goes on, as in fio).
    err: Option<String>,
    path: String,
    /// Each request slot's last offset (fio logs a sync with the offset its request held
    /// before, as its io_u keeps it).
    slots: Vec<u64>,
}

impl Capture {
    /// Slot `slot`'s last offset, to read or set.
    pub fn slot_offset(&mut self, slot: u32) -> &mut u64 {
        let i = slot as usize;
        if i >= self.slots.len() {
            self.slots.resize(i + 1, 0);
        }
        &mut self.slots[i]
    }

    /// Two slots change places (their last offsets).
    pub fn swap_slots(&mut self, a: u32, b: u32) {
        let _ = self.slot_offset(a.max(b));
        self.slots.swap(a as usize, b as usize);
    }

    /// Open (append) the log, write the version line and an `add` line per file.
    pub fn create(path: &Path, files: &[&Path], now_ns: u64) -> Result<Self, String> {
        let f = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| format!("fopen write iolog '{}': {e}", path.display()))?;
        use std::os::unix::ffi::OsStrExt;
        let mut c = Capture {
            out: BufWriter::with_capacity(8192, f),
            start_ns: now_ns,
            names: files
                .iter()
                .map(|p| p.as_os_str().as_bytes().to_vec().into_boxed_slice())
                .collect(),
            opened: vec![false; files.len()],
            err: None,
            path: path.display().to_string(),
            slots: Vec::new(),
        };
        let r = c
            .out
            .write_all(VER3.as_bytes())
            .and_then(|_| c.out.write_all(b"\n"));
        c.check(r);
        for i in 0..c.names.len() {
            c.file(now_ns, i as u32, Act::Add);
        }
        Ok(c)
    }

    fn check(&mut self, r: std::io::Result<()>) {
        if let Err(e) = r {
            if self.err.is_none() {
                self.err = Some(format!("write iolog '{}': {e}", self.path));
            }
        }
    }

    fn us(&self, now_ns: u64) -> u64 {
        now_ns.saturating_sub(self.start_ns) / 1000
    }

    /// An `add`, `open` or `close` of file `i`.
    pub fn file(&mut self, now_ns: u64, i: u32, act: Act) {
        if self.err.is_some() {
            return;
        }
        let t = self.us(now_ns);
        let Some(name) = self.names.get(i as usize) else {
            return;
        };
        let r = write_line(&mut self.out, t, name, act, None);
        self.check(r);
    }

    /// File `i` of an engine without descriptors is used: its `open` line, the first time.
    pub fn open_once(&mut self, now_ns: u64, i: u32) {
        if let Some(o) = self.opened.get_mut(i as usize).filter(|o| !**o) {
            *o = true;
            self.file(now_ns, i, Act::Open);
        }
    }

    /// File `i` of an engine without descriptors was closed (done): its next use logs
    /// `open` again.
    pub fn closed_once(&mut self, i: u32) {
        if let Some(o) = self.opened.get_mut(i as usize) {
            *o = false;
        }
    }

    /// Whether file `i` was logged as opened by [`Capture::open_once`].
    pub fn opened(&self, i: usize) -> bool {
        self.opened.get(i).copied().unwrap_or(false)
    }

    /// An I/O as it is queued.
    #[inline]
    pub fn io(&mut self, now_ns: u64, i: u32, act: Act, offset: u64, len: u64) {
        if self.err.is_some() {
            return;
        }
        let t = self.us(now_ns);
        let Some(name) = self.names.get(i as usize) else {
            return;
        };
        let r = write_line(&mut self.out, t, name, act, Some((offset, len)));
        self.check(r);
    }

    /// Flush; the first error, if any.
    pub fn finish(&mut self) -> Option<String> {
        let r = self.out.flush();
        self.check(r);
        self.err.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_version_three_lines_and_appends() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("log");
        let f = Path::new("/x/f");
        let mut c = Capture::create(&p, &[f], 1_000).unwrap();
        c.file(159_000, 0, Act::Open);
        c.io(165_500, 0, Act::Read, 45056, 4096);
        c.io(170_000, 0, Act::Sync, 45056, 0);
        c.file(200_000, 0, Act::Close);
        assert!(c.finish().is_none());
        let mut c = Capture::create(&p, &[f], 0).unwrap();
        assert!(c.finish().is_none());
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(
            text,
            "fio version 3 iolog\n0 /x/f add\n158 /x/f open\n164 /x/f read 45056 4096\n169 /x/f sync 45056 0\n199 /x/f close\nfio version 3 iolog\n0 /x/f add\n"
        );
    }

    #[test]
    fn a_file_without_a_descriptor_is_opened_once() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("log");
        let (a, b) = (Path::new("a"), Path::new("b"));
        let mut c = Capture::create(&p, &[a, b], 0).unwrap();
        c.open_once(5_000, 1);
        c.io(6_000, 1, Act::Read, 0, 4096);
        c.open_once(7_000, 1);
        assert!(c.opened(1) && !c.opened(0) && !c.opened(9));
        assert!(c.finish().is_none());
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "fio version 3 iolog\n0 a add\n0 b add\n5 b open\n6 b read 0 4096\n"
        );
    }
}
