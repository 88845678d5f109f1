//! Aligned I/O buffers: one allocation holding a fixed-size slot per in-flight request, so
//! buffers never move and O_DIRECT alignment holds.

use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
use std::io;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;

/// Size of a transparent huge page (x86-64, arm64 with 4 KiB pages).
const HUGE: usize = 2 << 20;
/// Buffers from this size on go on huge pages (with `thp`).
pub const HUGE_FROM: usize = 1 << 20;

/// What backs a job's I/O buffers (fio's `mem` types).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Memory {
    /// The heap (fio's `malloc`), laid out on transparent huge pages from [`HUGE_FROM`]
    /// bytes on when asked.
    #[default]
    Heap,
    /// A System V shared memory segment (`shm`; `shmhuge` on huge pages).
    Shm { huge: bool },
    /// mmap(2): anonymous or of `file`; MAP_SHARED for `shared` or `huge` (fio's
    /// `mmapshared`, `mmaphuge`), else MAP_PRIVATE. A file flexio creates is removed when
    /// the buffers go; an existing one is kept.
    Mmap {
        shared: bool,
        huge: bool,
        file: Option<PathBuf>,
    },
}

impl Memory {
    fn name(&self) -> &'static str {
        match self {
            Memory::Heap => "malloc",
            Memory::Shm { huge: false } => "shm",
            Memory::Shm { huge: true } => "shmhuge",
            Memory::Mmap { huge: true, .. } => "mmaphuge",
            Memory::Mmap { shared: true, .. } => "mmapshared",
            Memory::Mmap { .. } => "mmap",
        }
    }

    fn huge(&self) -> bool {
        matches!(
            self,
            Memory::Shm { huge: true } | Memory::Mmap { huge: true, .. }
        )
    }
}

/// Where the allocation came from, for freeing it.
enum Backing {
    Heap(Layout),
    #[cfg(not(target_os = "rtems"))]
    Map {
        base: *mut std::ffi::c_void,
        len: usize,
        /// A file flexio created for the mapping: removed on drop.
        remove: Option<PathBuf>,
    },
    #[cfg(not(target_os = "rtems"))]
    Shm {
        base: *mut std::ffi::c_void,
    },
}

pub struct IoBuffers {
    ptr: NonNull<u8>,
    backing: Backing,
    slot: usize,
    count: usize,
}

// SAFETY: the allocation is exclusively owned by this value; moving it to another thread
// moves that ownership.
unsafe impl Send for IoBuffers {}

#[cfg(not(target_os = "rtems"))]
fn os_err(e: crate::os::io::Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

impl IoBuffers {
    /// `count` slots of at least `slot_size` bytes, each aligned to `align` (a power of two).
    /// With `thp`, an allocation of [`HUGE_FROM`] bytes or more is laid out in whole 2 MiB
    /// pages and advised to be backed by transparent huge pages: physically contiguous, so
    /// a large O_DIRECT request is not split for having more scattered pages than the
    /// device takes segments (with 4 KiB pages that happens or not by the chance of where
    /// the pages landed, and the results vary with it).
    pub fn new(count: usize, slot_size: usize, align: usize, thp: bool) -> io::Result<Self> {
        Self::with_memory(count, slot_size, align, thp, &Memory::Heap, HUGE)
    }

    /// [`IoBuffers::new`] backed by `mem`; huge-page memory is sized in multiples of
    /// `huge_page` bytes (fio's `hugepage-size`). The error says which memory failed.
    pub fn with_memory(
        count: usize,
        slot_size: usize,
        align: usize,
        thp: bool,
        mem: &Memory,
        huge_page: usize,
    ) -> io::Result<Self> {
        let align = align.max(8).next_power_of_two();
        let slot = slot_size.max(1).div_ceil(align) * align;
        let overflow = || io::Error::new(io::ErrorKind::OutOfMemory, "I/O buffer size overflows");
        let total = slot.checked_mul(count.max(1)).ok_or_else(overflow)?;
        let count = count.max(1);
        if *mem == Memory::Heap {
            return Self::heap(count, slot, total, align, thp);
        }
        // Mappings and segments start page aligned: room for a larger alignment, then the
        // size in whole (huge) pages.
        let page = if mem.huge() {
            huge_page.max(4096)
        } else {
            crate::os::param::page_size()
        };
        let slack = if align > crate::os::param::page_size() {
            align
        } else {
            0
        };
        let len = total
            .checked_add(slack)
            .and_then(|t| t.checked_next_multiple_of(page))
            .ok_or_else(overflow)?;
        let what = |e: io::Error| {
            let hint = if mem.huge() && e.raw_os_error() == Some(libc::ENOMEM) {
                " (no huge pages available? see /proc/sys/vm/nr_hugepages)"
            } else {
                ""
            };
            io::Error::new(
                e.kind(),
                format!(
                    "cannot allocate {len} bytes of I/O buffers with mem={}: {e}{hint}",
                    mem.name()
                ),
            )
        };
        let (base, backing) = match mem {
            Memory::Heap => unreachable!("handled above"),
            Memory::Shm { huge } => Self::shm(len, *huge).map_err(what)?,
            Memory::Mmap { shared, huge, file } => {
                Self::map(len, *shared, *huge, file.as_deref()).map_err(what)?
            }
        };
        let start = (base as usize).next_multiple_of(align);
        let ptr = NonNull::new(start as *mut u8).ok_or_else(|| io::Error::other("null mapping"))?;
        Ok(IoBuffers {
            ptr,
            backing,
            slot,
            count,
        })
    }

    fn heap(count: usize, slot: usize, total: usize, align: usize, thp: bool) -> io::Result<Self> {
        let huge = thp && total >= HUGE_FROM;
        let (total, align) = if huge {
            let t = total.checked_next_multiple_of(HUGE).ok_or_else(|| {
                io::Error::new(io::ErrorKind::OutOfMemory, "I/O buffer size overflows")
            })?;
            (t, align.max(HUGE))
        } else {
            (total, align)
        };
        let layout = Layout::from_size_align(total, align)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let raw = if huge {
            // SAFETY: layout has a non-zero size.
            let r = unsafe { alloc(layout) };
            if !r.is_null() {
                // The advice must come before the first touch, or 4 KiB pages are already
                // in place. A kernel without transparent huge pages refuses it; the buffer
                // then has 4 KiB pages and works the same.
                // SAFETY: [r, r + total) is exactly our fresh allocation.
                unsafe { crate::platform::advise_hugepages(r, total) };
                // SAFETY: r points to `total` writable bytes we own.
                unsafe { std::ptr::write_bytes(r, 0, total) };
            }
            r
        } else {
            // SAFETY: layout has a non-zero size (slot >= align >= 8 and count >= 1).
            unsafe { alloc_zeroed(layout) }
        };
        let ptr = NonNull::new(raw).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("cannot allocate {total} bytes of I/O buffers"),
            )
        })?;
        Ok(IoBuffers {
            ptr,
            backing: Backing::Heap(layout),
            slot,
            count,
        })
    }

    /// RTEMS has no System V shared memory.
    #[cfg(target_os = "rtems")]
    fn shm(len: usize, huge: bool) -> io::Result<(*mut std::ffi::c_void, Backing)> {
        let _ = (len, huge);
        Err(crate::platform::unsupported("System V shared memory"))
    }

    /// RTEMS's C library (as the libc crate binds it) has no mmap flags.
    #[cfg(target_os = "rtems")]
    fn map(
        len: usize,
        shared: bool,
        huge: bool,
        file: Option<&Path>,
    ) -> io::Result<(*mut std::ffi::c_void, Backing)> {
        let _ = (len, shared, huge, file);
        Err(crate::platform::unsupported("mmap(2) memory"))
    }

    /// A private System V segment of `len` bytes, attached; marked for removal at once,
    /// so it goes when it is detached (or the process ends), whatever happens.
    #[cfg(not(target_os = "rtems"))]
    fn shm(len: usize, huge: bool) -> io::Result<(*mut std::ffi::c_void, Backing)> {
        let flags = libc::IPC_CREAT | 0o600 | if huge { shm_huge_flag()? } else { 0 };
        // SAFETY: plain system call with integer arguments.
        let id = unsafe { libc::shmget(libc::IPC_PRIVATE, len, flags) };
        if id < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: attaching the segment just created at an address the kernel chooses.
        let base = unsafe { libc::shmat(id, std::ptr::null(), 0) };
        let attach_err = io::Error::last_os_error();
        // SAFETY: removing the segment id created above (no buffer argument needed).
        unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
        if base as isize == -1 {
            return Err(attach_err);
        }
        Ok((base, Backing::Shm { base }))
    }

    /// An mmap(2) of `len` bytes: anonymous, or of `file` (created and sized if needed).
    #[cfg(not(target_os = "rtems"))]
    fn map(
        len: usize,
        shared: bool,
        huge: bool,
        file: Option<&Path>,
    ) -> io::Result<(*mut std::ffi::c_void, Backing)> {
        use rustix::mm::{MapFlags, ProtFlags};
        let prot = ProtFlags::READ | ProtFlags::WRITE;
        let flags = if shared || huge {
            MapFlags::SHARED
        } else {
            MapFlags::PRIVATE
        };
        let Some(path) = file else {
            let flags = if huge {
                flags | map_huge_flag()?
            } else {
                flags
            };
            // SAFETY: a fresh anonymous mapping at an address the kernel chooses.
            let base =
                unsafe { rustix::mm::mmap_anonymous(std::ptr::null_mut(), len, prot, flags) }
                    .map_err(os_err)?;
            return Ok((
                base,
                Backing::Map {
                    base,
                    len,
                    remove: None,
                },
            ));
        };
        let existed = path.exists();
        let fd = rustix::fs::open(
            path,
            rustix::fs::OFlags::RDWR | rustix::fs::OFlags::CREATE | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::from_raw_mode(0o644),
        )
        .map_err(|e| {
            io::Error::new(
                os_err(e).kind(),
                format!("{}: {}", path.display(), os_err(e)),
            )
        })?;
        let remove = (!existed).then(|| path.to_path_buf());
        let cleanup = |e: io::Error| {
            if let Some(p) = &remove {
                let _ = std::fs::remove_file(p);
            }
            e
        };
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if huge {
            // mmaphuge:<file> takes its huge pages from the file: it must be on hugetlbfs.
            const HUGETLBFS_MAGIC: i64 = 0x9584_58f6;
            let st = rustix::fs::fstatfs(&fd).map_err(os_err).map_err(cleanup)?;
            if st.f_type as i64 != HUGETLBFS_MAGIC {
                return Err(cleanup(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{} is not on a hugetlbfs file system (mount one and put the file there)",
                        path.display()
                    ),
                )));
            }
        }
        let size = rustix::fs::fstat(&fd)
            .map_err(os_err)
            .map_err(cleanup)?
            .st_size as u64;
        if size < len as u64 {
            rustix::fs::ftruncate(&fd, len as u64)
                .map_err(os_err)
                .map_err(cleanup)?;
        }
        // SAFETY: a fresh mapping of our open file at an address the kernel chooses; the
        // mapping stays valid after the descriptor is closed.
        let base = unsafe { rustix::mm::mmap(std::ptr::null_mut(), len, prot, flags, &fd, 0) }
            .map_err(os_err)
            .map_err(cleanup)?;
        Ok((base, Backing::Map { base, len, remove }))
    }

    pub fn slot_size(&self) -> usize {
        self.slot
    }
    pub fn count(&self) -> usize {
        self.count
    }

    /// Raw pointer to slot `i` (for engines: stays valid while `self` lives).
    #[inline]
    pub fn ptr(&self, i: usize) -> *mut u8 {
        assert!(i < self.count, "buffer slot {i} out of range");
        // SAFETY: i < count, so the offset stays within the allocation.
        unsafe { self.ptr.as_ptr().add(i * self.slot) }
    }

    /// Slot `i` as a mutable slice.
    #[inline]
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        let p = self.ptr(i);
        // SAFETY: p points to `slot` initialised (zeroed) bytes inside our allocation, and
        // &mut self guarantees no other reference to them exists.
        unsafe { std::slice::from_raw_parts_mut(p, self.slot) }
    }

    #[inline]
    pub fn slot_ref(&self, i: usize) -> &[u8] {
        let p = self.ptr(i);
        // SAFETY: as in slot_mut, shared access under &self.
        unsafe { std::slice::from_raw_parts(p, self.slot) }
    }
}

impl Drop for IoBuffers {
    fn drop(&mut self) {
        match &self.backing {
            // SAFETY: ptr was allocated with exactly this layout and is freed once.
            Backing::Heap(layout) => unsafe { dealloc(self.ptr.as_ptr(), *layout) },
            #[cfg(not(target_os = "rtems"))]
            Backing::Map { base, len, remove } => {
                // SAFETY: the mapping made in `map`, unmapped once, here.
                let _ = unsafe { rustix::mm::munmap(*base, *len) };
                if let Some(p) = remove {
                    let _ = std::fs::remove_file(p);
                }
            }
            #[cfg(not(target_os = "rtems"))]
            Backing::Shm { base } => {
                // SAFETY: the segment attached in `shm`, detached once, here (it was
                // marked for removal then, so this frees it).
                unsafe { libc::shmdt(*base) };
            }
        }
    }
}

/// Memory pinned with mlock(2) for a job's run (fio's `lockmem`): an anonymous private
/// mapping, touched and locked so the rest of the system has that much less memory.
/// Unlocked and unmapped when dropped.
pub struct LockedMem {
    // RTEMS never makes one (`new` refuses), so nothing reads it there.
    #[cfg_attr(target_os = "rtems", allow(dead_code))]
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is exclusively owned by this value and only ever unmapped by it.
unsafe impl Send for LockedMem {}

impl LockedMem {
    /// RTEMS: not supported by flexio (no mmap flags in its C library's bindings; RTEMS
    /// does not page memory out anyway).
    #[cfg(target_os = "rtems")]
    pub fn new(len: usize) -> io::Result<LockedMem> {
        let _ = len;
        Err(crate::platform::unsupported("lockmem (mlock of a mapping)"))
    }

    /// Map and lock `len` bytes (`len` > 0).
    #[cfg(not(target_os = "rtems"))]
    pub fn new(len: usize) -> io::Result<LockedMem> {
        if len == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "nothing to lock",
            ));
        }
        // SAFETY: a fresh anonymous private mapping at an address the kernel chooses; it
        // aliases nothing.
        let raw = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                len,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::PRIVATE,
            )
        }
        .map_err(|e| io::Error::from_raw_os_error(e.raw_os_error()))?;
        let ptr =
            NonNull::new(raw.cast::<u8>()).ok_or_else(|| io::Error::other("mmap gave null"))?;
        // SAFETY: [ptr, ptr + len) is the mapping made above, owned here.
        if let Err(e) = unsafe { rustix::mm::mlock(raw, len) } {
            // SAFETY: unmapping exactly the mapping made above, not used afterwards.
            let _ = unsafe { rustix::mm::munmap(raw, len) };
            return Err(io::Error::from_raw_os_error(e.raw_os_error()));
        }
        Ok(LockedMem { ptr, len })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(not(target_os = "rtems"))]
impl Drop for LockedMem {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unlocked and unmapped once, here.
        unsafe {
            let _ = rustix::mm::munlock(self.ptr.as_ptr().cast(), self.len);
            let _ = rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

/// SHM_HUGETLB, where the system has it.
#[cfg(not(target_os = "rtems"))]
fn shm_huge_flag() -> io::Result<i32> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        Ok(libc::SHM_HUGETLB)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "huge-page shared memory (SHM_HUGETLB) is Linux only",
        ))
    }
}

/// MAP_HUGETLB, where the system has it.
#[cfg(not(target_os = "rtems"))]
fn map_huge_flag() -> io::Result<rustix::mm::MapFlags> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        Ok(rustix::mm::MapFlags::HUGETLB)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "anonymous huge-page mappings (MAP_HUGETLB) are Linux only",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// VmLck of this process (KiB).
    fn vm_locked_kib() -> u64 {
        std::fs::read_to_string("/proc/self/status")
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmLck:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    #[test]
    fn locked_memory_is_locked_until_dropped() {
        let before = vm_locked_kib();
        let m = match LockedMem::new(4 << 20) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("SKIP: mlock refused ({e}): RLIMIT_MEMLOCK too low");
                return;
            }
        };
        assert_eq!(m.len(), 4 << 20);
        // Other tests of this process may lock memory at the same time: at least ours.
        assert!(vm_locked_kib() >= before + 4096, "{}", vm_locked_kib());
        drop(m);
        assert!(LockedMem::new(0).is_err());
    }

    #[test]
    fn slots_are_aligned_and_distinct() {
        let mut b = IoBuffers::new(4, 5000, 4096, true).unwrap();
        assert_eq!(b.slot_size(), 8192);
        for i in 0..4 {
            assert_eq!(b.ptr(i) as usize % 4096, 0);
            b.slot_mut(i).fill(i as u8);
        }
        for i in 0..4 {
            assert!(b.slot_ref(i).iter().all(|x| *x == i as u8));
        }
    }

    /// Whether the kernel offers transparent huge pages on madvise.
    fn thp_available() -> bool {
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .map(|s| !s.contains("[never]"))
            .unwrap_or(false)
    }

    /// AnonHugePages (KiB) of the mapping holding `addr`, from /proc/self/smaps.
    fn huge_kib_at(addr: usize) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let first = line.split_whitespace().next().unwrap_or("");
            if let Some((a, b)) = first.split_once('-') {
                if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                {
                    inside = a <= addr && addr < b;
                    continue;
                }
            }
            if inside {
                if let Some(v) = line.strip_prefix("AnonHugePages:") {
                    return v.trim().trim_end_matches("kB").trim().parse().ok();
                }
            }
        }
        None
    }

    #[test]
    fn large_buffers_are_huge_page_aligned_zeroed_and_backed() {
        let mut b = IoBuffers::new(1, 1 << 20, 4096, true).unwrap();
        assert_eq!(b.ptr(0) as usize % HUGE, 0);
        assert!(b.slot_ref(0).iter().all(|x| *x == 0));
        b.slot_mut(0).fill(7);
        let small = IoBuffers::new(1, 1 << 20, 4096, false).unwrap();
        assert_eq!(small.ptr(0) as usize % 4096, 0);
        if !thp_available() {
            eprintln!("SKIP: transparent huge pages are disabled ([never]); backing not checked");
            return;
        }
        let kib = huge_kib_at(b.ptr(0) as usize).unwrap_or(0);
        if kib == 0 {
            // The kernel may find no free 2 MiB page (fragmented memory): not an error of
            // ours, but say so.
            eprintln!("SKIP: no huge page was available for the buffer");
            return;
        }
        assert!(kib >= 2048, "{kib}");
    }
}
