//! `splice`: file I/O through a pipe, as fio's splice engine. A read splices the file's
//! range into the job's pipe (splice(2)) and copies it out to the request's buffer
//! (vmsplice(2)); a write maps the buffer into the pipe (vmsplice(2)) and splices the pipe
//! into the file at the request's offset. Each request completes in the call.

use crate::api::{Caps, Engine, EngineConfig, EngineDef, IoReq, Op, Queued};
use rustix::fd::{BorrowedFd, OwnedFd};
use rustix::pipe::SpliceFlags;
use std::io;

/// Pipe capacity asked for (the kernel may grant less; the granted size is used).
const PIPE_SIZE: usize = 1 << 20;

pub struct Splice {
    /// (read end, write end, capacity)
    pipe: Option<(OwnedFd, OwnedFd, usize)>,
}

fn neg(e: rustix::io::Errno) -> i64 {
    -(e.raw_os_error() as i64)
}

impl Splice {
    fn new_pipe() -> io::Result<(OwnedFd, OwnedFd, usize)> {
        let (r, w) = rustix::pipe::pipe().map_err(|e| io::Error::from_raw_os_error(e.raw_os_error()))?;
        let cap = rustix::pipe::fcntl_setpipe_size(&w, PIPE_SIZE)
            .or_else(|_| rustix::pipe::fcntl_getpipe_size(&w))
            .unwrap_or(1 << 16)
            .max(4096);
        Ok((r, w, cap))
    }

    fn read(&self, fd: BorrowedFd<'_>, buf: &mut [u8], mut off: u64) -> i64 {
        let Some((r, w, cap)) = self.pipe.as_ref() else {
            return -(libc::EINVAL as i64);
        };
        let mut done = 0usize;
        while done < buf.len() {
            let want = (buf.len() - done).min(*cap);
            let n = match rustix::pipe::splice(fd, Some(&mut off), w, None, want, SpliceFlags::MOVE) {
                Ok(0) => break,
                Ok(n) => n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) if done == 0 => return neg(e),
                Err(_) => break,
            };
            // Everything spliced in is copied out before the next round.
            let mut out = 0;
            while out < n {
                match crate::sys::vmsplice_to(r, &mut buf[done + out..done + n]) {
                    Ok(0) => return -(libc::EIO as i64),
                    Ok(k) => out += k,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
                }
            }
            done += n;
        }
        done as i64
    }

    fn write(&self, fd: BorrowedFd<'_>, buf: &[u8], mut off: u64) -> i64 {
        let Some((r, w, cap)) = self.pipe.as_ref() else {
            return -(libc::EINVAL as i64);
        };
        let mut done = 0usize;
        while done < buf.len() {
            let end = (done + *cap).min(buf.len());
            let k = match crate::sys::vmsplice_from(w, &buf[done..end]) {
                Ok(k) => k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if done == 0 => return -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
                Err(_) => break,
            };
            let mut out = 0;
            while out < k {
                match rustix::pipe::splice(r, None, fd, Some(&mut off), k - out, SpliceFlags::MOVE) {
                    Ok(0) => return -(libc::EIO as i64),
                    Ok(n) => out += n,
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(e) => return neg(e),
                }
            }
            done += k;
        }
        done as i64
    }
}

impl EngineDef for Splice {
    const NAME: &'static str = "splice";
    const HELP: &'static str = "File I/O through a pipe with splice(2) and vmsplice(2)";
    fn build(_: &EngineConfig) -> Self {
        Splice { pipe: None }
    }
}

impl Engine for Splice {
    fn caps(&self) -> Caps {
        Caps {
            syncio: true,
            ..Caps::default()
        }
    }
    fn init(&mut self) -> io::Result<()> {
        self.pipe = Some(Self::new_pipe()?);
        Ok(())
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        // SAFETY: the core keeps the file open while a request on it is outstanding, and
        // the request's descriptor is that file's.
        let fd = unsafe { BorrowedFd::borrow_raw(io.fd) };
        let res = match io.op {
            Op::Read => {
                // SAFETY: `buf` points to `len` bytes the core owns and does not touch until
                // this request completes (inside this call).
                let buf = unsafe { std::slice::from_raw_parts_mut(io.buf, io.len) };
                self.read(fd, buf, io.offset)
            }
            Op::Write => {
                // SAFETY: as above; only read here.
                let buf = unsafe { std::slice::from_raw_parts(io.buf, io.len) };
                self.write(fd, buf, io.offset)
            }
            Op::Sync => rustix::fs::fsync(fd).map_or_else(neg, |_| 0),
            Op::Datasync => rustix::fs::fdatasync(fd).map_or_else(neg, |_| 0),
            // The plan refuses sync_file_range for engines without Caps::sync_range.
            Op::Trim | Op::SyncRange => -(libc::EINVAL as i64),
        };
        if res < 0 {
            // A failed transfer may leave bytes in the pipe: start the next one clean.
            if let Ok(p) = Self::new_pipe() {
                self.pipe = Some(p);
            }
        }
        Queued::Completed(res)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn write_then_read_back() {
        let d = tempfile::tempdir().unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(d.path().join("f"))
            .unwrap();
        let mut e = Splice::build(&EngineConfig::default());
        e.init().unwrap();
        // Larger than any pipe, at an offset.
        let mut data: Vec<u8> = (0..3 * 1024 * 1024 + 17).map(|i| (i % 251) as u8).collect();
        let req = |op, buf: &mut Vec<u8>| IoReq {
            idx: 0,
            op,
            file: 0,
            fd: f.as_raw_fd(),
            offset: 4096,
            buf: buf.as_mut_ptr(),
            len: buf.len(),
            ioprio: 0,
            sync_flags: 0,
        };
        let n = data.len() as i64;
        assert_eq!(e.queue(&req(Op::Write, &mut data)), Queued::Completed(n));
        let mut back = vec![0u8; data.len()];
        assert_eq!(e.queue(&req(Op::Read, &mut back)), Queued::Completed(n));
        assert!(back == data);
        let on_disk = std::fs::read(d.path().join("f")).unwrap();
        assert_eq!(&on_disk[4096..], &data[..]);
    }
}
