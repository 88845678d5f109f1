//! `page_fault` (the newest fio, after 3.42): the job's data lives in an anonymous private
//! mapping the size of the job, made when the job starts; reads copy out of it and writes
//! copy into it, so the first touch of each page takes a page fault (a read of an untouched
//! page maps the zero page, a write allocates one). Sync requests complete at once. No file
//! is created or opened. The job has one file, starting at offset 0 (fio's messages).

use crate::api::{Caps, Engine, EngineConfig, EngineDef, IoReq, Op, Queued};
use rustix::mm::{MapFlags, ProtFlags};
use std::io;

/// fio's refusals, word for word (fio prints them when the engine starts).
pub const MULTIPLE_FILES: &str = "page_fault ioengine does not support multiple files";
pub const START_OFFSET: &str = "page_fault engine does not support start_offset";

pub struct PageFault {
    /// The mapping (null until init) and its length.
    ptr: *mut u8,
    len: usize,
    /// Bytes to map: where the thread's I/O ends.
    size: u64,
    nfiles: u32,
}

// SAFETY: the mapping is private to the job thread that owns the engine; nothing else
// holds its address.
unsafe impl Send for PageFault {}

impl EngineDef for PageFault {
    const NAME: &'static str = "page_fault";
    const HELP: &'static str =
        "Data copied to/from an anonymous memory mapping of the job's size (page faults)";
    const SINCE: Option<&'static str> = Some("post-3.42");
    fn build(cfg: &EngineConfig) -> Self {
        PageFault {
            ptr: std::ptr::null_mut(),
            len: 0,
            size: cfg.size,
            nfiles: cfg.nfiles,
        }
    }
    fn probe(cfg: &EngineConfig) -> Result<(), String> {
        check(cfg.nfiles, cfg.offset)
    }
}

/// fio's conditions: one file, no start offset.
fn check(nfiles: u32, offset: u64) -> Result<(), String> {
    if nfiles > 1 {
        return Err(MULTIPLE_FILES.into());
    }
    if offset != 0 {
        return Err(START_OFFSET.into());
    }
    Ok(())
}

impl Drop for PageFault {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: ptr/len describe the mapping init created, unmapped only here.
            let _ = unsafe { rustix::mm::munmap(self.ptr.cast(), self.len) };
        }
    }
}

impl Engine for PageFault {
    fn caps(&self) -> Caps {
        Caps {
            // fio's SYNCIO | NOEXTEND | DISKLESSIO.
            syncio: true,
            no_extend: true,
            diskless: true,
            file_op: false,
            has_commit: false,
            queue_completes: false,
            trim: false,
            // No descriptors: the data is in memory.
            no_fd: true,
            no_slat: false,
            dirs: false,
            creates: false,
            changes_names: false,
            noio: false,
            pipe: false,
            bit_based: false,
            think_us: 0,
            op_kinds: &[],
            untimed: false,
            // Sync requests of every kind are taken (as no-ops), as fio's engine takes them.
            sync_range: true,
            diskless_syncs: true,
            shared_fd_table: false,
            fake_io: false,
            write_only: false,
            // Page faults are the kernel's work, not flexio's.
            measures_tool: false,
            // The mapping is this instance's: a submitter thread's own instance could not
            // reach the data.
            offload: false,
            rw_open: false,
            atomic_writes: false,
        }
    }
    fn init(&mut self) -> io::Result<()> {
        // The planner checked the job's options; an opendir job's files are known here.
        check(self.nfiles, 0).map_err(|m| io::Error::new(io::ErrorKind::InvalidInput, m))?;
        let len = usize::try_from(self.size)
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
        // SAFETY: a fresh anonymous mapping at a kernel-chosen address aliases no Rust
        // memory; it is kept until drop.
        let p = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE,
            )
        }
        .map_err(|e| io::Error::from_raw_os_error(e.raw_os_error()))?;
        self.ptr = p.cast();
        self.len = len;
        Ok(())
    }
    #[inline]
    fn queue(&mut self, io: &IoReq) -> Queued {
        match io.op {
            Op::Sync | Op::Datasync | Op::SyncRange => return Queued::Completed(0),
            Op::Read | Op::Write => {}
            Op::Trim => return Queued::Completed(-(libc::EINVAL as i64)),
        }
        if self.ptr.is_null() {
            return Queued::Completed(-(libc::EINVAL as i64));
        }
        // The request must lie inside the mapping.
        let fits = usize::try_from(io.offset)
            .ok()
            .and_then(|off| Some((off, off.checked_add(io.len)?)))
            .filter(|(_, end)| *end <= self.len);
        let Some((off, _)) = fits else {
            return Queued::Completed(-(libc::EINVAL as i64));
        };
        if io.op == Op::Read {
            // SAFETY: [off, off+len) lies inside the live mapping (checked above); the
            // request buffer holds at least len bytes owned by the core for this call; the
            // two cannot overlap (the mapping is this engine's alone).
            unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(off), io.buf, io.len) };
        } else {
            // SAFETY: as above, in the other direction; the mapping is writable.
            unsafe { std::ptr::copy_nonoverlapping(io.buf, self.ptr.add(off), io.len) };
        }
        Queued::Completed(io.len as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(op: Op, offset: u64, buf: &mut [u8]) -> IoReq {
        IoReq {
            idx: 0,
            op,
            file: 0,
            fd: -1,
            offset,
            buf: buf.as_mut_ptr(),
            len: buf.len(),
            ioprio: 0,
            sync_flags: 0,
        }
    }

    fn engine(size: u64) -> PageFault {
        PageFault::build(&EngineConfig {
            nfiles: 1,
            size,
            ..EngineConfig::default()
        })
    }

    #[test]
    fn writes_land_in_the_mapping_and_reads_find_them() {
        let mut e = engine(64 << 10);
        e.init().unwrap();
        let mut zero = vec![0xffu8; 4096];
        // An untouched page reads as zeros.
        assert_eq!(e.queue(&req(Op::Read, 8192, &mut zero)), Queued::Completed(4096));
        assert!(zero.iter().all(|b| *b == 0));
        let mut w: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
        assert_eq!(e.queue(&req(Op::Write, 12288, &mut w)), Queued::Completed(4096));
        let mut r = vec![0u8; 4096];
        assert_eq!(e.queue(&req(Op::Read, 12288, &mut r)), Queued::Completed(4096));
        assert_eq!(r, w);
        // Syncs do nothing and succeed; trims are refused.
        for op in [Op::Sync, Op::Datasync, Op::SyncRange] {
            assert_eq!(e.queue(&req(op, 0, &mut [])), Queued::Completed(0));
        }
        assert_eq!(
            e.queue(&req(Op::Trim, 0, &mut r)),
            Queued::Completed(-(libc::EINVAL as i64))
        );
    }

    #[test]
    fn requests_outside_the_mapping_are_refused() {
        let mut e = engine(8192);
        let mut b = vec![0u8; 4096];
        assert_eq!(
            e.queue(&req(Op::Read, 0, &mut b)),
            Queued::Completed(-(libc::EINVAL as i64)),
            "before init"
        );
        e.init().unwrap();
        assert_eq!(e.queue(&req(Op::Write, 4096, &mut b)), Queued::Completed(4096));
        for off in [4097, 8192, u64::MAX - 10] {
            assert_eq!(
                e.queue(&req(Op::Write, off, &mut b)),
                Queued::Completed(-(libc::EINVAL as i64)),
                "{off}"
            );
        }
    }

    #[test]
    fn one_file_from_offset_zero() {
        assert_eq!(check(1, 0), Ok(()));
        assert_eq!(check(2, 0).unwrap_err(), MULTIPLE_FILES);
        assert_eq!(check(1, 4096).unwrap_err(), START_OFFSET);
        let mut e = engine(0);
        assert!(e.init().is_err(), "nothing to map");
        let mut e = PageFault::build(&EngineConfig {
            nfiles: 3,
            size: 4096,
            ..EngineConfig::default()
        });
        let m = e.init().unwrap_err().to_string();
        assert_eq!(m, MULTIPLE_FILES);
        assert!(!e.caps().offload && e.caps().diskless && e.caps().syncio);
    }
}
