//! `sg`: SCSI commands through the SCSI generic interface (fio's sg engine).
//!
//! Each request becomes one SCSI command (SBC-4): READ(10)/(16) for reads; for writes the
//! command `sg_write_mode` names: WRITE(10)/(16), WRITE AND VERIFY(10)/(16), WRITE
//! SAME(10)/(16) (one block of data repeated), WRITE SAME(16) with NDOB (no data), VERIFY
//! (10)/(16) with BYTCHK 00, 01 or 11, or WRITE STREAM(16) with `stream_id`; SYNCHRONIZE
//! CACHE(10) for syncs and UNMAP for trims. The 10-byte form is used while the LBA and the
//! block count fit it, the 16-byte form beyond. `readfua` / `writefua` set FUA, `hipri`
//! asks the sg driver for polled completion (SGV4_FLAG_HIPRI).
//!
//! On a block device (a SCSI disk) every command is one synchronous `SG_IO` ioctl; on an sg
//! character device (`/dev/sgN`) commands are queued by writing their `sg_io_hdr` to the
//! device and collected by reading it back (the sg driver's asynchronous interface), so
//! `iodepth` requests can be in flight. The logical block size and capacity come from READ
//! CAPACITY(10), or (16) when the device is larger than (10) can say. Character devices are
//! opened read-write even for reads (fio's RO_NEEDS_RW_OPEN).

use crate::api::{Caps, Completion, Engine, EngineConfig, EngineDef, FileInfo, IoReq, Op, Queued};
use crate::device;
use flexio_job::engine_opts::parse;
use flexio_job::table::{Kind, OptDef};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;

/// Which command a write becomes (`sg_write_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    Write,
    WriteAndVerify,
    WriteSame,
    WriteSameNdob,
    VerifyBytchk00,
    VerifyBytchk01,
    VerifyBytchk11,
    WriteStream,
}

const WRITE_MODES: &[(&str, WriteMode)] = &[
    ("write", WriteMode::Write),
    ("write_and_verify", WriteMode::WriteAndVerify),
    ("verify", WriteMode::WriteAndVerify),
    ("write_same", WriteMode::WriteSame),
    ("same", WriteMode::WriteSame),
    ("write_same_ndob", WriteMode::WriteSameNdob),
    ("verify_bytchk_00", WriteMode::VerifyBytchk00),
    ("verify_bytchk_01", WriteMode::VerifyBytchk01),
    ("verify_bytchk_11", WriteMode::VerifyBytchk11),
    ("write_stream", WriteMode::WriteStream),
];

flexio_job::engine_options! {
    /// The sg engine's options (fio's sg option table).
    pub struct SgOpts; rows OPTIONS;
    /// SGV4_FLAG_HIPRI: polled completions.
    hipri: bool = false,
        "hipri", Kind::Flag, "", "Use polled IO completions", parse::flag;
    /// FUA on every READ.
    readfua: bool = false,
        "readfua", Kind::Bool, "0", "Set FUA flag (force unit access) for all Read operations",
        parse::boolean;
    /// FUA on every WRITE.
    writefua: bool = false,
        "writefua", Kind::Bool, "0", "Set FUA flag (force unit access) for all Write operations",
        parse::boolean;
    /// The command writes become.
    sg_write_mode: WriteMode = WriteMode::Write,
        "sg_write_mode", Kind::Choice(&[
            ("write", "Issue standard SCSI WRITE commands"),
            ("write_and_verify", "Issue SCSI WRITE AND VERIFY commands"),
            ("verify", "Issue SCSI WRITE AND VERIFY commands. This option is deprecated. Use write_and_verify instead."),
            ("write_same", "Issue SCSI WRITE SAME commands"),
            ("same", "Issue SCSI WRITE SAME commands. This option is deprecated. Use write_same instead."),
            ("write_same_ndob", "Issue SCSI WRITE SAME(16) commands with NDOB flag set"),
            ("verify_bytchk_00", "Issue SCSI VERIFY commands with BYTCHK set to 00"),
            ("verify_bytchk_01", "Issue SCSI VERIFY commands with BYTCHK set to 01"),
            ("verify_bytchk_11", "Issue SCSI VERIFY commands with BYTCHK set to 11"),
            ("write_stream", "Issue SCSI WRITE STREAM(16) commands"),
        ]), "write", "Specify SCSI WRITE mode",
        |v, _| parse::choice(v, WRITE_MODES);
    /// STR_ID of WRITE STREAM(16).
    stream_id: u16 = 0,
        "stream_id", Kind::Int { min: 0, max: 65535 }, "0", "Stream ID for WRITE STREAM(16) commands",
        |v, kb| parse::int(v, kb, 0, 65535).map(|n| n as u16);
}

// ---- command encoding (SBC-4 / SPC-5), pure and unit-tested

/// A command descriptor block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cdb {
    pub bytes: [u8; 16],
    pub len: u8,
}

impl Cdb {
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

pub const READ_10: u8 = 0x28;
pub const READ_16: u8 = 0x88;
pub const WRITE_10: u8 = 0x2a;
pub const WRITE_16: u8 = 0x8a;
pub const WRITE_VERIFY_10: u8 = 0x2e;
pub const WRITE_VERIFY_16: u8 = 0x8e;
pub const VERIFY_10: u8 = 0x2f;
pub const VERIFY_16: u8 = 0x8f;
pub const WRITE_SAME_10: u8 = 0x41;
pub const WRITE_SAME_16: u8 = 0x93;
pub const WRITE_STREAM_16: u8 = 0x9a;
pub const SYNCHRONIZE_CACHE_10: u8 = 0x35;
pub const UNMAP: u8 = 0x42;
pub const READ_CAPACITY_10: u8 = 0x25;
pub const SERVICE_ACTION_IN_16: u8 = 0x9e;
/// READ CAPACITY(16)'s service action.
pub const SA_READ_CAPACITY_16: u8 = 0x10;
/// FUA: byte 1, bit 3.
const FUA: u8 = 0x08;

/// Whether a command on `lba` for `blocks` blocks fits the 10-byte form (32-bit LBA,
/// 16-bit block count).
pub fn fits_10(lba: u64, blocks: u32) -> bool {
    lba + blocks as u64 <= u32::MAX as u64 + 1 && blocks <= u16::MAX as u32
}

/// A command with an LBA and a block count: the 10-byte form (opcode `op10`, LBA in bytes
/// 2-5, count in 7-8) when it fits and `force16` is off, else the 16-byte form (`op16`,
/// LBA in bytes 2-9, count in 10-13). `flags` goes to byte 1.
pub fn lba_cdb(op10: u8, op16: u8, lba: u64, blocks: u32, flags: u8, force16: bool) -> Cdb {
    let mut b = [0u8; 16];
    b[1] = flags;
    if !force16 && fits_10(lba, blocks) {
        b[0] = op10;
        b[2..6].copy_from_slice(&(lba as u32).to_be_bytes());
        b[7..9].copy_from_slice(&(blocks as u16).to_be_bytes());
        Cdb { bytes: b, len: 10 }
    } else {
        b[0] = op16;
        b[2..10].copy_from_slice(&lba.to_be_bytes());
        b[10..14].copy_from_slice(&blocks.to_be_bytes());
        Cdb { bytes: b, len: 16 }
    }
}

/// READ(10)/(16).
pub fn read_cdb(lba: u64, blocks: u32, fua: bool) -> Cdb {
    lba_cdb(READ_10, READ_16, lba, blocks, if fua { FUA } else { 0 }, false)
}

/// What a write of `blocks` blocks sends: the command and how many bytes of data go out
/// (`block` = the logical block size).
pub fn write_cdb(
    mode: WriteMode,
    lba: u64,
    blocks: u32,
    fua: bool,
    stream: u16,
    block: u32,
) -> (Cdb, u64) {
    let fua = if fua { FUA } else { 0 };
    let all = blocks as u64 * block as u64;
    match mode {
        WriteMode::Write => (lba_cdb(WRITE_10, WRITE_16, lba, blocks, fua, false), all),
        // BYTCHK 0: the device verifies what it wrote against the medium.
        WriteMode::WriteAndVerify => (
            lba_cdb(WRITE_VERIFY_10, WRITE_VERIFY_16, lba, blocks, 0, false),
            all,
        ),
        // One block of data, written to every block of the range.
        WriteMode::WriteSame => (
            lba_cdb(WRITE_SAME_10, WRITE_SAME_16, lba, blocks, 0, false),
            block as u64,
        ),
        // NDOB (byte 1, bit 0): no data out, the blocks are written with zeros.
        WriteMode::WriteSameNdob => (
            lba_cdb(WRITE_SAME_10, WRITE_SAME_16, lba, blocks, 0x01, true),
            0,
        ),
        // VERIFY: BYTCHK in byte 1, bits 2-1. 00: the medium alone; 01: compared with the
        // data sent; 11: every block compared with the one block sent.
        WriteMode::VerifyBytchk00 => (lba_cdb(VERIFY_10, VERIFY_16, lba, blocks, 0, false), 0),
        WriteMode::VerifyBytchk01 => (
            lba_cdb(VERIFY_10, VERIFY_16, lba, blocks, 0x02, false),
            all,
        ),
        WriteMode::VerifyBytchk11 => (
            lba_cdb(VERIFY_10, VERIFY_16, lba, blocks, 0x06, false),
            block as u64,
        ),
        // WRITE STREAM(16): LBA in bytes 2-9, STR_ID in 10-11, count in 12-13.
        WriteMode::WriteStream => {
            let mut b = [0u8; 16];
            b[0] = WRITE_STREAM_16;
            b[1] = fua;
            b[2..10].copy_from_slice(&lba.to_be_bytes());
            b[10..12].copy_from_slice(&stream.to_be_bytes());
            b[12..14].copy_from_slice(&(blocks.min(u16::MAX as u32) as u16).to_be_bytes());
            (Cdb { bytes: b, len: 16 }, all)
        }
    }
}

/// SYNCHRONIZE CACHE(10) of the whole device (LBA 0, 0 blocks).
pub fn sync_cache_cdb() -> Cdb {
    let mut b = [0u8; 16];
    b[0] = SYNCHRONIZE_CACHE_10;
    Cdb { bytes: b, len: 10 }
}

/// Bytes of an UNMAP parameter list with one block descriptor.
pub const UNMAP_PARAMS: usize = 24;

/// UNMAP of one range: the CDB (parameter list length in bytes 7-8) and its parameter list
/// (8-byte header, one 16-byte descriptor: LBA, block count).
pub fn unmap(lba: u64, blocks: u32) -> (Cdb, [u8; UNMAP_PARAMS]) {
    let mut b = [0u8; 16];
    b[0] = UNMAP;
    b[7..9].copy_from_slice(&(UNMAP_PARAMS as u16).to_be_bytes());
    let mut p = [0u8; UNMAP_PARAMS];
    // UNMAP data length: the bytes after this field; block descriptor data length.
    p[0..2].copy_from_slice(&((UNMAP_PARAMS - 2) as u16).to_be_bytes());
    p[2..4].copy_from_slice(&16u16.to_be_bytes());
    p[8..16].copy_from_slice(&lba.to_be_bytes());
    p[16..20].copy_from_slice(&blocks.to_be_bytes());
    (Cdb { bytes: b, len: 10 }, p)
}

/// READ CAPACITY(10).
pub fn read_capacity10_cdb() -> Cdb {
    let mut b = [0u8; 16];
    b[0] = READ_CAPACITY_10;
    Cdb { bytes: b, len: 10 }
}

/// READ CAPACITY(16) with a 32-byte allocation length.
pub fn read_capacity16_cdb() -> Cdb {
    let mut b = [0u8; 16];
    b[0] = SERVICE_ACTION_IN_16;
    b[1] = SA_READ_CAPACITY_16;
    b[10..14].copy_from_slice(&32u32.to_be_bytes());
    Cdb { bytes: b, len: 16 }
}

/// READ CAPACITY(10)'s answer: (last LBA, block length).
pub fn parse_capacity10(d: &[u8; 8]) -> (u64, u32) {
    (
        u32::from_be_bytes([d[0], d[1], d[2], d[3]]) as u64,
        u32::from_be_bytes([d[4], d[5], d[6], d[7]]),
    )
}

/// READ CAPACITY(16)'s answer: (last LBA, block length).
pub fn parse_capacity16(d: &[u8; 32]) -> (u64, u32) {
    let mut l = [0u8; 8];
    l.copy_from_slice(&d[0..8]);
    (
        u64::from_be_bytes(l),
        u32::from_be_bytes([d[8], d[9], d[10], d[11]]),
    )
}

// ---- the sg v3 interface (<scsi/sg.h>)

/// `struct sg_io_hdr`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SgIoHdr {
    pub interface_id: i32,
    pub dxfer_direction: i32,
    pub cmd_len: u8,
    pub mx_sb_len: u8,
    pub iovec_count: u16,
    pub dxfer_len: u32,
    pub dxferp: *mut libc::c_void,
    pub cmdp: *mut u8,
    pub sbp: *mut u8,
    pub timeout: u32,
    pub flags: u32,
    pub pack_id: i32,
    pub usr_ptr: *mut libc::c_void,
    pub status: u8,
    pub masked_status: u8,
    pub msg_status: u8,
    pub sb_len_wr: u8,
    pub host_status: u16,
    pub driver_status: u16,
    pub resid: i32,
    pub duration: u32,
    pub info: u32,
}

impl Default for SgIoHdr {
    fn default() -> Self {
        SgIoHdr {
            interface_id: b'S' as i32,
            dxfer_direction: SG_DXFER_NONE,
            cmd_len: 0,
            mx_sb_len: 0,
            iovec_count: 0,
            dxfer_len: 0,
            dxferp: std::ptr::null_mut(),
            cmdp: std::ptr::null_mut(),
            sbp: std::ptr::null_mut(),
            timeout: TIMEOUT_MS,
            flags: 0,
            pack_id: 0,
            usr_ptr: std::ptr::null_mut(),
            status: 0,
            masked_status: 0,
            msg_status: 0,
            sb_len_wr: 0,
            host_status: 0,
            driver_status: 0,
            resid: 0,
            duration: 0,
            info: 0,
        }
    }
}

pub const SG_DXFER_NONE: i32 = -1;
pub const SG_DXFER_TO_DEV: i32 = -2;
pub const SG_DXFER_FROM_DEV: i32 = -3;
pub const SG_IO: u32 = 0x2285;
pub const SG_GET_VERSION_NUM: u32 = 0x2282;
const SG_INFO_OK_MASK: u32 = 0x1;
/// `SGV4_FLAG_HIPRI`: polled completion.
pub const SGV4_FLAG_HIPRI: u32 = 0x800;
/// Each command's time limit.
const TIMEOUT_MS: u32 = 30_000;
const SENSE: usize = 64;

/// Whether a completed header reports success.
fn hdr_ok(h: &SgIoHdr) -> bool {
    h.info & SG_INFO_OK_MASK == 0 && h.status == 0 && h.host_status == 0 && h.driver_status == 0
}

/// What went wrong, in words (status, sense key, additional sense code).
fn hdr_error(h: &SgIoHdr, sense: &[u8]) -> String {
    let mut s = format!(
        "SCSI status 0x{:02x}, host status 0x{:x}, driver status 0x{:x}",
        h.status, h.host_status, h.driver_status
    );
    let n = (h.sb_len_wr as usize).min(sense.len());
    if n >= 14 && sense[0] & 0x7e == 0x70 {
        s.push_str(&format!(
            ", sense key 0x{:x}, asc/ascq 0x{:02x}/0x{:02x}",
            sense[2] & 0xf,
            sense[12],
            sense[13]
        ));
    } else if n >= 4 && sense[0] & 0x7e == 0x72 {
        s.push_str(&format!(
            ", sense key 0x{:x}, asc/ascq 0x{:02x}/0x{:02x}",
            sense[1] & 0xf,
            sense[2],
            sense[3]
        ));
    }
    s
}

/// One synchronous command through SG_IO (`data` in or out per `dir`).
fn sg_io(fd: RawFd, cdb: &Cdb, dir: i32, data: *mut u8, len: usize) -> io::Result<()> {
    let mut sense = [0u8; SENSE];
    let mut h = SgIoHdr {
        dxfer_direction: dir,
        cmd_len: cdb.len,
        mx_sb_len: SENSE as u8,
        dxfer_len: len as u32,
        dxferp: data.cast(),
        cmdp: cdb.bytes.as_ptr().cast_mut(),
        sbp: sense.as_mut_ptr(),
        ..SgIoHdr::default()
    };
    // SAFETY: h is a valid sg_io_hdr whose pointers (command, sense, data of `len` bytes)
    // stay valid for the duration of this synchronous ioctl.
    let r = unsafe { libc::ioctl(fd, SG_IO as _, &mut h as *mut SgIoHdr) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    if !hdr_ok(&h) {
        return Err(io::Error::other(hdr_error(&h, &sense)));
    }
    Ok(())
}

/// (last LBA, block length) of the device behind `fd`, by READ CAPACITY.
pub fn read_capacity(fd: RawFd) -> io::Result<(u64, u32)> {
    let mut d10 = [0u8; 8];
    sg_io(fd, &read_capacity10_cdb(), SG_DXFER_FROM_DEV, d10.as_mut_ptr(), 8)?;
    let (last, bs) = parse_capacity10(&d10);
    if last < u32::MAX as u64 {
        return Ok((last, bs));
    }
    let mut d16 = [0u8; 32];
    sg_io(fd, &read_capacity16_cdb(), SG_DXFER_FROM_DEV, d16.as_mut_ptr(), 32)?;
    Ok(parse_capacity16(&d16))
}

/// The sg driver's version, asked of a node (sg character devices and SCSI disks answer).
fn sg_version(fd: RawFd) -> io::Result<i32> {
    let mut v: libc::c_int = 0;
    // SAFETY: SG_GET_VERSION_NUM writes one int to the pointer given.
    let r = unsafe { libc::ioctl(fd, SG_GET_VERSION_NUM as _, &mut v as *mut libc::c_int) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(v)
}

const NEEDS: &str = "a SCSI generic device (/dev/sgN) or a SCSI disk's block device";

// ---- the engine

/// One open device.
#[derive(Clone, Copy)]
struct Dev {
    fd: RawFd,
    /// Logical block size.
    block: u32,
    /// Last LBA.
    last: u64,
    /// An sg character device: commands are queued (write/read of the header).
    queued: bool,
    inflight: u32,
}

pub struct Sg {
    opts: SgOpts,
    files: Vec<Option<Dev>>,
    /// Per request slot: header, command, sense data and UNMAP parameters (they must stay
    /// put while the request is in the driver), and the bytes a success reports.
    hdrs: Vec<SgIoHdr>,
    cdbs: Vec<Cdb>,
    sense: Vec<[u8; SENSE]>,
    unmap: Vec<[u8; UNMAP_PARAMS]>,
    done_bytes: Vec<i64>,
    inflight: u32,
    pollfds: Vec<libc::pollfd>,
    last_error: Option<String>,
}

impl EngineDef for Sg {
    const NAME: &'static str = "sg";
    const HELP: &'static str = "SCSI commands through the SCSI generic driver (SG_IO / sg_io_hdr)";
    const OPTIONS: &'static [&'static [OptDef]] = &[OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        let depth = cfg.iodepth.max(1) as usize;
        Sg {
            opts: SgOpts::from_values(&cfg.values),
            files: vec![None; cfg.nfiles.max(1) as usize],
            hdrs: vec![SgIoHdr::default(); depth],
            cdbs: vec![
                Cdb {
                    bytes: [0; 16],
                    len: 0
                };
                depth
            ],
            sense: vec![[0; SENSE]; depth],
            unmap: vec![[0; UNMAP_PARAMS]; depth],
            done_bytes: vec![0; depth],
            inflight: 0,
            pollfds: Vec::with_capacity(cfg.nfiles.max(1) as usize),
            last_error: None,
        }
    }
    fn probe(cfg: &EngineConfig) -> Result<(), String> {
        device::each_target(cfg, "sg", NEEDS, |path| {
            device::node(
                path,
                "sg",
                NEEDS,
                "ioengine sg only works on block or character devices",
            )?;
            let fd = device::open_probe(path)
                .map_err(|e| format!("{path}: cannot open: {e}: the sg engine needs {NEEDS}"))?;
            sg_version(fd.as_raw_fd()).map_err(|e| {
                format!("{path}: not a SCSI device (SG_GET_VERSION_NUM: {e}): the sg engine needs {NEEDS}")
            })?;
            Ok(())
        })
    }
    fn device_size(path: &Path, _cfg: &EngineConfig) -> Result<Option<u64>, String> {
        let p = path.display().to_string();
        let fd = device::open_probe(&p).map_err(|e| format!("{p}: cannot open: {e}"))?;
        let (last, block) = read_capacity(fd.as_raw_fd()).map_err(|e| {
            format!("ioengine sg unable to successfully execute read capacity to get block size and maximum lba of {p}: {e}")
        })?;
        Ok(Some((last + 1) * block as u64))
    }
}

impl Sg {
    /// Fill slot `idx` for request `io` on `dev`; returns false for a request the device
    /// cannot take (not a whole number of blocks).
    fn prepare(&mut self, io: &IoReq, dev: &Dev) -> bool {
        let i = io.idx as usize;
        let block = dev.block.max(1) as u64;
        if io.op != Op::Sync && io.op != Op::Datasync && io.op != Op::SyncRange
            && (io.offset % block != 0 || io.len as u64 % block != 0)
        {
            return false;
        }
        let lba = io.offset / block;
        let blocks = (io.len as u64 / block) as u32;
        let (cdb, dir, data, len, done) = match io.op {
            Op::Read => (
                read_cdb(lba, blocks, self.opts.readfua),
                SG_DXFER_FROM_DEV,
                io.buf,
                io.len,
                io.len as i64,
            ),
            Op::Write => {
                let (cdb, out) = write_cdb(
                    self.opts.sg_write_mode,
                    lba,
                    blocks,
                    self.opts.writefua,
                    self.opts.stream_id,
                    dev.block,
                );
                let dir = if out == 0 { SG_DXFER_NONE } else { SG_DXFER_TO_DEV };
                (cdb, dir, io.buf, out as usize, io.len as i64)
            }
            Op::Trim => {
                let (cdb, params) = unmap(lba, blocks);
                self.unmap[i] = params;
                (
                    cdb,
                    SG_DXFER_TO_DEV,
                    self.unmap[i].as_mut_ptr(),
                    UNMAP_PARAMS,
                    io.len as i64,
                )
            }
            Op::Sync | Op::Datasync | Op::SyncRange => {
                (sync_cache_cdb(), SG_DXFER_NONE, std::ptr::null_mut(), 0, 0)
            }
        };
        self.cdbs[i] = cdb;
        self.done_bytes[i] = done;
        self.hdrs[i] = SgIoHdr {
            dxfer_direction: dir,
            cmd_len: cdb.len,
            mx_sb_len: SENSE as u8,
            dxfer_len: len as u32,
            dxferp: if len == 0 { std::ptr::null_mut() } else { data.cast() },
            cmdp: self.cdbs[i].bytes.as_mut_ptr(),
            sbp: self.sense[i].as_mut_ptr(),
            flags: if self.opts.hipri { SGV4_FLAG_HIPRI } else { 0 },
            pack_id: io.idx as i32,
            ..SgIoHdr::default()
        };
        true
    }

    /// The result of a completed header in slot `idx`.
    fn result(&mut self, idx: usize, h: &SgIoHdr) -> i64 {
        if hdr_ok(h) {
            let short = if h.dxfer_direction == SG_DXFER_FROM_DEV {
                h.resid.max(0) as i64
            } else {
                0
            };
            return self.done_bytes[idx] - short;
        }
        self.last_error = Some(hdr_error(h, &self.sense[idx]));
        -(libc::EIO as i64)
    }
}

impl Engine for Sg {
    fn caps(&self) -> Caps {
        Caps {
            trim: true,
            rw_open: true,
            ..Caps::default()
        }
    }
    fn open_file(&mut self, file: u32, f: &FileInfo) -> io::Result<()> {
        let md = std::fs::metadata(f.path)?;
        use std::os::unix::fs::FileTypeExt;
        let queued = md.file_type().is_char_device();
        if !queued && !md.file_type().is_block_device() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "ioengine sg only works on block or character devices",
            ));
        }
        let (last, block) = read_capacity(f.fd).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("ioengine sg unable to successfully execute read capacity to get block size and maximum lba: {e}"),
            )
        })?;
        if let Some(slot) = self.files.get_mut(file as usize) {
            *slot = Some(Dev {
                fd: f.fd,
                block,
                last,
                queued,
                inflight: 0,
            });
        }
        Ok(())
    }
    fn close_file(&mut self, file: u32) -> io::Result<()> {
        if let Some(slot) = self.files.get_mut(file as usize) {
            *slot = None;
        }
        Ok(())
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        let Some(dev) = self.files.get(io.file as usize).copied().flatten() else {
            return Queued::Completed(-(libc::EBADF as i64));
        };
        if !self.prepare(io, &dev) {
            return Queued::Completed(-(libc::EINVAL as i64));
        }
        let lba_end = io.offset / dev.block.max(1) as u64 + io.len as u64 / dev.block.max(1) as u64;
        if io.op != Op::Sync && io.op != Op::Datasync && lba_end > dev.last + 1 {
            return Queued::Completed(-(libc::EINVAL as i64));
        }
        let i = io.idx as usize;
        if !dev.queued {
            let h: *mut SgIoHdr = &mut self.hdrs[i];
            // SAFETY: the header's pointers (command, sense, UNMAP parameters in this
            // engine's slot vectors, which are never resized; the request's buffer, valid
            // until the request completes) outlive this synchronous ioctl.
            let r = unsafe { libc::ioctl(dev.fd, SG_IO as _, h) };
            if r < 0 {
                return Queued::Completed(-(io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO) as i64));
            }
            let h = self.hdrs[i];
            return Queued::Completed(self.result(i, &h));
        }
        let size = std::mem::size_of::<SgIoHdr>();
        // SAFETY: the sg driver reads one sg_io_hdr from the buffer given; its pointers stay
        // valid until the request is read back (slot vectors are never resized, the
        // request's buffer is the core's until completion).
        let r = unsafe { libc::write(dev.fd, (&self.hdrs[i] as *const SgIoHdr).cast(), size) };
        if r < 0 {
            let e = io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO);
            // A full driver queue: later, after completions.
            if (e == libc::EAGAIN || e == libc::EDOM) && self.inflight > 0 {
                return Queued::Busy;
            }
            return Queued::Completed(-(e as i64));
        }
        if let Some(Some(d)) = self.files.get_mut(io.file as usize) {
            d.inflight += 1;
        }
        self.inflight += 1;
        Queued::Queued
    }
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<usize> {
        let mut got = 0usize;
        while got < max && self.inflight > 0 {
            self.pollfds.clear();
            for d in self.files.iter().flatten() {
                if d.inflight > 0 {
                    self.pollfds.push(libc::pollfd {
                        fd: d.fd,
                        events: libc::POLLIN,
                        revents: 0,
                    });
                }
            }
            let wait = if got < min { -1 } else { 0 };
            // SAFETY: pollfds is a valid array of its length.
            let n = unsafe {
                libc::poll(self.pollfds.as_mut_ptr(), self.pollfds.len() as _, wait)
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(e);
            }
            if n == 0 {
                break;
            }
            for k in 0..self.pollfds.len() {
                if got >= max || self.pollfds[k].revents & libc::POLLIN == 0 {
                    continue;
                }
                let fd = self.pollfds[k].fd;
                let mut h = SgIoHdr::default();
                let size = std::mem::size_of::<SgIoHdr>();
                // SAFETY: read() of the sg driver writes one completed sg_io_hdr into `h`.
                let r = unsafe { libc::read(fd, (&mut h as *mut SgIoHdr).cast(), size) };
                if r < 0 {
                    let e = io::Error::last_os_error();
                    if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR)) {
                        continue;
                    }
                    return Err(e);
                }
                let idx = h.pack_id as usize;
                if idx >= self.hdrs.len() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("sg: completion for unknown request {}", h.pack_id),
                    ));
                }
                let res = self.result(idx, &h);
                if let Some(d) = self.files.iter_mut().flatten().find(|d| d.fd == fd) {
                    d.inflight = d.inflight.saturating_sub(1);
                }
                self.inflight -= 1;
                out.push(Completion {
                    idx: idx as u32,
                    res,
                });
                got += 1;
            }
        }
        Ok(got)
    }
    fn failed_op(&self) -> Option<String> {
        self.last_error.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sg_io_hdr_has_the_kernels_layout() {
        // <scsi/sg.h> on 64-bit Linux: 88 bytes; the fields the driver reads back.
        if std::mem::size_of::<usize>() == 8 {
            assert_eq!(std::mem::size_of::<SgIoHdr>(), 88);
            let h = SgIoHdr::default();
            let base = &h as *const SgIoHdr as usize;
            assert_eq!(&h.dxfer_len as *const u32 as usize - base, 12);
            assert_eq!(&h.dxferp as *const _ as usize - base, 16);
            assert_eq!(&h.timeout as *const u32 as usize - base, 40);
            assert_eq!(&h.pack_id as *const i32 as usize - base, 48);
            assert_eq!(&h.usr_ptr as *const _ as usize - base, 56);
            assert_eq!(&h.status as *const u8 as usize - base, 64);
            assert_eq!(&h.host_status as *const u16 as usize - base, 68);
            assert_eq!(&h.resid as *const i32 as usize - base, 72);
            assert_eq!(&h.info as *const u32 as usize - base, 80);
        }
        assert_eq!(SgIoHdr::default().interface_id, 'S' as i32);
    }

    #[test]
    fn read_and_write_10_and_16() {
        // READ(10): opcode, flags, LBA (4 bytes, big endian), group, count (2 bytes), control.
        let c = read_cdb(0x1234_5678, 8, false);
        assert_eq!(
            c.as_slice(),
            [0x28, 0, 0x12, 0x34, 0x56, 0x78, 0, 0, 8, 0]
        );
        assert_eq!(read_cdb(1, 1, true).bytes[1], 0x08, "FUA is byte 1 bit 3");
        // Past 32 bits of LBA: READ(16): LBA in 8 bytes, count in 4.
        let c = read_cdb(0x1_0000_0000, 0x10, false);
        assert_eq!(
            c.as_slice(),
            [0x88, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0]
        );
        // The last block addressable by (10), and one more.
        assert_eq!(read_cdb(0xffff_ffff, 1, false).len, 10);
        assert_eq!(read_cdb(0xffff_ffff, 2, false).len, 16);
        // More than 65535 blocks need (16).
        let c = read_cdb(0, 0x1_0000, false);
        assert_eq!((c.bytes[0], &c.bytes[10..14]), (0x88, &[0, 1, 0, 0][..]));
        let (c, out) = write_cdb(WriteMode::Write, 2, 4, true, 0, 512);
        assert_eq!(c.as_slice(), [0x2a, 0x08, 0, 0, 0, 2, 0, 0, 4, 0]);
        assert_eq!(out, 2048);
    }

    #[test]
    fn write_modes() {
        let (c, out) = write_cdb(WriteMode::WriteAndVerify, 7, 2, true, 0, 512);
        assert_eq!((c.bytes[0], c.bytes[1], out), (0x2e, 0, 1024), "no FUA field used");
        let (c, out) = write_cdb(WriteMode::WriteSame, 7, 2, false, 0, 4096);
        assert_eq!((c.bytes[0], c.len, out), (0x41, 10, 4096), "one block of data");
        let (c, out) = write_cdb(WriteMode::WriteSameNdob, 7, 2, false, 0, 512);
        assert_eq!((c.bytes[0], c.bytes[1], c.len, out), (0x93, 0x01, 16, 0));
        assert_eq!(&c.bytes[2..14], [0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 2]);
        let (c, out) = write_cdb(WriteMode::VerifyBytchk00, 7, 2, false, 0, 512);
        assert_eq!((c.bytes[0], c.bytes[1], out), (0x2f, 0x00, 0));
        let (c, out) = write_cdb(WriteMode::VerifyBytchk01, 7, 2, false, 0, 512);
        assert_eq!((c.bytes[0], c.bytes[1], out), (0x2f, 0x02, 1024));
        let (c, out) = write_cdb(WriteMode::VerifyBytchk11, 7, 20, false, 0, 512);
        assert_eq!((c.bytes[0], c.bytes[1], out), (0x2f, 0x06, 512));
        let (c, out) = write_cdb(WriteMode::VerifyBytchk01, 1 << 33, 2, false, 0, 512);
        assert_eq!((c.bytes[0], c.len, out), (0x8f, 16, 1024));
        let (c, out) = write_cdb(WriteMode::WriteStream, 0x0102, 3, true, 0xabcd, 512);
        assert_eq!(
            c.as_slice(),
            [0x9a, 0x08, 0, 0, 0, 0, 0, 0, 0x01, 0x02, 0xab, 0xcd, 0, 3, 0, 0]
        );
        assert_eq!(out, 1536);
    }

    #[test]
    fn sync_unmap_and_capacity() {
        assert_eq!(sync_cache_cdb().as_slice(), [0x35, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        let (c, p) = unmap(0x0102_0304_0506, 0x10);
        assert_eq!(c.as_slice(), [0x42, 0, 0, 0, 0, 0, 0, 0, 24, 0]);
        assert_eq!(
            p,
            [
                0, 22, 0, 16, 0, 0, 0, 0, // header: data length 22, descriptors 16 bytes
                0, 0, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, // LBA
                0, 0, 0, 0x10, 0, 0, 0, 0 // blocks, reserved
            ]
        );
        assert_eq!(read_capacity10_cdb().as_slice()[0], 0x25);
        let c = read_capacity16_cdb();
        assert_eq!(
            c.as_slice(),
            [0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0]
        );
        assert_eq!(
            parse_capacity10(&[0, 0x1f, 0xff, 0xff, 0, 0, 2, 0]),
            (0x1f_ffff, 512)
        );
        let mut d = [0u8; 32];
        d[0..8].copy_from_slice(&0x1_2345_6789u64.to_be_bytes());
        d[8..12].copy_from_slice(&4096u32.to_be_bytes());
        assert_eq!(parse_capacity16(&d), (0x1_2345_6789, 4096));
    }

    #[test]
    fn write_mode_names_are_fios() {
        let names: Vec<&str> = WRITE_MODES.iter().map(|(n, _)| *n).collect();
        let Kind::Choice(listed) = OPTIONS
            .iter()
            .find(|d| d.name == "sg_write_mode")
            .unwrap()
            .kind
        else {
            panic!("sg_write_mode is a choice")
        };
        assert_eq!(names, listed.iter().map(|(n, _)| *n).collect::<Vec<_>>());
    }

    #[test]
    fn sense_data_is_decoded() {
        let h = SgIoHdr {
            status: 2,
            sb_len_wr: 18,
            ..SgIoHdr::default()
        };
        let mut s = [0u8; SENSE];
        s[0] = 0x70;
        s[2] = 0x05;
        s[12] = 0x24;
        assert!(!hdr_ok(&h));
        assert_eq!(
            hdr_error(&h, &s),
            "SCSI status 0x02, host status 0x0, driver status 0x0, sense key 0x5, asc/ascq 0x24/0x00"
        );
    }

    #[test]
    fn probe_names_what_is_missing() {
        let cfg = EngineConfig {
            filename: Some("/dev/sg0-flexio-absent".into()),
            ..EngineConfig::default()
        };
        assert_eq!(
            Sg::probe(&cfg).unwrap_err(),
            format!("/dev/sg0-flexio-absent: no such device: the sg engine needs {NEEDS}")
        );
        let cfg = EngineConfig {
            filename: Some("/dev/null".into()),
            ..EngineConfig::default()
        };
        let e = Sg::probe(&cfg).unwrap_err();
        assert!(e.starts_with("/dev/null: not a SCSI device (SG_GET_VERSION_NUM: "), "{e}");
    }
}
