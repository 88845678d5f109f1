//! `ADD_JOB` / `UPDATE_JOB` (§4.15, §4.18): a job's options as fio 3.33's packed
//! `thread_options_pack` (25816 bytes). The layout is a table of named fields (offset and
//! type, checked to tile the pack exactly); values are read and written by name.

use crate::bytes::{truncate, Reader, Writer};
use crate::error::{Error, Result};
use crate::frame::Opcode;
use crate::msg::{exact, Payload};
use std::sync::OnceLock;

/// Size of the options pack.
pub const PACK_LEN: usize = 25_816;
/// Size of an ADD_JOB / UPDATE_JOB payload.
pub const ADD_JOB_LEN: usize = PACK_LEN + 8;

/// The type of a pack field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    U32,
    I32,
    U64,
    /// A 16-byte floating-point slot.
    Fp64,
    /// A NUL-terminated string in a fixed field of this size.
    Str(usize),
    U32s(usize),
    U64s(usize),
    Fp64s(usize),
    Bytes(usize),
    /// `bssplit[3][64]` of {u64 bs, u32 perc, 4 pad}; counts in `bssplit_nr`.
    BsSplit,
    /// `zone_split[3][256]` of {u8 access_perc, u8 size_perc, 6 pad, u64 size}; counts in
    /// `zone_split_nr`.
    ZoneSplit,
}

impl Kind {
    pub fn size(self) -> usize {
        match self {
            Kind::U32 | Kind::I32 => 4,
            Kind::U64 => 8,
            Kind::Fp64 => 16,
            Kind::Str(n) | Kind::Bytes(n) => n,
            Kind::U32s(n) => 4 * n,
            Kind::U64s(n) => 8 * n,
            Kind::Fp64s(n) => 16 * n,
            Kind::BsSplit => 3 * 64 * 16,
            Kind::ZoneSplit => 3 * 256 * 16,
        }
    }
}

/// One named field of the pack.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    pub offset: usize,
    pub kind: Kind,
}

const S: Kind = Kind::Str(256);
const U32: Kind = Kind::U32;
const U64: Kind = Kind::U64;
const U32X3: Kind = Kind::U32s(3);
const U64X3: Kind = Kind::U64s(3);

/// The pack as in fio-protocol.md §4.15: (offset, type, consecutive field names).
#[rustfmt::skip]
const ROWS: &[(usize, Kind, &[&str])] = &[
    (0, Kind::U64s(8), &["set_options"]),
    (64, S, &["description", "name", "wait_for", "directory", "filename", "filename_format", "opendir", "ioengine", "mmapfile"]),
    (2368, U32, &["td_ddir", "rw_seq", "kb_base", "unit_base", "ddir_seq_nr"]),
    (2388, U64, &["ddir_seq_add"]),
    (2396, U32, &["iodepth", "iodepth_low", "iodepth_batch", "iodepth_batch_complete_min", "iodepth_batch_complete_max", "serialize_overlap", "pad"]),
    (2424, U64, &["size", "io_size"]),
    (2440, U32, &["size_percent", "size_nz", "io_size_percent", "io_size_nz", "fill_device", "file_append", "unique_filename", "pad3"]),
    (2472, U64, &["file_size_low", "file_size_high", "start_offset", "start_offset_align"]),
    (2504, U32, &["start_offset_nz", "pad4"]),
    (2512, U64X3, &["bs", "ba", "min_bs", "max_bs"]),
    (2608, Kind::BsSplit, &["bssplit"]),
    (5680, U32X3, &["bssplit_nr"]),
    (5692, Kind::U32s(384), &["ignore_error"]),
    (7228, U32X3, &["ignore_error_nr"]),
    (7240, U32, &["error_dump", "nr_files", "open_files", "file_lock_mode", "odirect", "oatomic", "invalidate_cache", "create_serialize", "create_fsync", "create_on_open", "create_only", "end_fsync", "pre_read", "sync_io", "write_hint", "verify", "do_verify", "verify_interval", "verify_offset"]),
    (7316, Kind::Bytes(512), &["verify_pattern"]),
    (7828, U32, &["verify_pattern_bytes", "verify_fatal", "verify_dump", "verify_async"]),
    (7844, U64, &["verify_backlog"]),
    (7852, U32, &["verify_batch", "experimental_verify", "verify_state", "verify_state_save", "use_thread", "unlink", "unlink_each_loop", "do_disk_util", "override_sync", "rand_repeatable", "allrand_repeatable", "pad2"]),
    (7900, U64, &["rand_seed"]),
    (7908, U32, &["log_avg_msec", "log_hist_msec", "log_hist_coarseness", "log_max", "log_offset", "log_gz", "log_gz_store", "log_unix_epoch", "log_alternate_epoch", "log_alternate_epoch_clock_id", "norandommap", "softrandommap", "bs_unaligned", "fsync_on_close", "bs_is_seq_rand", "random_distribution", "exitall_error", "sync_file_range"]),
    (7980, Kind::ZoneSplit, &["zone_split"]),
    (20268, U32X3, &["zone_split_nr"]),
    (20280, Kind::Fp64, &["zipf_theta", "pareto_h", "gauss_dev", "random_center"]),
    (20344, U32, &["random_generator"]),
    (20348, U32X3, &["perc_rand"]),
    (20360, U32, &["hugepage_size"]),
    (20364, U64, &["rw_min_bs"]),
    (20372, U32, &["fsync_blocks", "fdatasync_blocks", "barrier_blocks"]),
    (20384, U64, &["start_delay", "start_delay_high", "timeout", "ramp_time", "ss_dur", "ss_ramp_time"]),
    (20432, U32, &["ss_state"]),
    (20436, Kind::Fp64, &["ss_limit"]),
    (20452, U32, &["overwrite", "bw_avg_time", "iops_avg_time", "loops"]),
    (20468, U64, &["zone_range", "zone_size", "zone_capacity", "zone_skip", "lockmem"]),
    (20508, U32, &["zone_skip_nz", "mem_type", "mem_align", "exit_what", "stonewall", "new_group", "numjobs", "gpu_dev_id", "start_offset_percent", "cpus_allowed_policy", "iolog", "rwmixcycle"]),
    (20556, U32X3, &["rwmix"]),
    (20568, U32, &["nice", "ioprio", "ioprio_class", "file_service_type", "group_reporting", "stats", "fadvise_hint", "fallocate_mode", "zero_buffers", "refill_buffers", "scramble_buffers"]),
    (20612, Kind::Bytes(512), &["buffer_pattern"]),
    (21124, U32, &["buffer_pattern_bytes", "compress_percentage", "compress_chunk", "dedupe_percentage", "dedupe_mode", "dedupe_working_set_percentage", "dedupe_global", "time_based", "disable_lat", "disable_clat", "disable_slat", "disable_bw", "unified_rw_rep", "gtod_reduce", "gtod_cpu", "clocksource", "no_stall", "trim_percentage", "trim_batch", "trim_zero"]),
    (21204, U64, &["trim_backlog"]),
    (21212, U32, &["clat_percentiles", "lat_percentiles", "slat_percentiles", "percentile_precision", "pad5"]),
    (21232, Kind::Fp64s(20), &["percentile_list"]),
    (21552, S, &["read_iolog_file", "write_iolog_file", "merge_blktrace_file"]),
    (22320, Kind::Fp64s(20), &["merge_blktrace_scalars", "merge_blktrace_iters"]),
    (22960, U32, &["write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log"]),
    (22976, S, &["bw_log_file", "lat_log_file", "iops_log_file", "hist_log_file", "replay_redirect", "exec_prerun", "exec_postrun"]),
    (24768, U32, &["thinktime", "thinktime_spin", "thinktime_blocks", "thinktime_blocks_type", "thinktime_iotime"]),
    (24788, U64X3, &["rate", "ratemin"]),
    (24836, U32, &["ratecycle", "io_submit_mode"]),
    (24844, U32X3, &["rate_iops", "rate_iops_min"]),
    (24868, U32, &["rate_process", "rate_ign_think"]),
    (24876, S, &["ioscheduler"]),
    (25132, U32, &["continue_on_error"]),
    (25136, S, &["profile", "cgroup"]),
    (25648, U32, &["cgroup_weight", "cgroup_nodelete", "uid", "gid", "offset_increment_percent", "offset_increment_nz"]),
    (25672, U64, &["offset_increment", "number_ios", "latency_target", "latency_window"]),
    (25704, U64X3, &["max_latency"]),
    (25728, Kind::Fp64, &["latency_percentile"]),
    (25744, U32, &["latency_run"]),
    (25748, Kind::I32, &["flow_id"]),
    (25752, U32, &["flow", "flow_sleep", "sig_figs", "block_error_hist", "replay_align", "replay_scale", "replay_time_scale", "replay_skip", "per_job_logs", "allow_create", "allow_mounted_write", "zone_mode"]),
    (25800, Kind::I32, &["max_open_zones"]),
    (25804, U32, &["ignore_zone_limits", "log_entries", "log_prio"]),
];

/// Every field of the pack in offset order.
pub fn fields() -> &'static [Field] {
    static F: OnceLock<Vec<Field>> = OnceLock::new();
    F.get_or_init(|| {
        let mut v = Vec::new();
        for (off, kind, names) in ROWS {
            for (i, name) in names.iter().enumerate() {
                v.push(Field {
                    name,
                    offset: off + i * kind.size(),
                    kind: *kind,
                });
            }
        }
        v
    })
}

/// A field by name.
pub fn field(name: &str) -> Option<Field> {
    fields().iter().find(|f| f.name == name).copied()
}

/// A field's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    U32(u32),
    I32(i32),
    U64(u64),
    F64(f64),
    Str(String),
    U32s(Vec<u32>),
    U64s(Vec<u64>),
    F64s(Vec<f64>),
    Bytes(Vec<u8>),
    /// Per direction: (block size, percentage).
    BsSplit([Vec<(u64, u32)>; 3]),
    /// Per direction: (access percentage, size percentage).
    ZoneSplit([Vec<(u8, u8)>; 3]),
}

/// The options pack of one job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionsPack {
    raw: Vec<u8>,
}

impl Default for OptionsPack {
    fn default() -> Self {
        OptionsPack {
            raw: vec![0; PACK_LEN],
        }
    }
}

fn unknown(name: &str) -> Error {
    Error::Field {
        what: "options pack field",
        detail: format!("no field named {name:?}"),
    }
}

impl OptionsPack {
    pub fn from_bytes(b: &[u8]) -> Result<Self> {
        exact("options pack", b, PACK_LEN, "25816")?;
        Ok(OptionsPack { raw: b.to_vec() })
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.raw
    }

    fn counts(&self, name: &str, max: usize) -> [usize; 3] {
        let off = field(name).map(|f| f.offset).unwrap_or(0);
        let mut r = Reader::new(&self.raw[off..off + 12], "pack");
        [0; 3].map(|_| (r.u32().unwrap_or(0) as usize).min(max))
    }

    /// Read a field by name.
    pub fn get(&self, name: &str) -> Result<Value> {
        let f = field(name).ok_or_else(|| unknown(name))?;
        let b = &self.raw[f.offset..f.offset + f.kind.size()];
        let mut r = Reader::new(b, "options pack field");
        Ok(match f.kind {
            Kind::U32 => Value::U32(r.u32()?),
            Kind::I32 => Value::I32(r.i32()?),
            Kind::U64 => Value::U64(r.u64()?),
            Kind::Fp64 => Value::F64(r.fp64()?),
            Kind::Str(n) => Value::Str(r.str_fixed(n)?),
            Kind::U32s(n) => Value::U32s((0..n).map(|_| r.u32()).collect::<Result<_>>()?),
            Kind::U64s(n) => Value::U64s((0..n).map(|_| r.u64()).collect::<Result<_>>()?),
            Kind::Fp64s(n) => Value::F64s((0..n).map(|_| r.fp64()).collect::<Result<_>>()?),
            Kind::Bytes(_) => Value::Bytes(b.to_vec()),
            Kind::BsSplit => {
                let n = self.counts("bssplit_nr", 64);
                let mut out: [Vec<(u64, u32)>; 3] = Default::default();
                for d in 0..3 {
                    for i in 0..n[d] {
                        let mut e = Reader::new(&b[(d * 64 + i) * 16..], "bssplit");
                        out[d].push((e.u64()?, e.u32()?));
                    }
                }
                Value::BsSplit(out)
            }
            Kind::ZoneSplit => {
                let n = self.counts("zone_split_nr", 256);
                let mut out: [Vec<(u8, u8)>; 3] = Default::default();
                for d in 0..3 {
                    for i in 0..n[d] {
                        let at = (d * 256 + i) * 16;
                        out[d].push((b[at], b[at + 1]));
                    }
                }
                Value::ZoneSplit(out)
            }
        })
    }

    /// Write a field by name; the value must have the field's type (arrays may be
    /// shorter than the field: the rest is zero). Split tables also set their counts.
    pub fn set(&mut self, name: &str, v: Value) -> Result<()> {
        let f = field(name).ok_or_else(|| unknown(name))?;
        let mut w = Writer::with_capacity(f.kind.size());
        let mismatch = || Error::Field {
            what: "options pack value",
            detail: format!("wrong type or length for {name} ({:?})", f.kind),
        };
        match (f.kind, v) {
            (Kind::U32, Value::U32(x)) => w.u32(x),
            (Kind::I32, Value::I32(x)) => w.i32(x),
            (Kind::U64, Value::U64(x)) => w.u64(x),
            (Kind::Fp64, Value::F64(x)) => w.fp64(x),
            (Kind::Str(n), Value::Str(s)) => w.str_fixed(truncate(&s, n - 1), n),
            (Kind::U32s(n), Value::U32s(x)) if x.len() <= n => w.u32s(&x),
            (Kind::U64s(n), Value::U64s(x)) if x.len() <= n => w.u64s(&x),
            (Kind::Fp64s(n), Value::F64s(x)) if x.len() <= n => x.iter().for_each(|v| w.fp64(*v)),
            (Kind::Bytes(n), Value::Bytes(x)) if x.len() <= n => w.bytes(&x),
            (Kind::BsSplit, Value::BsSplit(x)) if x.iter().all(|d| d.len() <= 64) => {
                for d in &x {
                    for (bs, perc) in d {
                        w.u64(*bs);
                        w.u32(*perc);
                        w.u32(0);
                    }
                    w.zeros((64 - d.len()) * 16);
                }
                let nr = x.each_ref().map(|d| d.len() as u32);
                self.set("bssplit_nr", Value::U32s(nr.to_vec()))?;
            }
            (Kind::ZoneSplit, Value::ZoneSplit(x)) if x.iter().all(|d| d.len() <= 256) => {
                for d in &x {
                    for (a, s) in d {
                        w.u8(*a);
                        w.u8(*s);
                        w.zeros(14);
                    }
                    w.zeros((256 - d.len()) * 16);
                }
                let nr = x.each_ref().map(|d| d.len() as u32);
                self.set("zone_split_nr", Value::U32s(nr.to_vec()))?;
            }
            _ => return Err(mismatch()),
        }
        w.pad_to(f.kind.size());
        self.raw[f.offset..f.offset + f.kind.size()].copy_from_slice(&w.buf);
        Ok(())
    }

    /// A u32 field (0 for a field of another type).
    pub fn u32(&self, name: &str) -> u32 {
        match self.get(name) {
            Ok(Value::U32(v)) => v,
            _ => 0,
        }
    }
    /// A u64 field (0 for a field of another type).
    pub fn u64(&self, name: &str) -> u64 {
        match self.get(name) {
            Ok(Value::U64(v)) => v,
            _ => 0,
        }
    }
    /// A string field (empty for a field of another type).
    pub fn str(&self, name: &str) -> String {
        match self.get(name) {
            Ok(Value::Str(v)) => v,
            _ => String::new(),
        }
    }
}

/// `ADD_JOB` (S→C, 25824 bytes): a parsed job definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddJob {
    /// 1-based job number.
    pub thread_number: u32,
    pub groupid: u32,
    pub pack: OptionsPack,
}

fn encode_job(j: &AddJob) -> Vec<u8> {
    let mut w = Writer::with_capacity(ADD_JOB_LEN);
    w.u32(j.thread_number);
    w.u32(j.groupid);
    w.bytes(j.pack.as_bytes());
    w.buf
}

fn decode_job(what: &'static str, p: &[u8]) -> Result<AddJob> {
    exact(what, p, ADD_JOB_LEN, "25824")?;
    let mut r = Reader::new(p, what);
    Ok(AddJob {
        thread_number: r.u32()?,
        groupid: r.u32()?,
        pack: OptionsPack::from_bytes(r.rest())?,
    })
}

impl Payload for AddJob {
    const OPCODE: Opcode = Opcode::AddJob;
    fn encode(&self) -> Vec<u8> {
        encode_job(self)
    }
    fn decode(p: &[u8]) -> Result<Self> {
        decode_job("ADD_JOB", p)
    }
}

/// `UPDATE_JOB` request (C→S): the same layout; `thread_number` selects the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpdateJob(pub AddJob);

impl Payload for UpdateJob {
    const OPCODE: Opcode = Opcode::UpdateJob;
    fn encode(&self) -> Vec<u8> {
        encode_job(&self.0)
    }
    fn decode(p: &[u8]) -> Result<Self> {
        decode_job("UPDATE_JOB", p).map(UpdateJob)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_tile_the_pack() {
        let f = fields();
        let mut end = 0;
        for x in f {
            assert_eq!(x.offset, end, "gap or overlap before {}", x.name);
            end = x.offset + x.kind.size();
        }
        assert_eq!(end, PACK_LEN);
        let mut names: Vec<_> = f.iter().map(|x| x.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), f.len(), "field names are unique");
        assert_eq!(field("bs").unwrap().offset, 2512);
        assert_eq!(field("latency_percentile").unwrap().offset, 25728);
        assert_eq!(field("log_prio").unwrap().offset, 25812);
        assert_eq!(field("percentile_list").unwrap().offset, 21232);
        assert_eq!(field("merge_blktrace_iters").unwrap().offset, 22640);
    }

    #[test]
    fn values_round_trip() {
        let mut p = OptionsPack::default();
        p.set("name", Value::Str("seq-read".into())).unwrap();
        p.set("iodepth", Value::U32(8)).unwrap();
        p.set("size", Value::U64(1 << 30)).unwrap();
        p.set("bs", Value::U64s(vec![4096, 65536, 4096])).unwrap();
        p.set("zipf_theta", Value::F64(1.2)).unwrap();
        p.set("percentile_list", Value::F64s(vec![50.0, 99.0]))
            .unwrap();
        p.set("flow_id", Value::I32(-3)).unwrap();
        let split = [vec![(4096, 50), (65536, 50)], vec![], vec![(512, 100)]];
        p.set("bssplit", Value::BsSplit(split.clone())).unwrap();
        let zones = [vec![(60, 10), (40, 90)], vec![], vec![]];
        p.set("zone_split", Value::ZoneSplit(zones.clone()))
            .unwrap();
        let j = AddJob {
            thread_number: 2,
            groupid: 1,
            pack: p,
        };
        let b = j.encode();
        assert_eq!(b.len(), ADD_JOB_LEN);
        assert_eq!(
            u32::from_le_bytes(b[8 + 2396..8 + 2400].try_into().unwrap()),
            8
        );
        let back = AddJob::decode(&b).unwrap();
        assert_eq!(back, j);
        let q = &back.pack;
        assert_eq!(q.str("name"), "seq-read");
        assert_eq!(q.u32("iodepth"), 8);
        assert_eq!(q.u64("size"), 1 << 30);
        assert_eq!(q.get("zipf_theta").unwrap(), Value::F64(1.2));
        assert_eq!(q.get("flow_id").unwrap(), Value::I32(-3));
        assert_eq!(q.get("bssplit").unwrap(), Value::BsSplit(split));
        assert_eq!(q.get("zone_split").unwrap(), Value::ZoneSplit(zones));
        assert_eq!(q.get("bssplit_nr").unwrap(), Value::U32s(vec![2, 0, 1]));
        match q.get("percentile_list").unwrap() {
            Value::F64s(v) => assert_eq!(&v[..3], &[50.0, 99.0, 0.0]),
            v => panic!("{v:?}"),
        }
        let mut p = back.pack.clone();
        assert!(p.set("iodepth", Value::U64(1)).is_err());
        assert!(p.set("nosuch", Value::U32(1)).is_err());
        assert!(p.set("bs", Value::U64s(vec![1; 4])).is_err());
        assert!(AddJob::decode(&b[..100]).is_err());
        let u = UpdateJob(j);
        assert_eq!(UpdateJob::decode(&u.encode()).unwrap(), u);
    }
}
