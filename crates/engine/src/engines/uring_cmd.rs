//! `io_uring_cmd`: NVMe commands through io_uring passthrough (IORING_OP_URING_CMD) on an
//! NVMe namespace's generic character device (`/dev/ngXnY`), as fio's io_uring_cmd engine.
//!
//! The ring has 128-byte submission and 32-byte completion entries (IORING_SETUP_SQE128 |
//! CQE32); each request carries a `struct nvme_uring_cmd` (<linux/nvme_ioctl.h>) with the
//! NVMe command: Read (0x02) and, for writes, the command `write_mode` names (Write 0x01,
//! Write Uncorrectable 0x04, Write Zeroes 0x08 with `deac`, Verify 0x0c; or a mix of them);
//! Flush (0x00) for syncs and Dataset Management (0x09, deallocate) for trims. The starting
//! LBA goes to CDW10/11, the 0-based block count to CDW12 with FUA (bit 30, `readfua` /
//! `writefua`) and the protection information bits (PRACT bit 29, PRCHK bits 28-26 from
//! `pi_act` / `pi_chk`); CDW14/15 carry the reference and application tags. The namespace's
//! id comes from NVME_IOCTL_ID, its block size, capacity and metadata format from Identify
//! Namespace. The io_uring options (`hipri`, `fixedbufs`, `registerfiles`, `sqthread_poll`,
//! `nonvectored`, ...) work as for io_uring; `nonvectored` (default) sends the buffer's
//! address (NVME_URING_CMD_IO), `nonvectored=0` an iovec (NVME_URING_CMD_IO_VEC).

use crate::api::{Caps, Completion, Engine, EngineConfig, EngineDef, FileInfo, IoReq, Op, Queued};
use crate::buffer::IoBuffers;
use crate::device;
use crate::uring::{
    reap_ring, register_buffers, register_file, setup_ring, CmdType, PiChecks, PiOpts, UringOpts,
};
use flexio_job::engine_opts::parse;
use flexio_job::table::{Kind, OptDef};
use io_uring::{cqueue, opcode, squeue, types};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;

/// What a write becomes (`write_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    Write,
    Uncor,
    Zeroes,
    Verify,
    ZoneAppend,
}

const WRITE_MODES: &[(&str, WriteMode)] = &[
    ("write", WriteMode::Write),
    ("uncor", WriteMode::Uncor),
    ("zeroes", WriteMode::Zeroes),
    ("verify", WriteMode::Verify),
    ("zone_append", WriteMode::ZoneAppend),
];

/// `write_mode`: one mode, or a mix `mode/pct:mode/pct...` (at least two entries; an entry
/// without a percentage gets an equal share of what the others leave; the shares total 100).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteMix(pub Vec<(WriteMode, u32)>);

impl Default for WriteMix {
    fn default() -> Self {
        WriteMix(vec![(WriteMode::Write, 100)])
    }
}

impl WriteMix {
    pub fn parse(s: &str) -> Result<WriteMix, String> {
        let mode = |n: &str| {
            WRITE_MODES
                .iter()
                .find(|(m, _)| *m == n)
                .map(|(_, w)| *w)
                .ok_or_else(|| {
                    format!("'{n}' is not a valid value; valid values: write, uncor, zeroes, verify, zone_append")
                })
        };
        if !s.contains(':') && !s.contains('/') {
            return Ok(WriteMix(vec![(mode(s)?, 100)]));
        }
        let parts: Vec<&str> = s.split(':').collect();
        if parts.len() < 2 {
            return Err(format!("'{s}': a write_mode mix needs at least two entries"));
        }
        let mut entries: Vec<(WriteMode, Option<u32>)> = Vec::new();
        for p in parts {
            let (m, pct) = match p.split_once('/') {
                Some((m, "")) => (m, None),
                Some((m, n)) => (
                    m,
                    Some(
                        n.parse::<u32>()
                            .ok()
                            .filter(|v| *v <= 100)
                            .ok_or_else(|| format!("'{p}': bad percentage in write_mode"))?,
                    ),
                ),
                None => (p, None),
            };
            entries.push((mode(m)?, pct));
        }
        let given: u32 = entries.iter().filter_map(|e| e.1).sum();
        let blanks = entries.iter().filter(|e| e.1.is_none()).count() as u32;
        if given > 100 || (blanks == 0 && given != 100) {
            return Err(format!("'{s}': write_mode percentages must total 100"));
        }
        let mut left = 100 - given;
        let mut out = Vec::new();
        let mut seen = 0;
        for (m, p) in entries {
            let pct = match p {
                Some(v) => v,
                None => {
                    seen += 1;
                    // The last blank entry takes the remainder of the division.
                    let share = if seen == blanks { left } else { (100 - given) / blanks };
                    left -= share;
                    share
                }
            };
            out.push((m, pct));
        }
        Ok(WriteMix(out))
    }

    /// The mode for a draw in 0..100.
    pub fn pick(&self, draw: u32) -> WriteMode {
        let mut acc = 0;
        for (m, p) in &self.0 {
            acc += p;
            if draw < acc {
                return *m;
            }
        }
        self.0.last().map(|e| e.0).unwrap_or(WriteMode::Write)
    }
}

flexio_job::engine_options! {
    /// io_uring_cmd's own options (beyond the io_uring table it shares).
    pub struct CmdOpts; rows CMD_OPTIONS;
    /// FUA on reads (fio 3.38+).
    readfua: bool = false,
        "readfua", Kind::Bool, "0", "Set FUA flag (force unit access) for all Read operations",
        parse::boolean, since "3.38";
    /// FUA on writes (fio 3.38+).
    writefua: bool = false,
        "writefua", Kind::Bool, "0", "Set FUA flag (force unit access) for all Write operations",
        parse::boolean, since "3.38";
    /// The command writes become.
    write_mode: WriteMix = WriteMix::default(),
        "write_mode", Kind::Str, "write",
        "Issue Write, Write Uncorrectable, Write Zeroes, Verify or Zone Append for writes (or a mix mode/pct:...)",
        |v, _| WriteMix::parse(flexio_job::table::req(v)?), since "3.38";
    /// DEAC on Write Zeroes (fio 3.39+).
    deac: bool = false,
        "deac", Kind::Bool, "0", "Set DEAC (deallocate) flag for write zeroes command",
        parse::boolean, since "3.39";
    /// How the verify phase reads back (fio 3.38+).
    verify_mode: VerifyMode = VerifyMode::Read,
        "verify_mode", Kind::Choice(&[
            ("read", "Use Read commands for data verification"),
            ("compare", "Use Compare commands for data verification"),
        ]), "read", "Set verify mode",
        |v, _| parse::choice(v, &[("read", VerifyMode::Read), ("compare", VerifyMode::Compare)]),
        since "3.38";
    /// bsg: CDB size (0 = the smallest that holds the request).
    cdb_len: u8 = 0,
        "cdb_len", Kind::Choice(&[
            ("0", "Choose the CDB size automatically"),
            ("10", "10-byte CDBs"),
            ("16", "16-byte CDBs"),
            ("32", "32-byte CDBs"),
        ]), "0", "SCSI CDB length for cmd_type=bsg",
        |v, _| parse::choice(v, &[("0", 0u8), ("10", 10), ("16", 16), ("32", 32)]), since "post-3.42";
    /// bsg: READ or PRE-FETCH for reads.
    read_mode: u8 = 0,
        "read_mode", Kind::Choice(&[
            ("read", "Issue SCSI READ commands"),
            ("prefetch", "Issue SCSI PRE-FETCH commands (no data moved)"),
        ]), "read", "SCSI read command for cmd_type=bsg",
        |v, _| parse::choice(v, &[("read", 0u8), ("prefetch", 1)]), since "post-3.42";
    /// bsg: BYTCHK of VERIFY for write_mode=verify.
    verify_bytchk: u8 = 0,
        "verify_bytchk", Kind::Choice(&[
            ("0", "BYTCHK 00: the medium only"),
            ("1", "BYTCHK 01: compare with the data sent"),
            ("3", "BYTCHK 11: compare every block with the one block sent"),
        ]), "0", "BYTCHK of SCSI VERIFY for cmd_type=bsg",
        |v, _| parse::choice(v, &[("0", 0u8), ("1", 1), ("3", 3)]), since "post-3.42";
}

/// `verify_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyMode {
    Read,
    Compare,
}

flexio_job::engine_options! {
    /// io_uring_cmd's protection information option beyond those it shares with io_uring
    /// (`crate::uring::PI_OPTIONS`).
    pub struct PiMaskOpts; rows PI_MASK;
    /// Which application tag bits the device checks.
    apptag_mask: u16 = 0xffff,
        "apptag_mask", Kind::Int { min: 0, max: 0xffff }, "0xffff",
        "Application tag mask for protection information",
        |v, kb| parse::int(v, kb, 0, 0xffff).map(|n| n as u16), since "3.36";
}

// ---- NVMe command encoding (NVM command set), pure and unit-tested

/// `struct nvme_uring_cmd` (<linux/nvme_ioctl.h>), also the layout of `struct
/// nvme_passthru_cmd` up to `timeout_ms`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NvmeCmd {
    pub opcode: u8,
    pub flags: u8,
    pub rsvd1: u16,
    pub nsid: u32,
    pub cdw2: u32,
    pub cdw3: u32,
    pub metadata: u64,
    pub addr: u64,
    pub metadata_len: u32,
    pub data_len: u32,
    pub cdw10: u32,
    pub cdw11: u32,
    pub cdw12: u32,
    pub cdw13: u32,
    pub cdw14: u32,
    pub cdw15: u32,
    pub timeout_ms: u32,
    /// `rsvd2` of nvme_uring_cmd, `result` of nvme_passthru_cmd.
    pub rsvd2: u32,
}

impl NvmeCmd {
    /// The command as the 80 command bytes of a 128-byte submission entry.
    pub fn to_sqe_cmd(&self) -> [u8; 80] {
        let mut out = [0u8; 80];
        let w = |o: &mut [u8; 80], at: usize, b: &[u8]| o[at..at + b.len()].copy_from_slice(b);
        w(&mut out, 0, &[self.opcode, self.flags]);
        w(&mut out, 2, &self.rsvd1.to_ne_bytes());
        w(&mut out, 4, &self.nsid.to_ne_bytes());
        w(&mut out, 8, &self.cdw2.to_ne_bytes());
        w(&mut out, 12, &self.cdw3.to_ne_bytes());
        w(&mut out, 16, &self.metadata.to_ne_bytes());
        w(&mut out, 24, &self.addr.to_ne_bytes());
        w(&mut out, 32, &self.metadata_len.to_ne_bytes());
        w(&mut out, 36, &self.data_len.to_ne_bytes());
        for (i, d) in [
            self.cdw10, self.cdw11, self.cdw12, self.cdw13, self.cdw14, self.cdw15,
        ]
        .iter()
        .enumerate()
        {
            w(&mut out, 40 + 4 * i, &d.to_ne_bytes());
        }
        w(&mut out, 64, &self.timeout_ms.to_ne_bytes());
        out
    }
}

pub const NVME_CMD_FLUSH: u8 = 0x00;
pub const NVME_CMD_WRITE: u8 = 0x01;
pub const NVME_CMD_READ: u8 = 0x02;
pub const NVME_CMD_WRITE_UNCOR: u8 = 0x04;
pub const NVME_CMD_COMPARE: u8 = 0x05;
pub const NVME_CMD_WRITE_ZEROES: u8 = 0x08;
pub const NVME_CMD_DSM: u8 = 0x09;
pub const NVME_CMD_VERIFY: u8 = 0x0c;
pub const NVME_ADMIN_IDENTIFY: u8 = 0x06;
/// CDW12 bits of the read/write family.
pub const CDW12_FUA: u32 = 1 << 30;
pub const CDW12_PRACT: u32 = 1 << 29;
pub const CDW12_PRCHK_GUARD: u32 = 1 << 28;
pub const CDW12_PRCHK_APPTAG: u32 = 1 << 27;
pub const CDW12_PRCHK_REFTAG: u32 = 1 << 26;
pub const CDW12_DEAC: u32 = 1 << 25;
/// DSM attribute: deallocate.
pub const DSM_AD: u32 = 1 << 2;
pub const NVME_IOCTL_ID: u32 = 0x4e40;
pub const NVME_IOCTL_ADMIN_CMD: u32 = 0xc048_4e41;
pub const NVME_URING_CMD_IO: u32 = 0xc048_4e80;
pub const NVME_URING_CMD_IO_VEC: u32 = 0xc048_4e81;

/// Protection information settings of a request (CDW12 bits and the tags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pi {
    pub act: bool,
    pub chk: PiChecks,
    pub apptag: u16,
    pub apptag_mask: u16,
}

/// A command of the read/write family on `blocks` blocks from `slba` (the count is 0-based
/// in CDW12's low 16 bits).
#[allow(clippy::too_many_arguments)]
pub fn rw_cmd(
    opcode: u8,
    nsid: u32,
    slba: u64,
    blocks: u32,
    addr: u64,
    data_len: u32,
    fua: bool,
    pi: Option<&Pi>,
) -> NvmeCmd {
    let mut cdw12 = blocks.saturating_sub(1) & 0xffff;
    if fua {
        cdw12 |= CDW12_FUA;
    }
    let (mut cdw14, mut cdw15) = (0, 0);
    if let Some(p) = pi {
        if p.act {
            cdw12 |= CDW12_PRACT;
        }
        if p.chk.guard {
            cdw12 |= CDW12_PRCHK_GUARD;
        }
        if p.chk.apptag {
            cdw12 |= CDW12_PRCHK_APPTAG;
        }
        if p.chk.reftag {
            cdw12 |= CDW12_PRCHK_REFTAG;
            // Type 1/2: the expected initial reference tag is the LBA's low 32 bits.
            cdw14 = slba as u32;
        }
        cdw15 = (p.apptag_mask as u32) << 16 | p.apptag as u32;
    }
    NvmeCmd {
        opcode,
        nsid,
        addr,
        data_len,
        cdw10: slba as u32,
        cdw11: (slba >> 32) as u32,
        cdw12,
        cdw14,
        cdw15,
        ..NvmeCmd::default()
    }
}

/// One Dataset Management range (16 bytes: attributes, block count, starting LBA).
pub fn dsm_range(slba: u64, blocks: u32) -> [u8; 16] {
    let mut r = [0u8; 16];
    r[4..8].copy_from_slice(&blocks.to_le_bytes());
    r[8..16].copy_from_slice(&slba.to_le_bytes());
    r
}

/// Dataset Management, deallocate, of one range at `addr`.
pub fn dsm_cmd(nsid: u32, addr: u64) -> NvmeCmd {
    NvmeCmd {
        opcode: NVME_CMD_DSM,
        nsid,
        addr,
        data_len: 16,
        cdw10: 0,
        cdw11: DSM_AD,
        ..NvmeCmd::default()
    }
}

/// What Identify Namespace says about the formatted LBA size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NsInfo {
    pub nsid: u32,
    /// Namespace size in blocks.
    pub nsze: u64,
    pub lba_size: u32,
    /// Metadata bytes per block.
    pub ms: u16,
    /// Metadata interleaved with the data (extended LBA).
    pub ext: bool,
    /// Protection information type (0 = none).
    pub pi_type: u8,
}

impl NsInfo {
    /// Bytes one block occupies in the data buffer.
    pub fn block(&self) -> u32 {
        self.lba_size + if self.ext { self.ms as u32 } else { 0 }
    }
}

/// Parse an Identify Namespace data structure (4096 bytes).
pub fn parse_identify_ns(d: &[u8]) -> NsInfo {
    let u64le = |at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&d[at..at + 8]);
        u64::from_le_bytes(b)
    };
    let flbas = d[26];
    // FLBAS: format index bits 3:0, and 6:5 above 16 formats.
    let idx = (flbas & 0x0f) as usize | (((flbas >> 5) & 0x3) as usize) << 4;
    let lbaf = 128 + 4 * idx;
    let ms = u16::from_le_bytes([d[lbaf], d[lbaf + 1]]);
    let lbads = d[lbaf + 2];
    NsInfo {
        nsid: 0,
        nsze: u64le(0),
        lba_size: if (9..32).contains(&lbads) { 1 << lbads } else { 0 },
        ms,
        ext: flbas & 0x10 != 0,
        pi_type: d[29] & 0x7,
    }
}

/// The namespace id of an open generic device.
fn ns_id(fd: RawFd) -> io::Result<u32> {
    // SAFETY: NVME_IOCTL_ID takes no argument and returns the id.
    let r = unsafe { libc::ioctl(fd, NVME_IOCTL_ID as _) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r as u32)
}

/// Identify Namespace through the admin passthrough ioctl.
fn identify_ns(fd: RawFd) -> io::Result<NsInfo> {
    let nsid = ns_id(fd)?;
    let mut data = vec![0u8; 4096];
    let mut c = NvmeCmd {
        opcode: NVME_ADMIN_IDENTIFY,
        nsid,
        addr: data.as_mut_ptr() as u64,
        data_len: 4096,
        cdw10: 0,
        ..NvmeCmd::default()
    };
    // SAFETY: the command describes `data` (4096 writable bytes, alive for this synchronous
    // ioctl); the struct has the kernel's nvme_passthru_cmd layout.
    let r = unsafe { libc::ioctl(fd, NVME_IOCTL_ADMIN_CMD as _, &mut c as *mut NvmeCmd) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    if r > 0 {
        return Err(io::Error::other(format!(
            "Identify Namespace failed with NVMe status 0x{r:x}"
        )));
    }
    let mut i = parse_identify_ns(&data);
    i.nsid = nsid;
    Ok(i)
}

const NEEDS: &str = "an NVMe namespace's generic character device (/dev/ngXnY)";

// ---- the engine

pub struct UringCmd {
    uring: UringOpts,
    opts: CmdOpts,
    pi: PiOpts,
    apptag_mask: u16,
    depth: u32,
    nfiles: u32,
    ring: Option<crate::uring::Ring<squeue::Entry128, cqueue::Entry32>>,
    files: Vec<Option<NsInfo>>,
    iovecs: Vec<libc::iovec>,
    ranges: Vec<[u8; 16]>,
    /// What a request reports on success (its length; 0 for a flush), per slot.
    done: Vec<i64>,
    /// md_per_io_size bytes per request slot.
    md: Vec<u8>,
    pending: u32,
    inflight: u32,
    fixed: bool,
    counter: u32,
    seed: u32,
    last_error: Option<String>,
}

impl EngineDef for UringCmd {
    const NAME: &'static str = "io_uring_cmd";
    const HELP: &'static str = "NVMe commands through io_uring passthrough (IORING_OP_URING_CMD)";
    const OPTIONS: &'static [&'static [OptDef]] = &[
        crate::uring::OPTIONS,
        crate::cmdprio::OPTIONS,
        CMD_OPTIONS,
        crate::uring::PI_OPTIONS,
        PI_MASK,
    ];
    fn build(cfg: &EngineConfig) -> Self {
        let depth = cfg.iodepth.max(1) as usize;
        let pi = PiOpts::from_values(&cfg.values);
        UringCmd {
            apptag_mask: PiMaskOpts::from_values(&cfg.values).apptag_mask,
            uring: UringOpts::from_values(&cfg.values),
            opts: CmdOpts::from_values(&cfg.values),
            md: vec![0; pi.md_per_io_size as usize * depth],
            pi,
            depth: cfg.iodepth,
            nfiles: cfg.nfiles,
            ring: None,
            files: vec![None; cfg.nfiles.max(1) as usize],
            iovecs: vec![
                libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0
                };
                depth
            ],
            ranges: vec![[0; 16]; depth],
            done: vec![0; depth],
            pending: 0,
            inflight: 0,
            fixed: false,
            counter: 0,
            seed: cfg.seed | 1,
            last_error: None,
        }
    }
    fn probe(cfg: &EngineConfig) -> Result<(), String> {
        let o = UringOpts::from_values(&cfg.values);
        let c = CmdOpts::from_values(&cfg.values);
        if o.cmd_type == CmdType::Bsg {
            return Err(
                "cmd_type=bsg (SCSI commands through bsg passthrough) is not supported by flexio; cmd_type=nvme is".into(),
            );
        }
        if c.write_mode.0.iter().any(|(m, _)| *m == WriteMode::ZoneAppend) {
            return Err("write_mode=zone_append (Zone Append to zoned namespaces) is not supported by flexio".into());
        }
        if c.verify_mode == VerifyMode::Compare {
            return Err("verify_mode=compare (verification by NVMe Compare) is not supported by flexio; verify_mode=read is".into());
        }
        device::each_target(cfg, "io_uring_cmd", NEEDS, |path| {
            let n = device::node(
                path,
                "io_uring_cmd",
                NEEDS,
                "ioengine io_uring_cmd only works with nvme ns generic char devices (/dev/ngXnY)",
            )?;
            if n != device::Node::Char {
                return Err(format!(
                    "ioengine io_uring_cmd only works with nvme ns generic char devices (/dev/ngXnY); {path} is a block device"
                ));
            }
            let fd = device::open_probe(path).map_err(|e| {
                format!("{path}: cannot open: {e}: the io_uring_cmd engine needs {NEEDS}")
            })?;
            ns_id(fd.as_raw_fd()).map_err(|e| {
                format!("{path}: failed to fetch namespace-id (NVME_IOCTL_ID: {e}): the io_uring_cmd engine needs {NEEDS}")
            })?;
            Ok(())
        })?;
        let mut u = UringCmd::build(&EngineConfig {
            iodepth: 1,
            nfiles: 0,
            ..cfg.clone()
        });
        u.uring.registerfiles = false;
        u.init().map_err(|e| {
            format!("ioengine io_uring_cmd is not available on this system (128-byte submission entries, Linux 5.19+): {e}")
        })
    }
    fn device_size(path: &Path, _cfg: &EngineConfig) -> Result<Option<u64>, String> {
        let p = path.display().to_string();
        let fd = device::open_probe(&p).map_err(|e| format!("{p}: cannot open: {e}"))?;
        let i = identify_ns(fd.as_raw_fd()).map_err(|e| format!("{p}: {e}"))?;
        Ok(Some(i.nsze * i.lba_size as u64))
    }
}

impl UringCmd {
    fn pi(&self) -> Option<Pi> {
        (self.pi.md_per_io_size > 0 || self.pi.pi_chk.any() || !self.pi.pi_act).then_some(Pi {
            act: self.pi.pi_act,
            chk: self.pi.pi_chk,
            apptag: self.pi.apptag,
            apptag_mask: self.apptag_mask,
        })
    }

    /// A draw in 0..100 for the write mode mix (xorshift; the job's seed).
    fn draw(&mut self) -> u32 {
        let mut x = self.seed;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.seed = x;
        x % 100
    }
}

impl Engine for UringCmd {
    fn caps(&self) -> Caps {
        Caps {
            has_commit: true,
            no_slat: self.uring.sqthread_poll,
            trim: true,
            ..Caps::default()
        }
    }
    fn init(&mut self) -> io::Result<()> {
        self.ring = Some(setup_ring(&self.uring, self.depth, self.nfiles, |e, _| e)?);
        Ok(())
    }
    fn post_init(&mut self, bufs: &IoBuffers) -> io::Result<()> {
        if self.uring.fixedbufs {
            register_buffers(self.ring.as_ref(), bufs)?;
            self.fixed = true;
        }
        Ok(())
    }
    fn open_file(&mut self, file: u32, f: &FileInfo) -> io::Result<()> {
        let ns = identify_ns(f.fd).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("{}: failed to fetch namespace-id: {e}", f.path.display()),
            )
        })?;
        if ns.lba_size == 0 {
            return Err(io::Error::other(format!(
                "{}: Identify Namespace gives no usable LBA size",
                f.path.display()
            )));
        }
        if ns.ms > 0 && !ns.ext && !(self.pi.pi_act && ns.pi_type != 0 && ns.ms == 8)
            && self.pi.md_per_io_size == 0
        {
            return Err(io::Error::other(format!(
                "{}: the namespace has {} bytes of separate metadata per block: set md_per_io_size",
                f.path.display(),
                ns.ms
            )));
        }
        if let Some(s) = self.files.get_mut(file as usize) {
            *s = Some(ns);
        }
        if self.uring.registerfiles {
            register_file(self.ring.as_ref(), file, f.fd)?;
        }
        Ok(())
    }
    fn close_file(&mut self, file: u32) -> io::Result<()> {
        if let Some(s) = self.files.get_mut(file as usize) {
            *s = None;
        }
        if self.uring.registerfiles {
            let _ = register_file(self.ring.as_ref(), file, -1);
        }
        Ok(())
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        let Some(ns) = self.files.get(io.file as usize).copied().flatten() else {
            return Queued::Completed(-(libc::EBADF as i64));
        };
        let blk = ns.block() as u64;
        let i = io.idx as usize;
        let needs_blocks = matches!(io.op, Op::Read | Op::Write | Op::Trim);
        if needs_blocks && (io.offset % blk != 0 || io.len as u64 % blk != 0 || io.len == 0) {
            return Queued::Completed(-(libc::EINVAL as i64));
        }
        let slba = io.offset / blk;
        let blocks = (io.len as u64 / blk) as u32;
        let pi = self.pi();
        let md_size = self.pi.md_per_io_size;
        let (addr, data_len) = if self.uring.nonvectored == 0 {
            self.iovecs[i] = libc::iovec {
                iov_base: io.buf.cast(),
                iov_len: io.len,
            };
            (&self.iovecs[i] as *const libc::iovec as u64, 1)
        } else {
            (io.buf as u64, io.len as u32)
        };
        let cmd = match io.op {
            Op::Read => rw_cmd(NVME_CMD_READ, ns.nsid, slba, blocks, addr, data_len, self.opts.readfua, pi.as_ref()),
            Op::Write => {
                let mode = if self.opts.write_mode.0.len() > 1 {
                    let d = self.draw();
                    self.opts.write_mode.pick(d)
                } else {
                    self.opts.write_mode.0[0].0
                };
                let op = match mode {
                    WriteMode::Write => NVME_CMD_WRITE,
                    WriteMode::Uncor => NVME_CMD_WRITE_UNCOR,
                    WriteMode::Zeroes => NVME_CMD_WRITE_ZEROES,
                    WriteMode::Verify => NVME_CMD_VERIFY,
                    // Refused by the probe.
                    WriteMode::ZoneAppend => return Queued::Completed(-(libc::EINVAL as i64)),
                };
                // Only Write sends data.
                let (a, l) = if op == NVME_CMD_WRITE { (addr, data_len) } else { (0, 0) };
                let mut c = rw_cmd(op, ns.nsid, slba, blocks, a, l, self.opts.writefua, pi.as_ref());
                if op == NVME_CMD_WRITE_ZEROES && self.opts.deac {
                    c.cdw12 |= CDW12_DEAC;
                }
                c
            }
            Op::Trim => {
                self.ranges[i] = dsm_range(slba, blocks);
                dsm_cmd(ns.nsid, self.ranges[i].as_ptr() as u64)
            }
            Op::Sync | Op::Datasync | Op::SyncRange => NvmeCmd {
                opcode: NVME_CMD_FLUSH,
                nsid: ns.nsid,
                ..NvmeCmd::default()
            },
        };
        let mut cmd = cmd;
        self.done[i] = if matches!(io.op, Op::Sync | Op::Datasync | Op::SyncRange) {
            0
        } else {
            io.len as i64
        };
        if md_size > 0 && matches!(io.op, Op::Read | Op::Write) {
            let md = &mut self.md[i * md_size as usize..(i + 1) * md_size as usize];
            cmd.metadata = md.as_mut_ptr() as u64;
            cmd.metadata_len = md_size as u32;
        }
        let cmd_op = if self.uring.nonvectored == 0 {
            NVME_URING_CMD_IO_VEC
        } else {
            NVME_URING_CMD_IO
        };
        let bytes = cmd.to_sqe_cmd();
        let fixed = self.fixed && self.uring.nonvectored != 0 && matches!(io.op, Op::Read | Op::Write);
        let reg = self.uring.registerfiles;
        let Some(ring) = self.ring.as_mut() else {
            return Queued::Completed(-(libc::EINVAL as i64));
        };
        let build = |e: opcode::UringCmd80| {
            if fixed {
                e.buf_index(Some(0)).cmd(bytes).build()
            } else {
                e.cmd(bytes).build()
            }
        };
        let entry = if reg {
            build(opcode::UringCmd80::new(types::Fixed(io.file), cmd_op))
        } else {
            build(opcode::UringCmd80::new(types::Fd(io.fd), cmd_op))
        };
        let mut entry = entry.user_data(io.idx as u64);
        if self.uring.force_async > 0 {
            self.counter += 1;
            if self.counter % self.uring.force_async == 0 {
                entry = entry.flags(squeue::Flags::ASYNC);
            }
        }
        // SAFETY: every address in the command (the request's buffer, its iovec, DSM range
        // and metadata in this engine's slot vectors, never resized) stays valid until the
        // request completes.
        match unsafe { ring.submission().push(&entry) } {
            Ok(()) => {
                self.pending += 1;
                Queued::Queued
            }
            Err(_) => Queued::Busy,
        }
    }
    fn commit(&mut self) -> io::Result<usize> {
        match self.ring.as_mut() {
            Some(ring) => crate::uring::submit_pending(
                ring,
                &mut self.pending,
                &mut self.inflight,
                self.uring.sqthread_poll,
            ),
            None => Ok(0),
        }
    }
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<usize> {
        let Some(ring) = self.ring.as_mut() else {
            return Ok(0);
        };
        let (done, last_error) = (&self.done, &mut self.last_error);
        reap_ring(ring, &mut self.inflight, min, max, out, |cqe| {
            let idx = cqe.user_data() as u32;
            let res = match cqe.result() {
                0 => done.get(idx as usize).copied().unwrap_or(0),
                r if r < 0 => r as i64,
                status => {
                    *last_error = Some(format!("NVMe status 0x{status:x}"));
                    -(libc::EIO as i64)
                }
            };
            Completion { idx, res }
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
    fn uring_cmd_has_the_kernels_layout() {
        // <linux/nvme_ioctl.h>: 72 bytes; offsets of the fields the driver reads.
        assert_eq!(std::mem::size_of::<NvmeCmd>(), 72);
        let c = NvmeCmd::default();
        let base = &c as *const NvmeCmd as usize;
        assert_eq!(&c.nsid as *const u32 as usize - base, 4);
        assert_eq!(&c.metadata as *const u64 as usize - base, 16);
        assert_eq!(&c.addr as *const u64 as usize - base, 24);
        assert_eq!(&c.metadata_len as *const u32 as usize - base, 32);
        assert_eq!(&c.data_len as *const u32 as usize - base, 36);
        assert_eq!(&c.cdw10 as *const u32 as usize - base, 40);
        assert_eq!(&c.timeout_ms as *const u32 as usize - base, 64);
        // _IOWR('N', 0x80 / 0x81 / 0x41, 72 bytes), _IO('N', 0x40).
        assert_eq!(NVME_URING_CMD_IO, 3 << 30 | 72 << 16 | (b'N' as u32) << 8 | 0x80);
        assert_eq!(NVME_URING_CMD_IO_VEC, NVME_URING_CMD_IO + 1);
        assert_eq!(NVME_IOCTL_ADMIN_CMD, 3 << 30 | 72 << 16 | (b'N' as u32) << 8 | 0x41);
        assert_eq!(NVME_IOCTL_ID, (b'N' as u32) << 8 | 0x40);
        // The SQE's command bytes are the structure's bytes.
        let c = NvmeCmd {
            opcode: 2,
            nsid: 1,
            addr: 0x1122_3344_5566_7788,
            data_len: 4096,
            cdw10: 0xaabb_ccdd,
            ..NvmeCmd::default()
        };
        let b = c.to_sqe_cmd();
        // SAFETY (test): NvmeCmd is plain old data of 72 bytes.
        let raw: [u8; 72] = unsafe { std::mem::transmute(c) };
        assert_eq!(&b[..72], &raw[..]);
        assert_eq!(&b[72..], &[0; 8]);
    }

    #[test]
    fn read_write_commands() {
        // Read of 8 blocks at LBA 0x1_0000_0010: SLBA split over CDW10/11, NLB 0-based.
        let c = rw_cmd(NVME_CMD_READ, 1, 0x1_0000_0010, 8, 0x1000, 4096, false, None);
        assert_eq!((c.opcode, c.nsid, c.cdw10, c.cdw11, c.cdw12), (0x02, 1, 0x10, 1, 7));
        assert_eq!((c.addr, c.data_len, c.cdw13, c.cdw14, c.cdw15), (0x1000, 4096, 0, 0, 0));
        let c = rw_cmd(NVME_CMD_WRITE, 3, 5, 1, 0, 512, true, None);
        assert_eq!((c.opcode, c.cdw12), (0x01, 1 << 30), "FUA is CDW12 bit 30");
        let pi = Pi {
            act: true,
            chk: PiChecks::parse("GUARD,REFTAG").unwrap(),
            apptag: 0x1234,
            apptag_mask: 0xffff,
        };
        let c = rw_cmd(NVME_CMD_WRITE, 1, 0x1_2345_6789, 2, 0, 1024, false, Some(&pi));
        assert_eq!(c.cdw12, 1 | CDW12_PRACT | CDW12_PRCHK_GUARD | CDW12_PRCHK_REFTAG);
        assert_eq!(c.cdw14, 0x2345_6789, "reference tag: the LBA's low 32 bits");
        assert_eq!(c.cdw15, 0xffff_1234);
        assert_eq!(CDW12_PRCHK_APPTAG, 1 << 27);
        assert_eq!(CDW12_DEAC, 1 << 25);
    }

    #[test]
    fn trims_are_one_deallocate_range() {
        let r = dsm_range(0x0102_0304_0506_0708, 16);
        assert_eq!(r, [0, 0, 0, 0, 16, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1]);
        let c = dsm_cmd(1, 0x4000);
        assert_eq!((c.opcode, c.cdw10, c.cdw11, c.data_len), (0x09, 0, 4, 16));
    }

    #[test]
    fn identify_namespace() {
        let mut d = vec![0u8; 4096];
        d[0..8].copy_from_slice(&1_000_000u64.to_le_bytes());
        d[25] = 1; // two formats
        d[26] = 0x11; // format 1, extended LBA
        d[29] = 1; // PI type 1
        d[128 + 4..128 + 8].copy_from_slice(&[8, 0, 12, 0]); // ms 8, 4096-byte blocks
        let i = parse_identify_ns(&d);
        assert_eq!(
            i,
            NsInfo {
                nsid: 0,
                nsze: 1_000_000,
                lba_size: 4096,
                ms: 8,
                ext: true,
                pi_type: 1
            }
        );
        assert_eq!(i.block(), 4104);
        d[26] = 0x00;
        d[128..132].copy_from_slice(&[0, 0, 9, 0]);
        let i = parse_identify_ns(&d);
        assert_eq!((i.lba_size, i.ms, i.ext, i.block()), (512, 0, false, 512));
    }

    #[test]
    fn write_mode_mixes() {
        assert_eq!(WriteMix::parse("zeroes").unwrap().0, vec![(WriteMode::Zeroes, 100)]);
        let m = WriteMix::parse("write/50:zeroes/30:uncor/").unwrap();
        assert_eq!(
            m.0,
            vec![(WriteMode::Write, 50), (WriteMode::Zeroes, 30), (WriteMode::Uncor, 20)]
        );
        let m = WriteMix::parse("write/10:verify:zeroes").unwrap();
        assert_eq!(m.0[1].1 + m.0[2].1, 90);
        assert_eq!((m.pick(0), m.pick(9), m.pick(10), m.pick(99)), (
            WriteMode::Write,
            WriteMode::Write,
            WriteMode::Verify,
            WriteMode::Zeroes
        ));
        for bad in ["write/50", "write/50:zeroes/40", "write/60:zeroes/60", "nope", "write/x:zeroes/"] {
            assert!(WriteMix::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn probe_names_what_is_missing() {
        let cfg = EngineConfig {
            filename: Some("/dev/ng0n1-flexio-absent".into()),
            iodepth: 1,
            ..EngineConfig::default()
        };
        assert_eq!(
            UringCmd::probe(&cfg).unwrap_err(),
            format!("/dev/ng0n1-flexio-absent: no such device: the io_uring_cmd engine needs {NEEDS}")
        );
        let cfg = EngineConfig {
            filename: Some("/dev/null".into()),
            iodepth: 1,
            ..EngineConfig::default()
        };
        let e = UringCmd::probe(&cfg).unwrap_err();
        assert!(e.starts_with("/dev/null: failed to fetch namespace-id"), "{e}");
    }
}
