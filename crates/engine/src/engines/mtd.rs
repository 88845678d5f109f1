//! `mtd`: raw flash through an MTD character device (`/dev/mtdN`), as fio's mtd engine.
//!
//! Reads and writes are pread/pwrite on the device (writes in whole pages of the device's
//! write size); a trim erases the erase blocks of its range (MEMERASE64), so a trim's
//! offset and length must be whole erase blocks. With `skip_bad`, a request on an erase
//! block the device marks bad (MEMGETBADBLOCK) is skipped: it completes without touching
//! the flash. The device's size comes from MEMGETINFO.

use crate::api::{Caps, Engine, EngineConfig, EngineDef, FileInfo, IoReq, Op, Queued};
use crate::device;
use crate::sync::{buf, fd, wbuf, SYNC_CAPS};
use crate::from_rustix;
use flexio_job::engine_opts::parse;
use flexio_job::table::{Kind, OptDef};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;

flexio_job::engine_options! {
    /// The mtd engine's options.
    pub struct MtdOpts; rows OPTIONS;
    /// Skip requests on erase blocks marked bad.
    skip_bad: bool = false,
        "skip_bad", Kind::Bool, "0", "Skip operations against known bad blocks.", parse::boolean;
}

/// `struct mtd_info_user` (<mtd/mtd-abi.h>).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MtdInfoUser {
    pub kind: u8,
    pub flags: u32,
    pub size: u32,
    pub erasesize: u32,
    pub writesize: u32,
    pub oobsize: u32,
    pub padding: u64,
}

/// `struct erase_info_user64`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EraseInfoUser64 {
    pub start: u64,
    pub length: u64,
}

pub const MEMGETINFO: u32 = 0x8020_4d01;
pub const MEMERASE64: u32 = 0x4010_4d14;
pub const MEMGETBADBLOCK: u32 = 0x4008_4d0b;

const NEEDS: &str = "an MTD character device (/dev/mtdN)";

/// MEMGETINFO of an open MTD device.
pub fn mtd_info(fd: RawFd) -> io::Result<MtdInfoUser> {
    let mut i = MtdInfoUser::default();
    // SAFETY: MEMGETINFO writes one mtd_info_user to the pointer given.
    let r = unsafe { libc::ioctl(fd, MEMGETINFO as _, &mut i as *mut MtdInfoUser) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(i)
}

/// The erase of a request's range: whole erase blocks only.
pub fn erase_range(offset: u64, len: u64, erasesize: u32) -> Result<EraseInfoUser64, String> {
    let eb = erasesize.max(1) as u64;
    if offset % eb != 0 || len % eb != 0 || len == 0 {
        return Err(format!(
            "mtd: a trim must cover whole erase blocks of {eb} bytes (offset {offset}, length {len})"
        ));
    }
    Ok(EraseInfoUser64 { start: offset, length: len })
}

/// The erase blocks a request touches (first, last), for the bad-block check.
pub fn erase_blocks(offset: u64, len: u64, erasesize: u32) -> (u64, u64) {
    let eb = erasesize.max(1) as u64;
    (offset / eb, (offset + len.max(1) - 1) / eb)
}

#[derive(Clone, Copy)]
struct Dev {
    info: MtdInfoUser,
}

pub struct Mtd {
    opts: MtdOpts,
    files: Vec<Option<Dev>>,
    last_error: Option<String>,
}

impl EngineDef for Mtd {
    const NAME: &'static str = "mtd";
    const HELP: &'static str = "Raw flash through an MTD character device (read, write, erase)";
    const OPTIONS: &'static [&'static [OptDef]] = &[OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        Mtd {
            opts: MtdOpts::from_values(&cfg.values),
            files: vec![None; cfg.nfiles.max(1) as usize],
            last_error: None,
        }
    }
    fn probe(cfg: &EngineConfig) -> Result<(), String> {
        device::each_target(cfg, "mtd", NEEDS, |path| {
            let n = device::node(
                path,
                "mtd",
                NEEDS,
                &format!("{path} is not a character device: the mtd engine needs {NEEDS}"),
            )?;
            if n != device::Node::Char {
                return Err(format!(
                    "{path} is a block device: the mtd engine needs {NEEDS}"
                ));
            }
            let fd = device::open_probe(path)
                .map_err(|e| format!("{path}: cannot open: {e}: the mtd engine needs {NEEDS}"))?;
            mtd_info(fd.as_raw_fd()).map_err(|e| {
                format!("{path}: not an MTD device (MEMGETINFO: {e}): the mtd engine needs {NEEDS}")
            })?;
            Ok(())
        })
    }
    fn device_size(path: &Path, _cfg: &EngineConfig) -> Result<Option<u64>, String> {
        let p = path.display().to_string();
        let fd = device::open_probe(&p).map_err(|e| format!("{p}: cannot open: {e}"))?;
        let i = mtd_info(fd.as_raw_fd()).map_err(|e| format!("{p}: MEMGETINFO: {e}"))?;
        Ok(Some(i.size as u64))
    }
}

impl Mtd {
    /// Whether any erase block of the request is marked bad.
    fn bad(&self, io: &IoReq, d: &Dev) -> io::Result<bool> {
        let (first, last) = erase_blocks(io.offset, io.len as u64, d.info.erasesize);
        for eb in first..=last {
            let off: i64 = (eb * d.info.erasesize.max(1) as u64) as i64;
            // SAFETY: MEMGETBADBLOCK reads one loff_t from the pointer given.
            let r = unsafe { libc::ioctl(io.fd, MEMGETBADBLOCK as _, &off as *const i64) };
            if r < 0 {
                let e = io::Error::last_os_error();
                // NOR flash has no bad blocks.
                if e.raw_os_error() == Some(libc::EOPNOTSUPP) {
                    return Ok(false);
                }
                return Err(e);
            }
            if r > 0 {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

impl Engine for Mtd {
    fn caps(&self) -> Caps {
        Caps {
            sync_range: false,
            // A request needs its device's geometry from open_file, which another
            // instance in a submitter thread does not have.
            offload: false,
            ..SYNC_CAPS
        }
    }
    fn open_file(&mut self, file: u32, f: &FileInfo) -> io::Result<()> {
        let info = mtd_info(f.fd).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("{} is not an MTD device (MEMGETINFO: {e})", f.path.display()),
            )
        })?;
        if let Some(s) = self.files.get_mut(file as usize) {
            *s = Some(Dev { info });
        }
        Ok(())
    }
    fn close_file(&mut self, file: u32) -> io::Result<()> {
        if let Some(s) = self.files.get_mut(file as usize) {
            *s = None;
        }
        Ok(())
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        let Some(d) = self.files.get(io.file as usize).copied().flatten() else {
            return Queued::Completed(-(libc::EBADF as i64));
        };
        if matches!(io.op, Op::Sync | Op::Datasync | Op::SyncRange) {
            return Queued::Completed(0);
        }
        if self.opts.skip_bad {
            match self.bad(io, &d) {
                Ok(true) => return Queued::Completed(io.len as i64),
                Ok(false) => {}
                Err(e) => return Queued::Completed(-(e.raw_os_error().unwrap_or(libc::EIO) as i64)),
            }
        }
        Queued::Completed(match io.op {
            Op::Read => from_rustix(rustix::io::pread(fd(io), buf(io), io.offset)),
            Op::Write => from_rustix(rustix::io::pwrite(fd(io), wbuf(io), io.offset)),
            Op::Trim => match erase_range(io.offset, io.len as u64, d.info.erasesize) {
                Ok(e) => {
                    // SAFETY: MEMERASE64 reads one erase_info_user64 from the pointer.
                    let r = unsafe { libc::ioctl(io.fd, MEMERASE64 as _, &e as *const EraseInfoUser64) };
                    if r < 0 {
                        -(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) as i64)
                    } else {
                        io.len as i64
                    }
                }
                Err(m) => {
                    self.last_error = Some(m);
                    -(libc::EINVAL as i64)
                }
            },
            Op::Sync | Op::Datasync | Op::SyncRange => 0,
        })
    }
    fn failed_op(&self) -> Option<String> {
        self.last_error.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structures_have_the_kernels_layout() {
        assert_eq!(std::mem::size_of::<MtdInfoUser>(), 32);
        let i = MtdInfoUser::default();
        let base = &i as *const MtdInfoUser as usize;
        assert_eq!(&i.size as *const u32 as usize - base, 8);
        assert_eq!(&i.erasesize as *const u32 as usize - base, 12);
        assert_eq!(&i.writesize as *const u32 as usize - base, 16);
        assert_eq!(std::mem::size_of::<EraseInfoUser64>(), 16);
        // _IOR('M', 1, 32 bytes), _IOW('M', 20, 16 bytes), _IOW('M', 11, loff_t).
        assert_eq!(MEMGETINFO, 2 << 30 | 32 << 16 | (b'M' as u32) << 8 | 1);
        assert_eq!(MEMERASE64, 1 << 30 | 16 << 16 | (b'M' as u32) << 8 | 20);
        assert_eq!(MEMGETBADBLOCK, 1 << 30 | 8 << 16 | (b'M' as u32) << 8 | 11);
    }

    #[test]
    fn erases_are_whole_blocks() {
        assert_eq!(
            erase_range(32768, 16384, 16384),
            Ok(EraseInfoUser64 {
                start: 32768,
                length: 16384
            })
        );
        assert!(erase_range(512, 16384, 16384).is_err());
        assert!(erase_range(0, 512, 16384).unwrap_err().contains("whole erase blocks"));
        assert_eq!(erase_blocks(16384 - 512, 1024, 16384), (0, 1));
        assert_eq!(erase_blocks(16384, 16384, 16384), (1, 1));
    }

    #[test]
    fn probe_names_what_is_missing() {
        let cfg = EngineConfig {
            filename: Some("/dev/mtd0-flexio-absent".into()),
            ..EngineConfig::default()
        };
        assert_eq!(
            Mtd::probe(&cfg).unwrap_err(),
            format!("/dev/mtd0-flexio-absent: no such device: the mtd engine needs {NEEDS}")
        );
        let cfg = EngineConfig {
            filename: Some("/dev/null".into()),
            ..EngineConfig::default()
        };
        let e = Mtd::probe(&cfg).unwrap_err();
        assert!(e.starts_with("/dev/null: not an MTD device (MEMGETINFO: "), "{e}");
    }
}
