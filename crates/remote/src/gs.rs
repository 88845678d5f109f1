//! `io_stat` (§3.3) and the group stats (`GS`, §4.7; also embedded in every TS).

use crate::bytes::{Reader, Writer};
use crate::error::Result;
use crate::frame::Opcode;
use crate::msg::{exact, Payload};

/// Size of the group stats.
pub const GS_LEN: usize = 164;

/// fio's `io_stat` (56 bytes): units ns (latency), KiB/s (bw) or I/O per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IoStat {
    pub max: u64,
    /// 2^64−1 when unused.
    pub min: u64,
    pub samples: u64,
    pub mean: f64,
    /// Sum of squared deviations (Welford's S).
    pub s: f64,
}

impl Default for IoStat {
    fn default() -> Self {
        IoStat {
            max: 0,
            min: u64::MAX,
            samples: 0,
            mean: 0.0,
            s: 0.0,
        }
    }
}

pub(crate) fn put_io(w: &mut Writer, s: &IoStat) {
    w.u64(s.max);
    w.u64(s.min);
    w.u64(s.samples);
    w.fp64(s.mean);
    w.fp64(s.s);
}

pub(crate) fn get_io(r: &mut Reader) -> Result<IoStat> {
    Ok(IoStat {
        max: r.u64()?,
        min: r.u64()?,
        samples: r.u64()?,
        mean: r.fp64()?,
        s: r.fp64()?,
    })
}

pub(crate) fn get_io3(r: &mut Reader) -> Result<[IoStat; 3]> {
    Ok([get_io(r)?, get_io(r)?, get_io(r)?])
}

/// `group_run_stats` (164 bytes, packed): a reporting group's aggregate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupStats {
    /// ms
    pub max_run: [u64; 3],
    /// ms; 2^64−1 for an unused direction.
    pub min_run: [u64; 3],
    /// bytes/s
    pub max_bw: [u64; 3],
    /// bytes/s; 2^64−1 for an unused direction.
    pub min_bw: [u64; 3],
    pub iobytes: [u64; 3],
    /// Aggregate bytes/s.
    pub agg: [u64; 3],
    pub kb_base: u32,
    pub unit_base: u32,
    pub sig_figs: u32,
    pub groupid: u32,
    pub unified_rw_rep: u32,
}

impl Default for GroupStats {
    fn default() -> Self {
        GroupStats {
            max_run: [0; 3],
            min_run: [u64::MAX; 3],
            max_bw: [0; 3],
            min_bw: [u64::MAX; 3],
            iobytes: [0; 3],
            agg: [0; 3],
            kb_base: 1024,
            unit_base: 0,
            sig_figs: 4,
            groupid: 0,
            unified_rw_rep: 0,
        }
    }
}

impl GroupStats {
    pub(crate) fn put(&self, w: &mut Writer) {
        for a in [
            &self.max_run,
            &self.min_run,
            &self.max_bw,
            &self.min_bw,
            &self.iobytes,
            &self.agg,
        ] {
            w.u64s(a);
        }
        w.u32s(&[
            self.kb_base,
            self.unit_base,
            self.sig_figs,
            self.groupid,
            self.unified_rw_rep,
        ]);
    }
    pub(crate) fn get(r: &mut Reader) -> Result<Self> {
        let (max_run, min_run, max_bw) = (r.u64s()?, r.u64s()?, r.u64s()?);
        let (min_bw, iobytes, agg) = (r.u64s()?, r.u64s()?, r.u64s()?);
        let [kb_base, unit_base, sig_figs, groupid, unified_rw_rep] = r.u32s()?;
        Ok(GroupStats {
            max_run,
            min_run,
            max_bw,
            min_bw,
            iobytes,
            agg,
            kb_base,
            unit_base,
            sig_figs,
            groupid,
            unified_rw_rep,
        })
    }
}

impl Payload for GroupStats {
    const OPCODE: Opcode = Opcode::Gs;
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(GS_LEN);
        self.put(&mut w);
        w.buf
    }
    fn decode(p: &[u8]) -> Result<Self> {
        exact("GS", p, GS_LEN, "164")?;
        GroupStats::get(&mut Reader::new(p, "GS"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le64(b: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
    }
    fn le32(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn group_stats_layout() {
        let g = GroupStats {
            max_run: [1, 2, 3],
            agg: [4, 5, 6],
            groupid: 7,
            unified_rw_rep: 1,
            ..Default::default()
        };
        let b = g.encode();
        assert_eq!(b.len(), GS_LEN);
        assert_eq!(le64(&b, 120), 4);
        assert_eq!(le32(&b, 144), 1024);
        assert_eq!(le32(&b, 156), 7);
        assert_eq!(le32(&b, 160), 1);
        assert_eq!(GroupStats::decode(&b).unwrap(), g);
        assert!(GroupStats::decode(&b[..163]).is_err());
    }
}
