//! Thread stats (`TS`, §4.6) with their embedded group stats, the group stats message
//! (`GS`, §4.7) and `io_stat` (§3.3). Both stat blocks are packed structures: the field
//! offsets below are fio 3.33's and are checked in the tests.

use crate::bytes::{Reader, Writer};
use crate::error::{Error, Result};
use crate::frame::Opcode;
use crate::gs::{get_io, get_io3, put_io};
pub use crate::gs::{GroupStats, IoStat, GS_LEN};
use crate::msg::Payload;

/// Histogram buckets of fio 3.33 (`FIO_IO_U_PLAT_NR`).
pub const PLAT_NR: usize = 1856;
/// Percentile list slots (`FIO_IO_U_LIST_MAX_LEN`).
pub const LIST_MAX: usize = 20;
/// Trim block-info slots (`MAX_NR_BLOCK_INFOS`).
pub const BLOCK_INFOS_MAX: usize = 8192;
/// Size of the packed thread-stat block.
pub const TS_BLOCK_LEN: usize = 183_888;
/// Size of a TS payload without extension.
pub const TS_BASE_LEN: usize = 184_056;
/// Size of one `clat_prio_stat` record of the extension.
pub const PRIO_LEN: usize = 14_912;
/// ss_state bits.
pub const SS_IOPS: u32 = 0x1;
pub const SS_BW: u32 = 0x2;
pub const SS_SLOPE: u32 = 0x4;
pub const SS_ATTAINED: u32 = 0x8;
pub const SS_RAMP_OVER: u32 = 0x10;
pub const SS_DATA: u32 = 0x20;
pub const SS_PCT: u32 = 0x40;
pub const SS_BUFFER_FULL: u32 = 0x80;
/// fio's default percentile list.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// A latency histogram in fio's layout.
pub type Plat = [u64; PLAT_NR];

/// A zeroed histogram on the heap.
pub fn zero_plat() -> Box<Plat> {
    Box::new([0u64; PLAT_NR])
}

/// Per-priority completion latency (`clat_prio_stat`, 14912 bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct ClatPrio {
    pub hist: Box<Plat>,
    pub stat: IoStat,
    /// class << 13 | level
    pub ioprio: u32,
}

/// The thread stats of one report (`TS`): a job, or a group with group_reporting.
/// Latencies in ns, times in ms, sizes in bytes. Array indexes are directions (read,
/// write, trim); `plat` is indexed `[kind][direction]` with kinds slat, clat, lat.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadStat {
    pub name: String,
    pub verror: String,
    pub error: u32,
    pub thread_number: u32,
    pub groupid: u32,
    pub pid: u32,
    pub description: String,
    pub members: u32,
    /// 0 split, 1 mixed, 2 both.
    pub unified_rw_rep: u32,
    pub disable_prio_stat: u32,
    pub sync_stat: IoStat,
    pub clat_stat: [IoStat; 3],
    pub slat_stat: [IoStat; 3],
    pub lat_stat: [IoStat; 3],
    pub bw_stat: [IoStat; 3],
    pub iops_stat: [IoStat; 3],
    /// CPU ms.
    pub usr_time: u64,
    pub sys_time: u64,
    pub ctx: u64,
    pub minf: u64,
    pub majf: u64,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub percentile_precision: u64,
    /// Ends at the first 0.0.
    pub percentile_list: [f64; LIST_MAX],
    pub io_u_map: [u64; 7],
    pub io_u_submit: [u64; 7],
    pub io_u_complete: [u64; 7],
    pub io_u_lat_n: [u64; 10],
    pub io_u_lat_u: [u64; 10],
    pub io_u_lat_m: [u64; 12],
    pub plat: Box<[[Plat; 3]; 3]>,
    pub sync_plat: Box<Plat>,
    /// r, w, t, sync
    pub total_io_u: [u64; 4],
    pub short_io_u: [u64; 3],
    pub drop_io_u: [u64; 3],
    pub total_submit: u64,
    pub total_complete: u64,
    pub io_bytes: [u64; 3],
    pub runtime: [u64; 3],
    pub total_run_time: u64,
    pub continue_on_error: u16,
    pub first_error: u32,
    pub total_err_count: u64,
    pub nr_zone_resets: u64,
    /// The valid trim-cycle entries (at most 8192).
    pub block_infos: Vec<u32>,
    pub kb_base: u32,
    /// 0 none, 1 per-sec, 2 byte, 3 bit, 4 bytes/s, 5 bits/s.
    pub unit_base: u32,
    pub latency_depth: u32,
    pub latency_target: u64,
    pub latency_percentile: f64,
    pub latency_window: u64,
    pub sig_figs: u32,
    pub ss_dur: u64,
    pub ss_state: u32,
    pub ss_head: u32,
    pub ss_limit: f64,
    pub ss_slope: f64,
    pub ss_deviation: f64,
    pub ss_criterion: f64,
    pub ioprio: u32,
    pub cachehit: u64,
    pub cachemiss: u64,
    /// The report's group stats.
    pub rs: GroupStats,
    /// Extension: per-priority stats by direction.
    pub clat_prio: [Vec<ClatPrio>; 3],
    /// Extension: the steady-state ring (`ss_dur` IOPS then `ss_dur` bw values), sent when
    /// `ss_state` has [`SS_DATA`]; in ring order (oldest at `ss_head`, see §4.6).
    pub ss_iops: Vec<u64>,
    pub ss_bw: Vec<u64>,
}

impl Default for ThreadStat {
    fn default() -> Self {
        let mut percentile_list = [0.0; LIST_MAX];
        percentile_list[..DEFAULT_PERCENTILES.len()].copy_from_slice(&DEFAULT_PERCENTILES);
        ThreadStat {
            name: String::new(),
            verror: String::new(),
            error: 0,
            thread_number: 1,
            groupid: 0,
            pid: 0,
            description: String::new(),
            members: 1,
            unified_rw_rep: 0,
            disable_prio_stat: 0,
            sync_stat: IoStat::default(),
            clat_stat: Default::default(),
            slat_stat: Default::default(),
            lat_stat: Default::default(),
            bw_stat: Default::default(),
            iops_stat: Default::default(),
            usr_time: 0,
            sys_time: 0,
            ctx: 0,
            minf: 0,
            majf: 0,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            percentile_precision: 2,
            percentile_list,
            io_u_map: [0; 7],
            io_u_submit: [0; 7],
            io_u_complete: [0; 7],
            io_u_lat_n: [0; 10],
            io_u_lat_u: [0; 10],
            io_u_lat_m: [0; 12],
            plat: zero_plats(),
            sync_plat: zero_plat(),
            total_io_u: [0; 4],
            short_io_u: [0; 3],
            drop_io_u: [0; 3],
            total_submit: 0,
            total_complete: 0,
            io_bytes: [0; 3],
            runtime: [0; 3],
            total_run_time: 0,
            continue_on_error: 0,
            first_error: 0,
            total_err_count: 0,
            nr_zone_resets: 0,
            block_infos: Vec::new(),
            kb_base: 1024,
            unit_base: 4,
            latency_depth: 1,
            latency_target: 0,
            latency_percentile: 100.0,
            latency_window: 0,
            sig_figs: 4,
            ss_dur: 0,
            ss_state: 0,
            ss_head: 0,
            ss_limit: 0.0,
            ss_slope: 0.0,
            ss_deviation: 0.0,
            ss_criterion: 0.0,
            ioprio: 0,
            cachehit: 0,
            cachemiss: 0,
            rs: GroupStats::default(),
            clat_prio: Default::default(),
            ss_iops: Vec::new(),
            ss_bw: Vec::new(),
        }
    }
}

fn zero_plats() -> Box<[[Plat; 3]; 3]> {
    Box::new([[[0u64; PLAT_NR]; 3]; 3])
}

/// Latency kinds of `plat`.
pub const KIND_SLAT: usize = 0;
pub const KIND_CLAT: usize = 1;
pub const KIND_LAT: usize = 2;

impl Payload for ThreadStat {
    const OPCODE: Opcode = Opcode::Ts;

    fn encode(&self) -> Vec<u8> {
        let nprio: usize = self.clat_prio.iter().map(|v| v.len()).sum();
        let ss = self.ss_state & SS_DATA != 0;
        let ss_n = if ss { self.ss_dur as usize } else { 0 };
        let mut w = Writer::with_capacity(TS_BASE_LEN + nprio * PRIO_LEN + ss_n * 16);
        w.str_fixed(&self.name, 128);
        w.str_fixed(&self.verror, 128);
        w.u32s(&[self.error, self.thread_number, self.groupid, self.pid]);
        w.str_fixed(&self.description, 256);
        w.u32s(&[self.members, self.unified_rw_rep, self.disable_prio_stat, 0]);
        debug_assert_eq!(w.pos(), 544);
        put_io(&mut w, &self.sync_stat);
        for a in [
            &self.clat_stat,
            &self.slat_stat,
            &self.lat_stat,
            &self.bw_stat,
            &self.iops_stat,
        ] {
            a.iter().for_each(|s| put_io(&mut w, s));
        }
        debug_assert_eq!(w.pos(), 1440);
        w.u64s(&[self.usr_time, self.sys_time, self.ctx, self.minf, self.majf]);
        w.u32s(&[
            self.clat_percentiles as u32,
            self.lat_percentiles as u32,
            self.slat_percentiles as u32,
            0,
        ]);
        w.u64(self.percentile_precision);
        self.percentile_list.iter().for_each(|p| w.fp64(*p));
        debug_assert_eq!(w.pos(), 1824);
        w.u64s(&self.io_u_map);
        w.u64s(&self.io_u_submit);
        w.u64s(&self.io_u_complete);
        w.u64s(&self.io_u_lat_n);
        w.u64s(&self.io_u_lat_u);
        w.u64s(&self.io_u_lat_m);
        debug_assert_eq!(w.pos(), 2248);
        for k in self.plat.iter() {
            for d in k.iter() {
                w.u64s(d);
            }
        }
        w.u64s(&self.sync_plat[..]);
        debug_assert_eq!(w.pos(), 150_728);
        w.u64s(&self.total_io_u);
        w.u64s(&self.short_io_u);
        w.u64s(&self.drop_io_u);
        w.u64(self.total_submit);
        w.u64(self.total_complete);
        w.u64s(&self.io_bytes);
        w.u64s(&self.runtime);
        w.u64(self.total_run_time);
        w.u16(self.continue_on_error);
        w.u16(0);
        w.u32(self.first_error);
        w.u64(self.total_err_count);
        w.u64(self.nr_zone_resets);
        let nbi = self.block_infos.len().min(BLOCK_INFOS_MAX);
        w.u64(nbi as u64);
        w.u32s(&self.block_infos[..nbi]);
        w.zeros((BLOCK_INFOS_MAX - nbi) * 4);
        debug_assert_eq!(w.pos(), 183_680);
        w.u32s(&[self.kb_base, self.unit_base, self.latency_depth, 0]);
        w.u64(self.latency_target);
        w.fp64(self.latency_percentile);
        w.u64(self.latency_window);
        w.u32(self.sig_figs);
        debug_assert_eq!(w.pos(), 183_732);
        w.u64(self.ss_dur);
        w.u32(self.ss_state);
        w.u32(self.ss_head);
        for v in [
            self.ss_limit,
            self.ss_slope,
            self.ss_deviation,
            self.ss_criterion,
        ] {
            w.fp64(v);
        }
        w.u32(self.ioprio);
        debug_assert_eq!(w.pos(), 183_816);
        // Extension layout: the priority arrays by direction, then the steady-state data.
        let mut off = TS_BASE_LEN as u64;
        let mut prio_off = [0u64; 3];
        for (d, v) in self.clat_prio.iter().enumerate() {
            if !v.is_empty() {
                prio_off[d] = off;
                off += (v.len() * PRIO_LEN) as u64;
            }
        }
        let (ss_iops_off, ss_bw_off) = if ss {
            (off, off + ss_n as u64 * 8)
        } else {
            (0, 0)
        };
        w.u64(ss_iops_off);
        w.u64(ss_bw_off);
        w.u64s(&prio_off);
        w.u32s(&[0, 1, 2].map(|d| self.clat_prio[d].len() as u32));
        w.u64(self.cachehit);
        w.u64(self.cachemiss);
        w.u32(0);
        debug_assert_eq!(w.pos(), TS_BLOCK_LEN);
        self.rs.put(&mut w);
        w.u32(0);
        debug_assert_eq!(w.pos(), TS_BASE_LEN);
        for v in &self.clat_prio {
            for p in v {
                w.u64s(&p.hist[..]);
                put_io(&mut w, &p.stat);
                w.u32(p.ioprio);
                w.u32(0);
            }
        }
        if ss {
            let ring = |v: &[u64], w: &mut Writer| {
                for i in 0..ss_n {
                    w.u64(v.get(i).copied().unwrap_or(0));
                }
            };
            ring(&self.ss_iops, &mut w);
            ring(&self.ss_bw, &mut w);
        }
        w.buf
    }

    fn decode(p: &[u8]) -> Result<Self> {
        if p.len() < TS_BASE_LEN {
            return Err(Error::Size {
                what: "TS",
                got: p.len(),
                want: "at least 184056",
            });
        }
        let mut r = Reader::new(p, "TS");
        let name = r.str_fixed(128)?;
        let verror = r.str_fixed(128)?;
        let [error, thread_number, groupid, pid] = r.u32s()?;
        let description = r.str_fixed(256)?;
        let [members, unified_rw_rep, disable_prio_stat, _] = r.u32s()?;
        let sync_stat = get_io(&mut r)?;
        let clat_stat = get_io3(&mut r)?;
        let slat_stat = get_io3(&mut r)?;
        let lat_stat = get_io3(&mut r)?;
        let bw_stat = get_io3(&mut r)?;
        let iops_stat = get_io3(&mut r)?;
        let [usr_time, sys_time, ctx, minf, majf] = r.u64s()?;
        let [clat_p, lat_p, slat_p, _] = r.u32s()?;
        let percentile_precision = r.u64()?;
        let mut percentile_list = [0.0; LIST_MAX];
        for x in &mut percentile_list {
            *x = r.fp64()?;
        }
        let io_u_map = r.u64s()?;
        let io_u_submit = r.u64s()?;
        let io_u_complete = r.u64s()?;
        let io_u_lat_n = r.u64s()?;
        let io_u_lat_u = r.u64s()?;
        let io_u_lat_m = r.u64s()?;
        let mut plat = zero_plats();
        for k in plat.iter_mut() {
            for d in k.iter_mut() {
                r.u64_into(d)?;
            }
        }
        let mut sync_plat = zero_plat();
        r.u64_into(&mut sync_plat[..])?;
        let total_io_u = r.u64s()?;
        let short_io_u = r.u64s()?;
        let drop_io_u = r.u64s()?;
        let total_submit = r.u64()?;
        let total_complete = r.u64()?;
        let io_bytes = r.u64s()?;
        let runtime = r.u64s()?;
        let total_run_time = r.u64()?;
        let continue_on_error = r.u16()?;
        r.skip(2)?;
        let first_error = r.u32()?;
        let total_err_count = r.u64()?;
        let nr_zone_resets = r.u64()?;
        let nbi = r.u64()?;
        if nbi > BLOCK_INFOS_MAX as u64 {
            return Err(Error::Field {
                what: "TS nr_block_infos",
                detail: format!("{nbi} exceeds {BLOCK_INFOS_MAX}"),
            });
        }
        let mut block_infos = vec![0u32; BLOCK_INFOS_MAX];
        for x in &mut block_infos {
            *x = r.u32()?;
        }
        block_infos.truncate(nbi as usize);
        let [kb_base, unit_base, latency_depth, _] = r.u32s()?;
        let latency_target = r.u64()?;
        let latency_percentile = r.fp64()?;
        let latency_window = r.u64()?;
        let sig_figs = r.u32()?;
        let ss_dur = r.u64()?;
        let ss_state = r.u32()?;
        let ss_head = r.u32()?;
        let [ss_limit, ss_slope, ss_deviation, ss_criterion] =
            [r.fp64()?, r.fp64()?, r.fp64()?, r.fp64()?];
        let ioprio = r.u32()?;
        let ss_iops_off = r.u64()?;
        let ss_bw_off = r.u64()?;
        let prio_off: [u64; 3] = r.u64s()?;
        let nr_prio: [u32; 3] = r.u32s()?;
        let cachehit = r.u64()?;
        let cachemiss = r.u64()?;
        r.seek(TS_BLOCK_LEN)?;
        let rs = GroupStats::get(&mut r)?;
        // Extension.
        let mut clat_prio: [Vec<ClatPrio>; 3] = Default::default();
        for d in 0..3 {
            if nr_prio[d] == 0 {
                continue;
            }
            let bytes = nr_prio[d] as u64 * PRIO_LEN as u64;
            let ok = prio_off[d] >= TS_BASE_LEN as u64
                && prio_off[d]
                    .checked_add(bytes)
                    .is_some_and(|e| e <= p.len() as u64);
            if !ok {
                return Err(Error::Field {
                    what: "TS clat_prio extension",
                    detail: format!(
                        "direction {d}: {} records at offset {} do not fit in {} bytes",
                        nr_prio[d],
                        prio_off[d],
                        p.len()
                    ),
                });
            }
            r.seek(prio_off[d] as usize)?;
            for _ in 0..nr_prio[d] {
                let mut hist = zero_plat();
                r.u64_into(&mut hist[..])?;
                let stat = get_io(&mut r)?;
                let ioprio = r.u32()?;
                r.skip(4)?;
                clat_prio[d].push(ClatPrio { hist, stat, ioprio });
            }
        }
        let (mut ss_iops, mut ss_bw) = (Vec::new(), Vec::new());
        if ss_state & SS_DATA != 0 {
            for (off, out) in [(ss_iops_off, &mut ss_iops), (ss_bw_off, &mut ss_bw)] {
                let fits = off >= TS_BASE_LEN as u64
                    && ss_dur
                        .checked_mul(8)
                        .and_then(|n| n.checked_add(off))
                        .is_some_and(|e| e <= p.len() as u64);
                if !fits {
                    return Err(Error::Field {
                        what: "TS steady-state extension",
                        detail: format!(
                            "{ss_dur} values at offset {off} do not fit in {} bytes",
                            p.len()
                        ),
                    });
                }
                r.seek(off as usize)?;
                *out = vec![0u64; ss_dur as usize];
                r.u64_into(out)?;
            }
        }
        Ok(ThreadStat {
            name,
            verror,
            error,
            thread_number,
            groupid,
            pid,
            description,
            members,
            unified_rw_rep,
            disable_prio_stat,
            sync_stat,
            clat_stat,
            slat_stat,
            lat_stat,
            bw_stat,
            iops_stat,
            usr_time,
            sys_time,
            ctx,
            minf,
            majf,
            clat_percentiles: clat_p != 0,
            lat_percentiles: lat_p != 0,
            slat_percentiles: slat_p != 0,
            percentile_precision,
            percentile_list,
            io_u_map,
            io_u_submit,
            io_u_complete,
            io_u_lat_n,
            io_u_lat_u,
            io_u_lat_m,
            plat,
            sync_plat,
            total_io_u,
            short_io_u,
            drop_io_u,
            total_submit,
            total_complete,
            io_bytes,
            runtime,
            total_run_time,
            continue_on_error,
            first_error,
            total_err_count,
            nr_zone_resets,
            block_infos,
            kb_base,
            unit_base,
            latency_depth,
            latency_target,
            latency_percentile,
            latency_window,
            sig_figs,
            ss_dur,
            ss_state,
            ss_head,
            ss_limit,
            ss_slope,
            ss_deviation,
            ss_criterion,
            ioprio,
            cachehit,
            cachemiss,
            rs,
            clat_prio,
            ss_iops,
            ss_bw,
        })
    }
}

impl ThreadStat {
    /// The percentile list up to its first 0.0.
    pub fn percentiles(&self) -> Vec<f64> {
        self.percentile_list
            .iter()
            .take_while(|p| **p != 0.0)
            .copied()
            .collect()
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

    fn sample() -> ThreadStat {
        let mut t = ThreadStat {
            name: "job1".into(),
            pid: 77,
            members: 2,
            ..Default::default()
        };
        t.clat_stat[1] = IoStat {
            max: 900,
            min: 10,
            samples: 5,
            mean: 37.621872084752404,
            s: 12.5,
        };
        t.plat[KIND_CLAT][1][397] = 3;
        t.sync_plat[5] = 1;
        t.io_bytes = [1, 2, 3];
        t.runtime = [4, 5, 6];
        t.block_infos = vec![7, 8];
        t.sig_figs = 3;
        t.ss_dur = 2;
        t.ss_state = SS_DATA | SS_IOPS;
        t.ss_iops = vec![10, 11];
        t.ss_bw = vec![20, 21];
        t.cachemiss = 99;
        t.rs.groupid = 3;
        t.rs.iobytes = [1, 2, 3];
        t
    }

    #[test]
    fn offsets_match_the_reference() {
        let t = sample();
        let b = t.encode();
        assert_eq!(b.len(), TS_BASE_LEN + 32);
        assert_eq!(&b[0..4], b"job1");
        assert_eq!(le32(&b, 268), 77);
        assert_eq!(le32(&b, 528), 2);
        // clat_stat[1] at 600 + 56.
        assert_eq!(le64(&b, 656), 900);
        assert_eq!(le64(&b, 656 + 24), 0x4042cf9981252749);
        assert_eq!(le64(&b, 1496), 2); // percentile_precision
        assert_eq!(le64(&b, 1504), 1.0f64.to_bits());
        assert_eq!(le64(&b, 2248 + 8 * ((3 + 1) * PLAT_NR + 397)), 3);
        assert_eq!(le64(&b, 135_880 + 40), 1);
        assert_eq!(le64(&b, 150_824 + 8), 2); // io_bytes[1]
        assert_eq!(le64(&b, 150_848 + 16), 6); // runtime[2]
        assert_eq!(le64(&b, 150_904), 2); // nr_block_infos
        assert_eq!(le32(&b, 150_916), 8);
        assert_eq!(le32(&b, 183_680), 1024);
        assert_eq!(le32(&b, 183_684), 4);
        assert_eq!(le64(&b, 183_704), 100.0f64.to_bits());
        assert_eq!(le32(&b, 183_728), 3);
        assert_eq!(le64(&b, 183_732), 2);
        assert_eq!(le32(&b, 183_740), SS_DATA | SS_IOPS);
        assert_eq!(le64(&b, 183_816), 184_056);
        assert_eq!(le64(&b, 183_824), 184_072);
        assert_eq!(le64(&b, 183_876), 99);
        assert_eq!(le32(&b, 183_888 + 156), 3); // rs.groupid
        assert_eq!(le64(&b, 183_888 + 24), u64::MAX); // rs.min_run[0]
        assert_eq!(le64(&b, 184_056), 10);
        assert_eq!(le64(&b, 184_080), 21);
        assert_eq!(ThreadStat::decode(&b).unwrap(), t);
    }

    #[test]
    fn priority_extension() {
        let mut t = sample();
        t.ss_state = 0;
        t.ss_iops.clear();
        t.ss_bw.clear();
        for (i, prio) in [0u32, 0x2000].into_iter().enumerate() {
            let mut hist = zero_plat();
            hist[100 + i] = 4;
            t.clat_prio[0].push(ClatPrio {
                hist,
                stat: IoStat {
                    samples: 4,
                    ..Default::default()
                },
                ioprio: prio,
            });
        }
        let b = t.encode();
        assert_eq!(b.len(), 213_880);
        assert_eq!(le64(&b, 183_832), 184_056);
        assert_eq!(le32(&b, 183_856), 2);
        assert_eq!(le32(&b, 184_056 + PRIO_LEN + 14_904), 0x2000);
        assert_eq!(ThreadStat::decode(&b).unwrap(), t);
        // A count that points past the payload.
        let mut bad = b.clone();
        bad[183_856] = 3;
        assert!(matches!(ThreadStat::decode(&bad), Err(Error::Field { .. })));
        let mut bad = b.clone();
        bad[183_832..183_840].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(ThreadStat::decode(&bad).is_err());
        assert!(ThreadStat::decode(&b[..TS_BASE_LEN - 1]).is_err());
        assert!(ThreadStat::decode(&b[..TS_BASE_LEN + 5]).is_err());
        let mut bad = b;
        bad[150_904..150_912].copy_from_slice(&9000u64.to_le_bytes());
        assert!(ThreadStat::decode(&bad).is_err());
    }
}
