//! `verify_state_save` / `verify_state_load` files, byte for byte as fio writes them: one
//! file per job, `<prefix>-<job name with '/' as '.'>-<job index>-verify.state` with
//! prefix `local` (or `<aux path>/local`), holding a header and one record, all little
//! endian:
//!
//! ```text
//! header:         u64 version | u64 size (of the record) | u64 crc32c (of the record)
//! v3 (fio 3.33):  u64 no_comps | u32 depth | u32 nofiles | u64 numberio | u64 index |
//!                 rand | u8 name[64] | {u64 fileno, u64 offset} comps[no_comps]
//! v7 (newest):    u32 depth | 4 pad | u64 numberio | u64 index | rand | u8 name[64] |
//!                 u64 inflight[depth]
//! rand:           u64 use64 | 48 bytes: u32 s[4] (taus88, s[3] = 0) or u64 s[6]
//!                 (taus258, s[5] = 0)
//! ```
//!
//! v3's comps are the offsets of the last `depth` completed writes (newest first) and
//! numberio the writes issued; fio 3.33 verifies until, within the last `depth` reads of
//! that count, an offset is not among them. v7's numberio is the writes issued;
//! `inflight[0..iodepth]` the numberios in flight (u64::MAX: none), entries beyond the
//! job's iodepth failed writes; the newest fio stops at the first block whose numberio
//! is at least numberio or was in flight, and skips failed ones.

use super::header::Generation;
use super::sum;
use std::path::{Path, PathBuf};

/// The offset generator's state at save time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandState {
    Taus88([u32; 3]),
    Taus258([u64; 5]),
}

impl From<flexio_workload::rng::TausState> for RandState {
    fn from(t: flexio_workload::rng::TausState) -> Self {
        match t {
            flexio_workload::rng::TausState::T32(s) => RandState::Taus88(s),
            flexio_workload::rng::TausState::T64(s) => RandState::Taus258(s),
        }
    }
}

impl Default for RandState {
    fn default() -> Self {
        RandState::Taus88([0; 3])
    }
}

/// fio 3.33's record.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct StateV3 {
    pub depth: u32,
    pub nofiles: u32,
    pub numberio: u64,
    pub index: u64,
    pub rand: RandState,
    pub name: String,
    /// (file number, offset) of the last completed writes, newest first.
    pub comps: Vec<(u64, u64)>,
}

/// The newest fio's record.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct StateV7 {
    pub numberio: u64,
    pub index: u64,
    pub rand: RandState,
    pub name: String,
    /// One slot per iodepth: the numberio in flight there, or `u64::MAX`.
    pub inflight: Vec<u64>,
    /// Numberios of failed writes.
    pub failed: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerifyState {
    V3(StateV3),
    V7(StateV7),
}

/// What the verify pass does with a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Verify,
    Skip,
    /// Stop verifying (the newest fio prints the message on stdout).
    Stop(Option<String>),
}

pub const EMPTY: u64 = u64::MAX;

/// fio's state file name for job `name` with job index `index` (0-based).
pub fn file_name(name: &str, index: u32) -> String {
    format!("local-{}-{index}-verify.state", name.replace('/', "."))
}

/// The state file's path, under `aux` (`--aux-path`) when given.
pub fn path(aux: Option<&Path>, name: &str, index: u32) -> PathBuf {
    let f = file_name(name, index);
    match aux {
        Some(d) => d.join(f),
        None => PathBuf::from(f),
    }
}

fn put_rand(out: &mut Vec<u8>, r: &RandState) {
    let mut u = [0u8; 48];
    match r {
        RandState::Taus88(s) => {
            out.extend_from_slice(&0u64.to_le_bytes());
            for (i, v) in s.iter().enumerate() {
                u[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        RandState::Taus258(s) => {
            out.extend_from_slice(&1u64.to_le_bytes());
            for (i, v) in s.iter().enumerate() {
                u[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
            }
        }
    }
    out.extend_from_slice(&u);
}

fn put_name(out: &mut Vec<u8>, name: &str) {
    let mut n = [0u8; 64];
    let b = name.as_bytes();
    let k = b.len().min(63);
    n[..k].copy_from_slice(&b[..k]);
    out.extend_from_slice(&n);
}

struct Rd<'a>(&'a [u8], usize);
impl Rd<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.0.get(self.1..self.1 + n)?;
        self.1 += n;
        Some(s)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Option<u64> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Some(u64::from_le_bytes(a))
    }
    fn rand(&mut self) -> Option<RandState> {
        let use64 = self.u64()?;
        let mut r = Rd(self.take(48)?, 0);
        Some(if use64 != 0 {
            let mut s = [0u64; 5];
            for v in &mut s {
                *v = r.u64()?;
            }
            RandState::Taus258(s)
        } else {
            let mut s = [0u32; 3];
            for v in &mut s {
                *v = r.u32()?;
            }
            RandState::Taus88(s)
        })
    }
    fn name(&mut self) -> Option<String> {
        let b = self.take(64)?;
        let end = b.iter().position(|&c| c == 0).unwrap_or(64);
        Some(String::from_utf8_lossy(&b[..end]).into_owned())
    }
}

impl VerifyState {
    pub fn version(&self) -> u64 {
        match self {
            VerifyState::V3(_) => 3,
            VerifyState::V7(_) => 7,
        }
    }

    pub fn generation(&self) -> Generation {
        match self {
            VerifyState::V3(_) => Generation::Fio333,
            VerifyState::V7(_) => Generation::Latest,
        }
    }

    /// The record (without the file header).
    pub fn record(&self) -> Vec<u8> {
        let mut o = Vec::new();
        match self {
            VerifyState::V3(s) => {
                o.extend_from_slice(&(s.comps.len() as u64).to_le_bytes());
                o.extend_from_slice(&s.depth.to_le_bytes());
                o.extend_from_slice(&s.nofiles.to_le_bytes());
                o.extend_from_slice(&s.numberio.to_le_bytes());
                o.extend_from_slice(&s.index.to_le_bytes());
                put_rand(&mut o, &s.rand);
                put_name(&mut o, &s.name);
                for (f, off) in &s.comps {
                    o.extend_from_slice(&f.to_le_bytes());
                    o.extend_from_slice(&off.to_le_bytes());
                }
            }
            VerifyState::V7(s) => {
                let depth = (s.inflight.len() + s.failed.len()) as u32;
                o.extend_from_slice(&depth.to_le_bytes());
                o.extend_from_slice(&[0; 4]);
                o.extend_from_slice(&s.numberio.to_le_bytes());
                o.extend_from_slice(&s.index.to_le_bytes());
                put_rand(&mut o, &s.rand);
                put_name(&mut o, &s.name);
                for n in s.inflight.iter().chain(&s.failed) {
                    o.extend_from_slice(&n.to_le_bytes());
                }
            }
        }
        o
    }

    /// The whole file.
    pub fn encode(&self) -> Vec<u8> {
        let rec = self.record();
        let mut o = Vec::with_capacity(24 + rec.len());
        o.extend_from_slice(&self.version().to_le_bytes());
        o.extend_from_slice(&(rec.len() as u64).to_le_bytes());
        o.extend_from_slice(&(sum::crc32c(&rec) as u64).to_le_bytes());
        o.extend_from_slice(&rec);
        o
    }

    /// Read a state file of generation `gen` (fio's messages on failure). `iodepth`
    /// splits a v7 record's slots into in-flight writes and failed writes.
    pub fn decode(gen: Generation, b: &[u8], iodepth: u32) -> Result<VerifyState, String> {
        let mut r = Rd(b, 0);
        let (Some(version), Some(size), Some(crc)) = (r.u64(), r.u64(), r.u64()) else {
            return Err("fio: failed reading verify state header".into());
        };
        let want = match gen {
            Generation::Fio333 => 3,
            Generation::Latest => 7,
        };
        if version != want {
            let hint = match version {
                3 => " (a fio 3.33 state file: --compat=3.33 reads it)",
                7 => " (a newest-fio state file: it needs the default format, not --compat=3.33)",
                _ => "",
            };
            return Err(format!(
                "fio: unsupported ({version}) version in verify state header{hint}"
            ));
        }
        let rec = usize::try_from(size)
            .ok()
            .and_then(|n| b.get(24..24usize.checked_add(n)?))
            .ok_or("fio: failed reading verity state")?;
        if sum::crc32c(rec) as u64 != crc {
            return Err("fio: verify state is corrupt".into());
        }
        let bad = || "fio: verify state is corrupt (record shorter than its fields)".to_string();
        let mut r = Rd(rec, 0);
        if version == 3 {
            let no_comps = r.u64().ok_or_else(bad)?;
            let depth = r.u32().ok_or_else(bad)?;
            let nofiles = r.u32().ok_or_else(bad)?;
            let numberio = r.u64().ok_or_else(bad)?;
            let index = r.u64().ok_or_else(bad)?;
            let rand = r.rand().ok_or_else(bad)?;
            let name = r.name().ok_or_else(bad)?;
            let mut comps = Vec::new();
            for _ in 0..no_comps.min((rec.len() / 16) as u64) {
                comps.push((r.u64().ok_or_else(bad)?, r.u64().ok_or_else(bad)?));
            }
            if comps.len() as u64 != no_comps {
                return Err(bad());
            }
            return Ok(VerifyState::V3(StateV3 {
                depth,
                nofiles,
                numberio,
                index,
                rand,
                name,
                comps,
            }));
        }
        let depth = r.u32().ok_or_else(bad)?;
        r.take(4).ok_or_else(bad)?;
        let numberio = r.u64().ok_or_else(bad)?;
        let index = r.u64().ok_or_else(bad)?;
        let rand = r.rand().ok_or_else(bad)?;
        let name = r.name().ok_or_else(bad)?;
        let mut slots = Vec::new();
        for _ in 0..depth {
            slots.push(r.u64().ok_or_else(bad)?);
        }
        let failed = slots.split_off((iodepth as usize).min(slots.len()));
        Ok(VerifyState::V7(StateV7 {
            numberio,
            index,
            rand,
            name,
            inflight: slots,
            failed,
        }))
    }
}

impl StateV3 {
    /// fio 3.33's rule, asked before verifying the read of `offset` in file `fileno`
    /// after `reads_done` verify reads: stop once within the last `depth` writes an
    /// offset is not among the completed ones.
    pub fn should_stop(&self, reads_done: u64, fileno: u64, offset: u64) -> bool {
        let depth = self.depth as u64;
        let before_window = reads_done < depth || self.numberio.saturating_sub(reads_done) > depth;
        if before_window && self.numberio > depth {
            return false;
        }
        !self.comps.iter().any(|&(f, o)| f == fileno && o == offset)
    }
}

impl StateV7 {
    /// The newest fio's rule for the block written as `numberio`.
    pub fn decide(&self, numberio: u64) -> Decision {
        if self.failed.contains(&numberio) {
            return Decision::Skip;
        }
        if numberio >= self.numberio {
            return Decision::Stop(Some(format!(
                "Stop verify because seq {numberio} >= {}",
                self.numberio
            )));
        }
        if self.inflight.contains(&numberio) {
            return Decision::Stop(Some(format!(
                "Stop verify because seq {numberio} was an inflight write"
            )));
        }
        Decision::Verify
    }
}

/// Write a state file atomically.
pub fn save(path: &Path, s: &VerifyState) -> std::io::Result<()> {
    crate::notes::write_atomic(path, &s.encode())
}

/// Read a state file (fio's messages, prefixed by the path on failure to open).
pub fn load(path: &Path, gen: Generation, iodepth: u32) -> Result<VerifyState, String> {
    let b = std::fs::read(path).map_err(|e| {
        // fio prints strerror() alone, without Rust's " (os error N)".
        let text = e.to_string();
        let text = text.split(" (os error").next().unwrap_or(&text).to_string();
        format!(
            "fio: open state file: {text}\nfio: state file: {} (for_write=0)",
            path.display()
        )
    })?;
    VerifyState::decode(gen, &b, iodepth)
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
