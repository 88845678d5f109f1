//! File setup: layout (fio's `extend_file` rules and messages), opening, cache invalidation
//! and pre-reading.

use crate::plan::ThreadPlan;
use flexio_engine::os;
use flexio_engine::os::fs::{Mode, OFlags};
use flexio_engine::platform::{fallocate, FallocMode};
use flexio_job::options::Fallocate;
use flexio_workload::fill::fill;
use flexio_workload::Taus88;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

fn ioerr(e: os::io::Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

fn create_parent(path: &Path) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        if !parent.as_os_str().is_empty() && !parent.exists() {
            std::fs::create_dir_all(parent)?;
            // fio creates missing directories with mode 0700.
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o700));
        }
    }
    Ok(())
}

/// Whether a thread's files need laying out, and the files that do.
pub fn files_to_lay_out(t: &ThreadPlan) -> Vec<usize> {
    if t.engine.caps.diskless || t.layout.on_open {
        return Vec::new();
    }
    t.files
        .iter()
        .enumerate()
        // Block devices are used as they are: never created, extended or truncated.
        .filter(|(_, f)| f.block.is_none())
        .filter(|(_, f)| {
            // Planning's look at the file stands when it found the file big enough (a
            // layout before this one only grows files); otherwise look again, since another
            // job's layout may have made it so.
            if f.seen.and_then(|s| s.len).is_some_and(|len| len >= f.need) {
                return false;
            }
            std::fs::metadata(&f.path)
                .map(|m| m.len() < f.need)
                .unwrap_or(true)
        })
        .map(|(i, _)| i)
        .collect()
}

/// fio's layout message for a thread: `name: Laying out IO file (1 file / 80MiB)`.
pub fn layout_message(t: &ThreadPlan, which: &[usize]) -> String {
    let total: u64 = which.iter().map(|i| t.files[*i].need).sum();
    if which.len() == 1 {
        format!(
            "{}: Laying out IO file ({} file / {}MiB)",
            t.name,
            which.len(),
            total >> 20
        )
    } else {
        format!(
            "{}: Laying out IO files ({} files / total {}MiB)",
            t.name,
            which.len(),
            total >> 20
        )
    }
}

/// The next transfer of a loop over `remaining` bytes in pieces of at most `cap`. The
/// remaining length may exceed `usize` on 32-bit targets, so the minimum is taken in u64
/// before narrowing (narrowing first turns 4 GiB + 1 into 1 and 4 GiB into 0).
fn chunk_len(remaining: u64, cap: usize) -> usize {
    remaining.min(cap as u64) as usize
}

/// Lay out the given files of a thread.
pub fn lay_out(t: &ThreadPlan, which: &[usize], readonly: bool) -> io::Result<()> {
    let l = &t.layout;
    if readonly {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "files would have to be created, but --readonly is set",
        ));
    }
    if !l.allow_create {
        let missing: Vec<_> = which
            .iter()
            .map(|i| &t.files[*i].path)
            .filter(|p| !p.exists())
            .collect();
        if let Some(p) = missing.first() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("'{}' does not exist and allow_file_create=0", p.display()),
            ));
        }
    }
    let mut rng = Taus88::new(t.buffers.fill_seed ^ 0x5a5a);
    // fill_device writes in the job's write block size, as fio lays files out: a file
    // system that is nearly full takes the same amount either way.
    let chunk_size = if l.fill {
        (t.header.bs[1].1 as usize).clamp(512, 1 << 20)
    } else {
        1 << 20
    };
    let mut chunk = vec![0u8; chunk_size];
    fill(&mut chunk, &t.buffers.fill, &mut rng);
    for &i in which {
        let f = &t.files[i];
        create_parent(&f.path)?;
        // Read jobs (and overwrite, and engines that cannot extend files) need real data.
        if l.write_data {
            let fd = os::fs::open(
                &f.path,
                OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o644),
            )
            .map_err(ioerr)?;
            if !l.fill {
                os::fs::ftruncate(&fd, f.need).map_err(ioerr)?;
            }
            let mut off = 0u64;
            while off < f.need {
                let n = chunk_len(f.need - off, chunk.len());
                let w = match os::io::pwrite(&fd, &chunk[..n], off) {
                    // fill_device: the file system is full, the file is as large as it gets.
                    Err(e)
                        if l.fill && (e == os::io::Errno::NOSPC || e == os::io::Errno::DQUOT) =>
                    {
                        break;
                    }
                    r => r.map_err(ioerr)?,
                };
                if w == 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "layout write made no progress",
                    ));
                }
                off += w as u64;
            }
            if l.create_fsync {
                os::fs::fsync(&fd).map_err(ioerr)?;
            }
        } else {
            let _ = std::fs::remove_file(&f.path);
            let fd = os::fs::open(
                &f.path,
                OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o644),
            )
            .map_err(ioerr)?;
            if !l.fill {
                // fill_device: nothing to allocate, the writes find the end.
                allocate(&fd, l.fallocate, f.need)?;
            }
            if l.create_fsync {
                os::fs::fsync(&fd).map_err(ioerr)?;
            }
        }
    }
    Ok(())
}

fn allocate(fd: &OwnedFd, mode: Fallocate, size: u64) -> io::Result<()> {
    match mode {
        Fallocate::None => Ok(()),
        Fallocate::Truncate => os::fs::ftruncate(fd, size).map_err(ioerr),
        Fallocate::Keep => match fallocate(fd.as_fd(), FallocMode::KeepSize, 0, size) {
            Ok(()) => Ok(()),
            Err(e) if e == os::io::Errno::OPNOTSUPP => Ok(()),
            Err(e) => Err(ioerr(e)),
        },
        Fallocate::Native | Fallocate::Posix => {
            match fallocate(fd.as_fd(), FallocMode::Extend, 0, size) {
                Ok(()) => Ok(()),
                // native falls back to no allocation where the file system cannot preallocate.
                Err(e) if e == os::io::Errno::OPNOTSUPP && mode == Fallocate::Native => Ok(()),
                Err(e) if e == os::io::Errno::OPNOTSUPP => {
                    os::fs::ftruncate(fd, size).map_err(ioerr)
                }
                Err(e) => Err(ioerr(e)),
            }
        }
    }
}

/// Open one file of a thread. A file the job itself creates here (not laid out before) gets
/// mode 0600, as fio's open gives it; the layout creates 0644 files.
pub fn open(path: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    if flags.contains(OFlags::CREATE) {
        create_parent(path)?;
    }
    os::fs::open(path, flags, Mode::from_raw_mode(0o600)).map_err(ioerr)
}

/// Drop the page cache of a file range (fio's `invalidate`).
pub fn invalidate(fd: impl AsFd, start: u64, len: u64) -> io::Result<()> {
    // A range past what a file offset can hold (fill_device's unbounded region): to the end.
    let len = if start.saturating_add(len) > i64::MAX as u64 {
        0
    } else {
        len
    };
    let len = std::num::NonZeroU64::new(len);
    os::fs::fadvise(fd, start, len, os::fs::Advice::DontNeed).map_err(ioerr)
}

/// Read a file range into the page cache (`pre_read`).
pub fn pre_read(fd: impl AsFd, start: u64, len: u64) -> io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    let mut off = start;
    while off < start + len {
        let n = chunk_len(start + len - off, buf.len());
        let r = os::io::pread(&fd, &mut buf[..n], off).map_err(ioerr)?;
        if r == 0 {
            break;
        }
        off += r as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_of_files_past_4_gib() {
        const MIB: usize = 1 << 20;
        assert_eq!(chunk_len(4 << 30, MIB), MIB);
        assert_eq!(chunk_len((4 << 30) + 1, MIB), MIB);
        assert_eq!(chunk_len((8 << 30) + 4096, MIB), MIB);
        assert_eq!(chunk_len(u64::MAX, MIB), MIB);
        assert_eq!(chunk_len(4096, MIB), 4096);
        assert_eq!(chunk_len(0, MIB), 0);
    }

    #[test]
    fn pre_read_reads_a_range_in_chunks() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, vec![7u8; (3 << 20) + 5]).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        pre_read(&f, 4096, (2 << 20) + 9).unwrap();
        // Past the end stops at the end instead of looping.
        pre_read(&f, 1 << 20, 8 << 30).unwrap();
    }
}
