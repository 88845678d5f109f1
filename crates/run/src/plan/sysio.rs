//! The system around a job's I/O, resolved: what backs its buffers (`mem`/`iomem`,
//! `hugepage-size`), memory pinned for the run (`lockmem`), the write life-time hint
//! (`write_hint`), the I/O scheduler of its device (`ioscheduler`), `sync_file_range`, and
//! what happens when the random map cannot be had (`softrandommap`).

use super::{err, PlanError};
use flexio_engine::buffer::Memory;
use flexio_engine::Caps;
use flexio_job::sysio::MemType;
use flexio_job::JobDef;

/// [`super::ThreadPlan::sysio`].
#[derive(Clone, Debug, Default)]
pub struct SysIoPlan {
    /// What backs the I/O buffers, and the huge-page size huge memory is sized by.
    pub memory: Memory,
    pub huge_page: usize,
    /// Bytes to mlock for the run (0 = none).
    pub lockmem: u64,
    /// Switch the device under the first file to this I/O scheduler before the job.
    pub ioscheduler: Option<String>,
    /// `sync_file_range`: the SYNC_FILE_RANGE_* flags and every how many writes.
    pub sync_range: Option<(u32, u64)>,
    /// softrandommap: a random map that cannot be allocated means running without one
    /// (else the job fails).
    pub softrandommap: bool,
    /// `trim_mode=punch` (flexio): the job's trims punch holes (fallocate) instead of the
    /// engine's BLKDISCARD.
    pub trim_punch: bool,
}

/// Resolve a job's system options for one thread.
pub fn resolve(def: &JobDef, caps: &Caps) -> Result<SysIoPlan, PlanError> {
    let o = &def.opts;
    let s = &o.sysio;
    let memory = match &s.mem {
        MemType::Malloc => Memory::Heap,
        MemType::Shm { huge } => Memory::Shm { huge: *huge },
        MemType::Mmap { shared, huge, file } => Memory::Mmap {
            shared: *shared,
            huge: *huge,
            file: file.as_ref().map(std::path::PathBuf::from),
        },
    };
    if s.mem.huge() && s.hugepage_size == 0 {
        return Err(err(
            def,
            format!("mem={} needs a hugepage-size above 0", s.mem.name()),
        ));
    }
    let sync_range = s.sync_file_range.filter(|(_, n)| *n > 0);
    if sync_range.is_some() && !caps.sync_range {
        return Err(err(
            def,
            format!(
                "sync_file_range is not supported by flexio with ioengine={} (only the sync, psync, vsync, pvsync, pvsync2, libaio, io_uring, page_fault and null engines issue it)",
                o.ioengine
            ),
        ));
    }
    if o.trim_punch && (caps.no_fd || caps.diskless || caps.pipe) {
        return Err(err(
            def,
            format!(
                "trim_mode=punch punches holes through the job's file descriptors, which ioengine={} does not have",
                o.ioengine
            ),
        ));
    }
    Ok(SysIoPlan {
        memory,
        huge_page: usize::try_from(s.hugepage_size).unwrap_or(usize::MAX),
        lockmem: s.lockmem,
        ioscheduler: s.ioscheduler.clone().filter(|_| !caps.diskless),
        sync_range,
        softrandommap: o.softrandommap,
        trim_punch: o.trim_punch,
    })
}

/// `write_hint` for [`super::OpenPlan::write_hint`]: the RWH_WRITE_LIFE_* value, set per
/// open file (F_SET_FILE_RW_HINT) with direct=1, else on the inode (F_SET_RW_HINT), as fio.
pub fn write_hint(def: &JobDef, caps: &Caps) -> Option<(u64, bool)> {
    let o = &def.opts;
    o.sysio
        .write_hint
        .filter(|_| !caps.diskless && !caps.no_fd)
        .map(|h| (h, o.direct))
}
