//! Verify state across the wire: `VTRIGGER` (§4.20), `SENDFILE` (§4.21) and the
//! verify-state file both carry (header version 3, CRC-32C).

use crate::bytes::{Reader, Writer};
use crate::crc::crc32c;
use crate::error::{Error, Result};
use crate::frame::Opcode;
use crate::msg::{exact, Payload};

/// Fixed part of a `thread_io_list` record.
pub const IO_LIST_FIXED: usize = 152;
/// Verify-state file header version of fio 3.33.
pub const STATE_VERSION: u64 = 3;

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

/// A job's random generator state in a verify-state record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandState {
    /// use64 = 0: s1…s3 and a zero word.
    Taus88([u32; 4]),
    /// use64 = 1: s1…s5 and a zero word.
    Taus258([u64; 6]),
}

/// `thread_io_list`: one job's verify state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadIoList {
    /// Number of valid completion entries.
    pub no_comps: u64,
    pub depth: u32,
    pub nofiles: u32,
    /// Writes issued.
    pub numberio: u64,
    /// 0-based job index.
    pub index: u64,
    pub rand: RandState,
    pub name: String,
    /// Last write completions (file number, offset): depth × nofiles entries.
    pub comps: Vec<(u64, u64)>,
}

impl ThreadIoList {
    pub fn encoded_len(&self) -> usize {
        IO_LIST_FIXED + 16 * self.depth as usize * self.nofiles as usize
    }

    fn put(&self, w: &mut Writer) {
        w.u64(self.no_comps);
        w.u32(self.depth);
        w.u32(self.nofiles);
        w.u64(self.numberio);
        w.u64(self.index);
        match self.rand {
            RandState::Taus88(s) => {
                w.u64(0);
                w.u32s(&s);
                w.zeros(32);
            }
            RandState::Taus258(s) => {
                w.u64(1);
                w.u64s(&s);
            }
        }
        w.str_fixed(&self.name, 64);
        let n = self.depth as usize * self.nofiles as usize;
        for i in 0..n {
            let (f, o) = self.comps.get(i).copied().unwrap_or((0, 0));
            w.u64(f);
            w.u64(o);
        }
    }

    fn get(r: &mut Reader) -> Result<Self> {
        let no_comps = r.u64()?;
        let depth = r.u32()?;
        let nofiles = r.u32()?;
        let numberio = r.u64()?;
        let index = r.u64()?;
        let rand = match r.u64()? {
            0 => {
                let s = r.u32s()?;
                r.skip(32)?;
                RandState::Taus88(s)
            }
            1 => RandState::Taus258(r.u64s()?),
            v => {
                return Err(Error::Field {
                    what: "verify state rand.use64",
                    detail: format!("{v} (expected 0 or 1)"),
                })
            }
        };
        let name = r.str_fixed(64)?;
        let n = depth as u64 * nofiles as u64;
        if n.saturating_mul(16) > r.remaining() as u64 {
            return Err(Error::Truncated {
                what: "verify state completions",
                need: r
                    .pos()
                    .saturating_add((n.saturating_mul(16)).min(usize::MAX as u64) as usize),
                have: r.pos() + r.remaining(),
            });
        }
        let mut comps = Vec::with_capacity(n as usize);
        for _ in 0..n {
            comps.push((r.u64()?, r.u64()?));
        }
        Ok(ThreadIoList {
            no_comps,
            depth,
            nofiles,
            numberio,
            index,
            rand,
            name,
            comps,
        })
    }

    /// The verify-state file of this record: {u64 version 3, u64 size, u64 CRC-32C of the
    /// record}, then the record.
    pub fn to_state_file(&self) -> Vec<u8> {
        let mut rec = Writer::with_capacity(self.encoded_len());
        self.put(&mut rec);
        let mut w = Writer::with_capacity(24 + rec.buf.len());
        w.u64(STATE_VERSION);
        w.u64(rec.buf.len() as u64);
        w.u64(crc32c(&rec.buf) as u64);
        w.bytes(&rec.buf);
        w.buf
    }

    /// Read and check a verify-state file (version, size, CRC).
    pub fn from_state_file(b: &[u8]) -> Result<Self> {
        let mut r = Reader::new(b, "verify state file");
        let version = r.u64()?;
        if version != STATE_VERSION {
            return Err(Error::Field {
                what: "verify state file",
                detail: format!("header version {version}, fio 3.33 writes {STATE_VERSION}"),
            });
        }
        let size = r.u64()?;
        let crc = r.u64()?;
        if size != r.remaining() as u64 {
            return Err(Error::Field {
                what: "verify state file",
                detail: format!("header says {size} bytes, {} follow", r.remaining()),
            });
        }
        let want = crc32c(r.rest()) as u64;
        if crc != want {
            return Err(Error::Field {
                what: "verify state file",
                detail: format!("CRC-32C {crc:#x}, computed {want:#x}"),
            });
        }
        ThreadIoList::get(&mut r)
    }
}

/// `VTRIGGER` reply (S→C, tag 0): every job's state (`all_io_list`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VTriggerReply {
    pub threads: Vec<ThreadIoList>,
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
            threads.push(ThreadIoList::get(&mut r)?);
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

    fn rec(depth: u32, nofiles: u32) -> ThreadIoList {
        ThreadIoList {
            no_comps: 1,
            depth,
            nofiles,
            numberio: 512,
            index: 0,
            rand: RandState::Taus88([1, 2, 3, 0]),
            name: "w/1".into(),
            comps: (0..depth as u64 * nofiles as u64)
                .map(|i| (0, i * 4096))
                .collect(),
        }
    }

    #[test]
    fn vtrigger_round_trip_and_layout() {
        let r = VTriggerReply {
            threads: vec![
                rec(2, 1),
                ThreadIoList {
                    rand: RandState::Taus258([1, 2, 3, 4, 5, 0]),
                    ..rec(1, 2)
                },
            ],
        };
        let b = r.encode();
        assert_eq!(b.len(), 8 + (152 + 32) * 2);
        assert_eq!(b[8 + 88], b'w');
        assert_eq!(VTriggerReply::decode(&b).unwrap(), r);
        assert_eq!(VTriggerReply::decode(&[0; 8]).unwrap().threads.len(), 0);
        // A huge depth is an error, not an allocation.
        let mut bad = b.clone();
        bad[8 + 8..8 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        bad[8 + 12..8 + 16].copy_from_slice(&u32::MAX.to_le_bytes());
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
        let f = rec(1, 1).to_state_file();
        assert_eq!(&f[..8], &3u64.to_le_bytes());
        assert_eq!(ThreadIoList::from_state_file(&f).unwrap(), rec(1, 1));
        let mut bad = f.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert!(ThreadIoList::from_state_file(&bad).is_err());
        assert!(ThreadIoList::from_state_file(&f[..30]).is_err());
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
}
