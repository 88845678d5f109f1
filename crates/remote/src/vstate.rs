//! Verify state across the wire: `VTRIGGER` (§4.20), `SENDFILE` (§4.21) and the
//! verify-state file both carry (header version 3, CRC-32C). This is flexio's one model of
//! fio's verify-state record: the run engine's `verify_state_save` / `verify_state_load`
//! files (`flexio_run::verify::state`) are written and read with it too, in fio 3.33's
//! version 3 and the newest fio's version 7.

use crate::bytes::{Reader, Writer};
use crate::crc::crc32c;
use crate::error::{Error, Result};
use crate::frame::Opcode;
use crate::msg::{exact, Payload};

/// Fixed part of fio 3.33's record (`thread_io_list`), before its completions.
pub const IO_LIST_FIXED: usize = 152;
/// Verify-state file header version of fio 3.33.
pub const STATE_VERSION: u64 = 3;
/// Verify-state file header version of the newest fio.
pub const STATE_VERSION_NEWEST: u64 = 7;
/// A v7 slot with no write in flight.
pub const EMPTY: u64 = u64::MAX;

/// `VTRIGGER` request (C→S): a command the server runs after replying (empty: only save
/// the state).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VTrigger {
    pub command: String,
}

impl Payload for VTrigger {
    const OPCODE: Opcode = Opcode::VTrigger;
    fn encode(&self) -> Vec<u8> {
        let c = crate::bytes::truncate(&self.command, u16::MAX as usize);
        let mut w = Writer::with_capacity(2 + c.len());
        w.u16(c.len() as u16);
        w.bytes(c.as_bytes());
        w.buf
    }
    fn decode(p: &[u8]) -> Result<Self> {
        let mut r = Reader::new(p, "VTRIGGER");
        let len = r.u16()? as usize;
        let c = r.take(len)?;
        Ok(VTrigger {
            command: String::from_utf8_lossy(c).into_owned(),
        })
    }
}

// ---- fio's verify-state record: one model for the wire (VTRIGGER, SENDFILE) and the
// ---- state files (verify_state_save / verify_state_load), both versions

/// The job's offset generator state at save time: `u64 use64`, then 48 bytes: taus88's
/// three words (and a zero word) or taus258's five (and a zero word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandState {
    /// use64 = 0.
    Taus88([u32; 3]),
    /// use64 = 1.
    Taus258([u64; 5]),
}

impl Default for RandState {
    fn default() -> Self {
        RandState::Taus88([0; 3])
    }
}

impl RandState {
    fn put(&self, w: &mut Writer) {
        match self {
            RandState::Taus88(s) => {
                w.u64(0);
                w.u32s(s);
                w.zeros(48 - 12);
            }
            RandState::Taus258(s) => {
                w.u64(1);
                w.u64s(s);
                w.zeros(48 - 40);
            }
        }
    }

    /// Any non-zero `use64` is taus258, as fio reads it.
    fn get(r: &mut Reader) -> Result<Self> {
        let use64 = r.u64()?;
        let mut u = Reader::new(r.take(48)?, "verify state rand");
        Ok(if use64 != 0 {
            RandState::Taus258(u.u64s()?)
        } else {
            RandState::Taus88(u.u32s()?)
        })
    }
}

/// The job name field: 64 bytes, the name cut to 63 bytes (as fio copies it, byte by
/// byte), NUL padded.
fn put_name(w: &mut Writer, name: &str) {
    let b = name.as_bytes();
    let k = b.len().min(63);
    w.bytes(&b[..k]);
    w.zeros(64 - k);
}

/// fio 3.33's record (`thread_io_list`, header version 3): what VTRIGGER replies carry,
/// what SENDFILE fetches and what verify_state_save writes under `--compat=3.33`.
/// `u64 no_comps | u32 depth | u32 nofiles | u64 numberio | u64 index | rand | name[64] |
/// {u64 fileno, u64 offset} × depth·nofiles`: the first `no_comps` completions are the
/// record's, the rest zero.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct StateV3 {
    pub depth: u32,
    pub nofiles: u32,
    /// Writes issued.
    pub numberio: u64,
    /// 0-based job index.
    pub index: u64,
    pub rand: RandState,
    pub name: String,
    /// (file number, offset) of the last completed writes, newest first (`no_comps`).
    pub comps: Vec<(u64, u64)>,
}

impl StateV3 {
    /// The completion slots of the record: depth·nofiles (more if `comps` holds more).
    fn slots(&self) -> usize {
        (self.depth as usize)
            .saturating_mul(self.nofiles as usize)
            .max(self.comps.len())
    }

    pub fn encoded_len(&self) -> usize {
        IO_LIST_FIXED + 16 * self.slots()
    }

    fn put(&self, w: &mut Writer) {
        w.u64(self.comps.len() as u64);
        w.u32(self.depth);
        w.u32(self.nofiles);
        w.u64(self.numberio);
        w.u64(self.index);
        self.rand.put(w);
        put_name(w, &self.name);
        for i in 0..self.slots() {
            let (f, o) = self.comps.get(i).copied().unwrap_or((0, 0));
            w.u64(f);
            w.u64(o);
        }
    }

    /// One record. On the wire (`whole`) the record is its fixed part and all depth·nofiles
    /// slots, and the next record follows; in a state file only the first `no_comps`
    /// slots need be there (what follows them is ignored, as fio ignores it).
    fn get(r: &mut Reader, whole: bool) -> Result<Self> {
        let no_comps = r.u64()?;
        let depth = r.u32()?;
        let nofiles = r.u32()?;
        let numberio = r.u64()?;
        let index = r.u64()?;
        let rand = RandState::get(r)?;
        let name = r.str_fixed(64)?;
        let slots = depth as u64 * nofiles as u64;
        let (n, read) = if whole {
            (slots, slots)
        } else {
            (no_comps, no_comps)
        };
        if whole && no_comps > slots {
            return Err(Error::Field {
                what: "verify state no_comps",
                detail: format!("{no_comps} completions in {slots} slots"),
            });
        }
        if n.saturating_mul(16) > r.remaining() as u64 {
            return Err(Error::Truncated {
                what: "verify state completions",
                need: r
                    .pos()
                    .saturating_add(n.saturating_mul(16).min(usize::MAX as u64) as usize),
                have: r.pos() + r.remaining(),
            });
        }
        let mut comps = Vec::with_capacity(no_comps as usize);
        for i in 0..read {
            let c = (r.u64()?, r.u64()?);
            if i < no_comps {
                comps.push(c);
            }
        }
        Ok(StateV3 {
            depth,
            nofiles,
            numberio,
            index,
            rand,
            name,
            comps,
        })
    }
}

/// The newest fio's record (header version 7): `u32 depth | 4 pad | u64 numberio |
/// u64 index | rand | name[64] | u64 slot × depth`, the slots being the numberios in
/// flight (the job's iodepth of them, [`EMPTY`] where none) and then those of failed
/// writes.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct StateV7 {
    pub numberio: u64,
    pub index: u64,
    pub rand: RandState,
    pub name: String,
    /// One slot per iodepth: the numberio in flight there, or [`EMPTY`].
    pub inflight: Vec<u64>,
    /// Numberios of failed writes.
    pub failed: Vec<u64>,
}

/// A verify-state record of either version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerifyState {
    V3(StateV3),
    V7(StateV7),
}

/// Why a verify-state file was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StateError {
    /// Shorter than the 24-byte header.
    Header,
    /// Another header version than the one asked for.
    Version(u64),
    /// The file holds less than the record size its header gives.
    Record,
    /// The record's CRC-32C is not the header's.
    Crc,
    /// The record ends inside its fields.
    Fields,
}

impl std::fmt::Display for StateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StateError::Header => write!(f, "shorter than its header"),
            StateError::Version(v) => write!(f, "header version {v}"),
            StateError::Record => write!(f, "shorter than the record its header gives"),
            StateError::Crc => write!(f, "CRC-32C mismatch"),
            StateError::Fields => write!(f, "record shorter than its fields"),
        }
    }
}

impl VerifyState {
    /// The file header's version.
    pub fn version(&self) -> u64 {
        match self {
            VerifyState::V3(_) => STATE_VERSION,
            VerifyState::V7(_) => STATE_VERSION_NEWEST,
        }
    }

    /// The record (without the file header).
    pub fn record(&self) -> Vec<u8> {
        match self {
            VerifyState::V3(s) => {
                let mut w = Writer::with_capacity(s.encoded_len());
                s.put(&mut w);
                w.buf
            }
            VerifyState::V7(s) => {
                let mut w = Writer::with_capacity(144 + 8 * (s.inflight.len() + s.failed.len()));
                w.u32((s.inflight.len() + s.failed.len()) as u32);
                w.zeros(4);
                w.u64(s.numberio);
                w.u64(s.index);
                s.rand.put(&mut w);
                put_name(&mut w, &s.name);
                w.u64s(&s.inflight);
                w.u64s(&s.failed);
                w.buf
            }
        }
    }

    /// The whole file: {u64 version, u64 size of the record, u64 CRC-32C of the record},
    /// then the record.
    pub fn encode(&self) -> Vec<u8> {
        let rec = self.record();
        let mut w = Writer::with_capacity(24 + rec.len());
        w.u64(self.version());
        w.u64(rec.len() as u64);
        w.u64(crc32c(&rec) as u64);
        w.bytes(&rec);
        w.buf
    }

    /// Read a state file whose header version must be `version` ([`STATE_VERSION`] or
    /// [`STATE_VERSION_NEWEST`]). `iodepth` splits a v7 record's slots into writes in
    /// flight and failed writes.
    pub fn decode(b: &[u8], version: u64, iodepth: u32) -> std::result::Result<Self, StateError> {
        let mut r = Reader::new(b, "verify state file");
        let (Ok(v), Ok(size), Ok(crc)) = (r.u64(), r.u64(), r.u64()) else {
            return Err(StateError::Header);
        };
        if v != version || !(v == STATE_VERSION || v == STATE_VERSION_NEWEST) {
            return Err(StateError::Version(v));
        }
        let rec = usize::try_from(size)
            .ok()
            .and_then(|n| r.rest().get(..n))
            .ok_or(StateError::Record)?;
        if crc32c(rec) as u64 != crc {
            return Err(StateError::Crc);
        }
        let mut r = Reader::new(rec, "verify state record");
        if v == STATE_VERSION {
            return StateV3::get(&mut r, false)
                .map(VerifyState::V3)
                .map_err(|_| StateError::Fields);
        }
        let v7 = |r: &mut Reader| -> Result<StateV7> {
            let depth = r.u32()?;
            r.skip(4)?;
            let numberio = r.u64()?;
            let index = r.u64()?;
            let rand = RandState::get(r)?;
            let name = r.str_fixed(64)?;
            if depth as usize > r.remaining() / 8 {
                return Err(Error::Field {
                    what: "verify state slots",
                    detail: format!("{depth}"),
                });
            }
            let mut slots = Vec::with_capacity(depth as usize);
            for _ in 0..depth {
                slots.push(r.u64()?);
            }
            let failed = slots.split_off((iodepth as usize).min(slots.len()));
            Ok(StateV7 {
                numberio,
                index,
                rand,
                name,
                inflight: slots,
                failed,
            })
        };
        v7(&mut r)
            .map(VerifyState::V7)
            .map_err(|_| StateError::Fields)
    }
}

/// `VTRIGGER` reply (S→C, tag 0): every job's state (`all_io_list`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VTriggerReply {
    pub threads: Vec<StateV3>,
}

impl Payload for VTriggerReply {
    const OPCODE: Opcode = Opcode::VTrigger;
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u64(self.threads.len() as u64);
        for t in &self.threads {
            t.put(&mut w);
        }
        w.buf
    }
    fn decode(p: &[u8]) -> Result<Self> {
        let mut r = Reader::new(p, "VTRIGGER reply");
        let n = r.u64()?;
        if n.saturating_mul(IO_LIST_FIXED as u64) > r.remaining() as u64 {
            return Err(Error::Field {
                what: "VTRIGGER reply",
                detail: format!("{n} records cannot fit in {} bytes", p.len()),
            });
        }
        let mut threads = Vec::with_capacity(n as usize);
        for _ in 0..n {
            threads.push(StateV3::get(&mut r, true)?);
        }
        Ok(VTriggerReply { threads })
    }
}

/// `SENDFILE` request (S→C): the verify-state file the server wants (non-zero tag).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendFileRequest {
    pub path: String,
}

impl SendFileRequest {
    /// fio's name for a job's state file: `<probe server>-<job name, / as .>-<index>-verify.state`.
    pub fn state_name(server: &str, job: &str, index: u32) -> String {
        format!("{server}-{}-{index}-verify.state", job.replace('/', "."))
    }
}

impl Payload for SendFileRequest {
    const OPCODE: Opcode = Opcode::SendFile;
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(256);
        w.str_fixed(&self.path, 256);
        w.buf
    }
    fn decode(p: &[u8]) -> Result<Self> {
        exact("SENDFILE request", p, 256, "256")?;
        Ok(SendFileRequest {
            path: Reader::new(p, "SENDFILE request").str_fixed(256)?,
        })
    }
}

/// `SENDFILE` reply (C→S, echoes the tag): the file, or an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendFileReply {
    File(Vec<u8>),
    /// errno; size is unspecified and no content follows.
    Error(u32),
}

impl Payload for SendFileReply {
    const OPCODE: Opcode = Opcode::SendFile;
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        match self {
            SendFileReply::File(b) => {
                w.u32(b.len() as u32);
                w.u32(0);
                w.bytes(b);
            }
            SendFileReply::Error(e) => {
                w.u32(0);
                w.u32(*e);
            }
        }
        w.buf
    }
    fn decode(p: &[u8]) -> Result<Self> {
        let mut r = Reader::new(p, "SENDFILE reply");
        let size = r.u32()? as usize;
        let error = r.u32()?;
        if error != 0 {
            return Ok(SendFileReply::Error(error));
        }
        Ok(SendFileReply::File(r.take(size)?.to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record whose completions fill `n` of its depth·nofiles slots.
    fn rec(depth: u32, nofiles: u32, n: u64) -> StateV3 {
        StateV3 {
            depth,
            nofiles,
            numberio: 512,
            index: 0,
            rand: RandState::Taus88([1, 2, 3]),
            name: "w/1".into(),
            comps: (0..n).map(|i| (0, i * 4096)).collect(),
        }
    }

    #[test]
    fn vtrigger_round_trip_and_layout() {
        let r = VTriggerReply {
            threads: vec![
                rec(2, 1, 1),
                StateV3 {
                    rand: RandState::Taus258([1, 2, 3, 4, 5]),
                    ..rec(1, 2, 2)
                },
            ],
        };
        let b = r.encode();
        assert_eq!(b.len(), 8 + (152 + 32) * 2);
        assert_eq!(b[8 + 88], b'w');
        // no_comps, then the slots: the one completion and a zero slot.
        assert_eq!(&b[8..16], &1u64.to_le_bytes());
        assert_eq!(&b[8 + 152..8 + 184], &[0u8; 32][..]);
        assert_eq!(VTriggerReply::decode(&b).unwrap(), r);
        assert_eq!(VTriggerReply::decode(&[0; 8]).unwrap().threads.len(), 0);
        // A huge depth is an error, not an allocation.
        let mut bad = b.clone();
        bad[8 + 8..8 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        bad[8 + 12..8 + 16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(VTriggerReply::decode(&bad).is_err());
        // More completions than slots.
        let mut bad = b.clone();
        bad[8] = 3;
        assert!(VTriggerReply::decode(&bad).is_err());
        let mut bad = b;
        bad[0] = 200;
        assert!(VTriggerReply::decode(&bad).is_err());
        let v = VTrigger {
            command: "sync".into(),
        };
        assert_eq!(VTrigger::decode(&v.encode()).unwrap(), v);
        assert!(VTrigger::decode(&[9, 0, b'a']).is_err());
    }

    #[test]
    fn state_file_and_sendfile() {
        let s = VerifyState::V3(rec(1, 1, 1));
        let f = s.encode();
        assert_eq!(&f[..8], &3u64.to_le_bytes());
        assert_eq!(VerifyState::decode(&f, STATE_VERSION, 1).unwrap(), s);
        assert_eq!(
            VerifyState::decode(&f, STATE_VERSION_NEWEST, 1),
            Err(StateError::Version(3))
        );
        let mut bad = f.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(
            VerifyState::decode(&bad, STATE_VERSION, 1),
            Err(StateError::Crc)
        );
        assert_eq!(
            VerifyState::decode(&f[..30], STATE_VERSION, 1),
            Err(StateError::Record)
        );
        assert_eq!(
            VerifyState::decode(&f[..20], STATE_VERSION, 1),
            Err(StateError::Header)
        );
        assert_eq!(
            SendFileRequest::state_name("127.0.0.1", "a/b", 0),
            "127.0.0.1-a.b-0-verify.state"
        );
        let q = SendFileRequest {
            path: "x-verify.state".into(),
        };
        assert_eq!(SendFileRequest::decode(&q.encode()).unwrap(), q);
        for r in [SendFileReply::File(f), SendFileReply::Error(2)] {
            assert_eq!(SendFileReply::decode(&r.encode()).unwrap(), r);
        }
        assert!(SendFileReply::decode(&[10, 0, 0, 0, 0, 0, 0, 0, 1]).is_err());
    }

    /// fio 3.33 writes every completion slot of the record, depth·nofiles of them, however
    /// few completions there were: a `--iodepth=4` job that wrote two blocks left a
    /// 240-byte file (size 216 = 152 + 4 × 16, no_comps 2). A file whose record holds only
    /// its no_comps slots (as flexio wrote them before) reads all the same.
    #[test]
    fn state_files_have_every_slot_as_fio_writes_them() {
        // What fio 3.33 saved for `--name=w --rw=write --bs=4k --size=8k --iodepth=4
        // --ioengine=libaio --verify=crc32c --do_verify=0 --verify_state_save=1`.
        let mut fio = Vec::new();
        for v in [3u64, 216, 0xcc5a_aacb, 2, 0x1_0000_0004, 2] {
            fio.extend_from_slice(&v.to_le_bytes());
        }
        fio.resize(24 + 88, 0);
        fio.push(b'w');
        fio.resize(24 + 152 + 8, 0);
        fio.extend_from_slice(&4096u64.to_le_bytes());
        fio.resize(240, 0);
        let s = VerifyState::V3(StateV3 {
            depth: 4,
            nofiles: 1,
            numberio: 2,
            index: 0,
            rand: RandState::Taus88([0; 3]),
            name: "w".into(),
            comps: vec![(0, 4096), (0, 0)],
        });
        let f = s.encode();
        assert_eq!(f, fio, "fio's bytes, CRC included");
        assert_eq!(VerifyState::decode(&fio, STATE_VERSION, 4).unwrap(), s);
        let short = {
            let mut rec = f[24..24 + 152 + 32].to_vec();
            let mut h = 3u64.to_le_bytes().to_vec();
            h.extend_from_slice(&(rec.len() as u64).to_le_bytes());
            h.extend_from_slice(&(crc32c(&rec) as u64).to_le_bytes());
            h.append(&mut rec);
            h
        };
        assert_eq!(VerifyState::decode(&short, STATE_VERSION, 4).unwrap(), s);
        // A record cut inside its completions is refused.
        let cut = {
            let mut rec = f[24..24 + 152 + 16].to_vec();
            let mut h = 3u64.to_le_bytes().to_vec();
            h.extend_from_slice(&(rec.len() as u64).to_le_bytes());
            h.extend_from_slice(&(crc32c(&rec) as u64).to_le_bytes());
            h.append(&mut rec);
            h
        };
        assert_eq!(
            VerifyState::decode(&cut, STATE_VERSION, 4),
            Err(StateError::Fields)
        );
    }
}
