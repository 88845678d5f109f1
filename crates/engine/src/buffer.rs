//! Aligned I/O buffers: one allocation holding a fixed-size slot per in-flight request, so
//! buffers never move and O_DIRECT alignment holds.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::io;
use std::ptr::NonNull;

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
    pub fn new(count: usize, slot_size: usize, align: usize) -> io::Result<Self> {
        let align = align.max(8).next_power_of_two();
        let slot = slot_size.max(1).div_ceil(align) * align;
        let total = slot.checked_mul(count.max(1)).ok_or_else(|| {
            io::Error::new(io::ErrorKind::OutOfMemory, "I/O buffer size overflows")
        })?;
        let layout = Layout::from_size_align(total, align)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        // SAFETY: layout has a non-zero size (slot >= align >= 8 and count >= 1).
        let raw = unsafe { alloc_zeroed(layout) };
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
        let mut b = IoBuffers::new(4, 5000, 4096).unwrap();
        assert_eq!(b.slot_size(), 8192);
        for i in 0..4 {
            assert_eq!(b.ptr(i) as usize % 4096, 0);
            b.slot_mut(i).fill(i as u8);
        }
        for i in 0..4 {
            assert!(b.slot_ref(i).iter().all(|x| *x == i as u8));
        }
    }
}
