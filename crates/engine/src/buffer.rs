//! Aligned I/O buffers: one allocation holding a fixed-size slot per in-flight request, so
//! buffers never move and O_DIRECT alignment holds.

use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
use std::io;
use std::ptr::NonNull;

/// Size of a transparent huge page (x86-64, arm64 with 4 KiB pages).
const HUGE: usize = 2 << 20;
/// Buffers from this size on go on huge pages (with `thp`).
pub const HUGE_FROM: usize = 1 << 20;

pub struct IoBuffers {
    ptr: NonNull<u8>,
    layout: Layout,
    slot: usize,
    count: usize,
}

// SAFETY: the allocation is exclusively owned by this value; moving it to another thread
// moves that ownership.
unsafe impl Send for IoBuffers {}

impl IoBuffers {
    /// `count` slots of at least `slot_size` bytes, each aligned to `align` (a power of two).
    /// With `thp`, an allocation of [`HUGE_FROM`] bytes or more is laid out in whole 2 MiB
    /// pages and advised to be backed by transparent huge pages: physically contiguous, so
    /// a large O_DIRECT request is not split for having more scattered pages than the
    /// device takes segments (with 4 KiB pages that happens or not by the chance of where
    /// the pages landed, and the results vary with it).
    pub fn new(count: usize, slot_size: usize, align: usize, thp: bool) -> io::Result<Self> {
        let align = align.max(8).next_power_of_two();
        let slot = slot_size.max(1).div_ceil(align) * align;
        let total = slot.checked_mul(count.max(1)).ok_or_else(|| {
            io::Error::new(io::ErrorKind::OutOfMemory, "I/O buffer size overflows")
        })?;
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
            layout,
            slot,
            count: count.max(1),
        })
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
        // SAFETY: ptr was allocated with exactly this layout and is freed once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
