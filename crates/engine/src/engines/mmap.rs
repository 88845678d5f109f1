//! `mmap`: each file is mapped whole; reads copy out of the mapping, writes copy into it,
//! and sync requests msync(2) it. `thp` advises the mapping for transparent huge pages
//! (MADV_HUGEPAGE) before the access-pattern advice, as fio does.

use crate::api::{EngineDef, Caps, Engine, EngineConfig, FileInfo, IoReq, Op, Queued};
use flexio_job::engine_opts::parse;
use flexio_job::table::{Kind, OptDef};
use rustix::mm::{MapFlags, MsyncFlags, ProtFlags};
use std::io;

struct Mapping {
    ptr: *mut u8,
    len: usize,
}

flexio_job::engine_options! {
    /// The mmap engine's options.
    pub struct MmapOpts; rows OPTIONS;
    /// Non-zero: madvise(MADV_HUGEPAGE) on each mapping.
    thp: u32 = 0,
        "thp", Kind::Int { min: 0, max: u32::MAX as i64 }, "", "Memory Advise Huge Page",
        |v, kb| parse::int(v, kb, 0, u32::MAX as i64).map(|n| n as u32);
}

pub struct Mmap {
    maps: Vec<Option<Mapping>>,
    advise: bool,
    thp: bool,
    /// fio's init check: blocks smaller than a page (or not a multiple of one) cannot be
    /// synced on their own through the mapping when the job syncs every N blocks.
    refused: Option<String>,
}

// SAFETY: the mappings are private to the job thread that owns the engine.
unsafe impl Send for Mmap {}

impl EngineDef for Mmap {
    const NAME: &'static str = "mmap";
    const HELP: &'static str = "File is memory mapped and data copied to/from it";
    const OPTIONS: &'static [&'static [OptDef]] = &[OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        let mut m = Mmap::new(cfg.advise);
        m.thp = MmapOpts::from_values(&cfg.values).thp != 0;
        let page = crate::os::param::page_size() as u64;
        if cfg.sync_blocks && cfg.min_bs % page != 0 {
            m.refused = Some(format!(
                "fio: mmap options dictate a minimum block size of {page} bytes"
            ));
        }
        m
    }
}

impl Mmap {
    /// `advise`: madvise the mapping for the access pattern (fadvise_hint).
    pub fn new(advise: bool) -> Self {
        Mmap {
            maps: Vec::new(),
            advise,
            thp: false,
            refused: None,
        }
    }

    fn unmap(&mut self, file: usize) {
        if let Some(Some(m)) = self.maps.get_mut(file).map(Option::take) {
            // SAFETY: ptr/len describe a mapping created by open_file and not yet unmapped.
            let _ = unsafe { rustix::mm::munmap(m.ptr.cast(), m.len) };
        }
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        for i in 0..self.maps.len() {
            self.unmap(i);
        }
    }
}

impl Engine for Mmap {
    fn init(&mut self) -> io::Result<()> {
        match &self.refused {
            Some(why) => Err(io::Error::other(crate::api::InitRefused(why.clone()))),
            None => Ok(()),
        }
    }
    fn caps(&self) -> Caps {
        Caps {
            syncio: true,
            no_extend: true,
            trim: true,
            ..Caps::default()
        }
    }
    fn open_file(&mut self, file: u32, f: &FileInfo) -> io::Result<()> {
        let i = file as usize;
        if self.maps.len() <= i {
            self.maps.resize_with(i + 1, || None);
        }
        self.unmap(i);
        if f.size == 0 {
            return Ok(());
        }
        let len = usize::try_from(f.size).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
        let prot = if f.writable {
            ProtFlags::READ | ProtFlags::WRITE
        } else {
            ProtFlags::READ
        };
        // SAFETY: the descriptor is open (the core just opened it); we map `len` bytes of it
        // shared, and keep the mapping until close_file/drop.
        let fd = unsafe { rustix::fd::BorrowedFd::borrow_raw(f.fd) };
        // SAFETY: a fresh mapping at a kernel-chosen address aliases no Rust memory.
        let p =
            unsafe { rustix::mm::mmap(std::ptr::null_mut(), len, prot, MapFlags::SHARED, fd, 0) }
                .map_err(|e| io::Error::from_raw_os_error(e.raw_os_error()))?;
        if self.thp {
            // SAFETY: advising on our own mapping has no memory-safety effect.
            if let Err(e) = unsafe { crate::platform::madvise_hugepages(p, len) } {
                // SAFETY: p/len is the mapping just created, unmapped once here.
                let _ = unsafe { rustix::mm::munmap(p, len) };
                return Err(io::Error::new(e.kind(), format!("madvise(MADV_HUGEPAGE): {e}")));
            }
        }
        if self.advise {
            let adv = if f.random {
                rustix::mm::Advice::Random
            } else {
                rustix::mm::Advice::Sequential
            };
            // SAFETY: advising on our own mapping has no memory-safety effect.
            let _ = unsafe { rustix::mm::madvise(p, len, adv) };
        }
        self.maps[i] = Some(Mapping { ptr: p.cast(), len });
        Ok(())
    }
    fn close_file(&mut self, file: u32) -> io::Result<()> {
        self.unmap(file as usize);
        Ok(())
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        let Some(Some(m)) = self.maps.get(io.file as usize) else {
            return Queued::Completed(-(libc::EINVAL as i64));
        };
        if matches!(io.op, Op::Sync | Op::Datasync) {
            // SAFETY: msync on our own live mapping.
            let r = unsafe { rustix::mm::msync(m.ptr.cast(), m.len, MsyncFlags::SYNC) };
            return Queued::Completed(r.map(|_| 0).unwrap_or_else(|e| -(e.raw_os_error() as i64)));
        }
        if io.op == Op::Trim {
            return Queued::Completed(crate::sync::do_trim(io));
        }
        let off = io.offset as usize;
        if io.offset > usize::MAX as u64 || off >= m.len {
            return Queued::Completed(-(libc::EINVAL as i64));
        }
        let n = io.len.min(m.len - off);
        match io.op {
            // SAFETY: [off, off+n) lies inside the live mapping; the request buffer holds
            // at least n bytes owned by the core for the duration of this call; the two
            // regions cannot overlap (one is file-backed mapping, one heap).
            Op::Read => unsafe { std::ptr::copy_nonoverlapping(m.ptr.add(off), io.buf, n) },
            // SAFETY: as above, in the other direction; the mapping is writable for
            // writable files (the core opens files for writing when the job writes).
            Op::Write => unsafe { std::ptr::copy_nonoverlapping(io.buf, m.ptr.add(off), n) },
            _ => return Queued::Completed(-(libc::EINVAL as i64)),
        }
        Queued::Completed(n as i64)
    }
}
