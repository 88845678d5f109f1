//! I/O pattern: direction, block sizes, sizes and offsets, randomness, zones, engine and depth.

use super::*;

/// I/O pattern: direction, block sizes, sizes and offsets, randomness, zones, engine and depth.
#[rustfmt::skip]
pub(super) static ROWS: &[OptDef] = &[
    row!(
        "rw",
        ["readwrite"],
        Kind::Choice(RwKind::CHOICES),
        "read",
        "IO direction",
        |o, v| {
            let s = req(v)?;
            let (base, post) = match s.split_once(':') {
                Some((b, p)) => (b, Some(p)),
                None => (s, None),
            };
            o.rw = RwKind::from_name(base).ok_or_else(|| {
                let names: Vec<&str> = RwKind::CHOICES.iter().map(|c| c.0).collect();
                format!(
                    "'{base}' is not a valid value; valid values: {}",
                    names.join(", ")
                )
            })?;
            (o.rw_nr, o.rw_back) = (0, 0);
            match post.map(|p| (p, p.strip_prefix('-'))) {
                // Backwards (fio's negative offset increment): sequential I/O only.
                Some((_, Some(back))) if !o.rw.is_random() => {
                    o.rw_back = parse_size(back, o.kb_base)?;
                }
                Some((p, _)) => o.rw_nr = parse_size(p, o.kb_base)?,
                None => {}
            }
            Ok(())
        }
    ),
    row!(
        "rw_sequencer",
        [],
        Kind::Choice(&[
            ("sequential", "Generate sequential offsets"),
            ("identical", "Generate identical offsets")
        ]),
        "sequential",
        "IO offset generator modifier",
        |o, v| {
            o.rw_sequencer = choice(
                v,
                &[
                    ("sequential", Sequencer::Sequential),
                    ("identical", Sequencer::Identical),
                ],
            )?;
            Ok(())
        }
    ),
    row!(
        "rwmixread",
        [],
        Kind::Int { min: 0, max: 100 },
        "50",
        "Percentage of mixed workload that is reads",
        |o, v| {
            o.rwmixread = int_in(v, o.kb_base, 0, 100)? as u32;
            Ok(())
        }
    ),
    row!(
        "rwmixwrite",
        [],
        Kind::Int { min: 0, max: 100 },
        "50",
        "Percentage of mixed workload that is writes",
        |o, v| {
            o.rwmixread = 100 - int_in(v, o.kb_base, 0, 100)? as u32;
            Ok(())
        }
    ),
    row!(
        "bs",
        ["blocksize"],
        Kind::SizeDir,
        "4096",
        "Block size unit",
        |o, v| {
            let bs = dirs_sizes(o, req(v)?, o.bs)?;
            if bs.contains(&0) {
                return Err("block size must be at least 1".into());
            }
            o.bs = bs;
            Ok(())
        }
    ),
    row!(
        "ba",
        ["blockalign"],
        Kind::SizeDir,
        "",
        "IO block offset alignment",
        |o, v| {
            let cur = o.blockalign.unwrap_or([0; 3]);
            let ba = dirs_sizes(o, req(v)?, cur)?;
            if ba.contains(&0) {
                return Err("block alignment must be at least 1".into());
            }
            o.blockalign = Some(ba);
            Ok(())
        }
    ),
    row!(
        "bsrange",
        ["blocksize_range"],
        Kind::Range,
        "",
        "Set block size range (in more detail than bs)",
        |o, v| {
            let s = req(v)?;
            let mut r =
                o.bsrange
                    .unwrap_or([(o.bs[0], o.bs[0]), (o.bs[1], o.bs[1]), (o.bs[2], o.bs[2])]);
            let parts: Vec<&str> = s.split(',').collect();
            if parts.len() > 3 {
                return Err("at most three ranges (read,write,trim) are allowed".into());
            }
            let mut last = None;
            for (i, p) in parts.iter().enumerate() {
                if p.is_empty() {
                    continue;
                }
                let rr = parse_range(p, o.kb_base)?;
                if rr.0 == 0 {
                    return Err("block size must be at least 1".into());
                }
                r[i] = rr;
                last = Some(rr);
            }
            if let Some(l) = last {
                for slot in r.iter_mut().skip(parts.len()) {
                    *slot = l;
                }
            }
            o.bsrange = Some(r);
            Ok(())
        }
    ),
    row!(
        "bssplit",
        [],
        Kind::Str,
        "",
        "Set a specific mix of block sizes",
        |o, v| {
            o.bssplit = Some(crate::bssplit::parse_bssplit(req(v)?, o.kb_base)?);
            Ok(())
        }
    ),
    flag_row!(
        "bs_unaligned",
        ["blocksize_unaligned"],
        bs_unaligned,
        "Don't sector align IO buffer sizes"
    ),
    bool_row!(
        "bs_is_seq_rand",
        [],
        bs_is_seq_rand,
        "0",
        "Consider any blocksize setting to be sequential,random"
    ),
    row!(
        "size",
        [],
        Kind::Size { pct: true },
        "",
        "Total size of device or files",
        |o, v| {
            let v = req(v)?;
            o.size = Some(match o.zbd.note_zones(0, v) {
                Some(_) => SizeVal::Bytes(0),
                None => parse_size_pct(v, o.kb_base)?,
            });
            Ok(())
        }
    ),
    row!(
        "io_size",
        ["io_limit"],
        Kind::Size { pct: true },
        "",
        "Total size of I/O to be performed",
        |o, v| {
            let v = req(v)?;
            o.io_size = Some(match o.zbd.note_zones(1, v) {
                Some(_) => SizeVal::Bytes(0),
                None => parse_size_pct(v, o.kb_base)?,
            });
            Ok(())
        }
    ),
    bool_row!(
        "fill_device",
        ["fill_fs"],
        fill_device,
        "0",
        "Write until an ENOSPC error occurs"
    ),
    row!(
        "filesize",
        [],
        Kind::Range,
        "",
        "Size of individual files",
        |o, v| {
            let s = req(v)?;
            let r = if s.chars().skip(1).any(|c| c == '-' || c == ':') {
                parse_range(s, o.kb_base)?
            } else {
                let n = parse_size(s, o.kb_base)?;
                (n, n)
            };
            if r.0 == 0 {
                return Err("file size must be at least 1".into());
            }
            o.filesize = Some(r);
            Ok(())
        }
    ),
    bool_row!(
        "file_append",
        [],
        file_append,
        "0",
        "IO will start at the end of the file(s)"
    ),
    row!(
        "offset",
        ["fileoffset"],
        Kind::Size { pct: true },
        "0",
        "Start IO from this offset",
        |o, v| {
            let v = req(v)?;
            o.offset = match o.zbd.note_zones(2, v) {
                Some(_) => SizeVal::Bytes(0),
                // fio takes 0% (the start) as well.
                None => parse_offset_pct(v, o.kb_base)?,
            };
            Ok(())
        }
    ),
    row!(
        "offset_increment",
        [],
        Kind::Size { pct: true },
        "0",
        "What is the increment from one offset to the next",
        |o, v| {
            let v = req(v)?;
            o.offset_increment = match o.zbd.note_zones(3, v) {
                Some(_) => SizeVal::Bytes(0),
                None => parse_offset_pct(v, o.kb_base)?,
            };
            Ok(())
        }
    ),
    row!(
        "offset_align",
        [],
        Kind::Size { pct: false },
        "0",
        "Start IO from this offset alignment",
        |o, v| {
            o.offset_align = parse_size(req(v)?, o.kb_base)?;
            Ok(())
        }
    ),
    row!(
        "number_ios",
        [],
        Kind::Size { pct: false },
        "0",
        "Force job completion after this number of IOs",
        |o, v| {
            o.number_ios = parse_size(req(v)?, o.kb_base)?;
            Ok(())
        }
    ),
    row!(
        "randrepeat",
        [],
        Kind::Bool,
        "1",
        "Use repeatable random IO pattern",
        |o, v| {
            o.randrepeat = parse_bool(req(v)?)?;
            o.allrandrepeat_last = false;
            Ok(())
        }
    ),
    row!(
        "randseed",
        [],
        Kind::Size { pct: false },
        "0x89",
        "Set the random generator seed value",
        |o, v| {
            o.randseed = Some(parse_size(req(v)?, o.kb_base)?);
            Ok(())
        }
    ),
    row!(
        "allrandrepeat",
        [],
        Kind::Flag,
        "0",
        "Use repeatable random numbers for everything (fio 3.35+: alias of randrepeat)",
        |o, v| {
            o.allrandrepeat = flag(v)?;
            o.allrandrepeat_last = true;
            Ok(())
        }
    ),
    row!(
        "norandommap",
        [],
        Kind::Flag,
        "0",
        "Accept potential duplicate random blocks",
        |o, v| {
            o.norandommap = flag(v)?;
            o.newest.norandommap_set = true;
            Ok(())
        }
    ),
    bool_row!(
        "softrandommap",
        [],
        softrandommap,
        "0",
        "Set norandommap if randommap allocation fails"
    ),
    row!(
        "write_hint",
        [],
        Kind::Choice(&[
            ("none", ""),
            ("short", ""),
            ("medium", ""),
            ("long", ""),
            ("extreme", "")
        ]),
        "",
        "Set expected write life time",
        |o, v| {
            o.sysio.write_hint = Some(choice(v, crate::sysio::WRITE_HINTS)?);
            Ok(())
        }
    ),
    row!(
        "sync_file_range",
        [],
        Kind::Choice(crate::sysio::SFR_CHOICES),
        "",
        "Use sync_file_range()",
        |o, v| {
            o.sysio.sync_file_range = Some(crate::sysio::parse_sync_file_range(req(v)?, o.kb_base)?);
            Ok(())
        }
    ),
    row!(
        "random_generator",
        [],
        Kind::Choice(&[
            ("tausworthe", "Strong Tausworthe generator"),
            ("lfsr", "Variable length LFSR"),
            ("tausworthe64", "64-bit Tausworthe variant")
        ]),
        "tausworthe",
        "Type of random number generator to use",
        |o, v| {
            o.random_generator = choice(v, &[("tausworthe", RandGenOpt::Tausworthe), ("lfsr", RandGenOpt::Lfsr), ("tausworthe64", RandGenOpt::Tausworthe64)])?;
            o.newest.random_generator_set = true;
            Ok(())
        }
    ),
    row!(
        "random_distribution",
        [],
        Kind::Choice(&[
            ("random", "Random uniform distribution"),
            ("zipf", "Zipf distribution"),
            ("pareto", "Pareto distribution"),
            ("normal", "Normal (Gaussian) distribution"),
            ("zoned", "Zoned random distribution"),
            ("zoned_abs", "Zoned absolute random distribution"),
            ("sequence", "Fixed block-index sequence (newest fio): sequence:2,0,1")
        ]),
        "random",
        "Random offset distribution generator",
        |o, v| {
            let s = req(v)?;
            // sequence:i0,i1,… takes the whole value (its list uses ','), for every direction.
            if let Some(list) = (s == "sequence")
                .then_some("")
                .or_else(|| s.strip_prefix("sequence:"))
            {
                let d = flexio_workload::dist::Dist::Sequence(
                    flexio_workload::dist::parse_sequence(list)?,
                );
                o.random_distribution = [d.clone(), d.clone(), d];
                return Ok(());
            }
            // Per direction, separated by ',' (read,write,trim); one value for all.
            let parts: Vec<&str> = s.split(',').collect();
            if parts.len() > 3 {
                return Err("at most three distributions (read,write,trim)".into());
            }
            let kb1024 = o.kb_base == KbBase::K1024;
            let mut last = None;
            for (i, p) in parts.iter().enumerate() {
                if p.is_empty() {
                    continue;
                }
                let d = flexio_workload::dist::parse_dist(p, kb1024)?;
                o.random_distribution[i] = d.clone();
                last = Some(d);
            }
            if let Some(d) = last {
                for slot in o.random_distribution.iter_mut().skip(parts.len()) {
                    *slot = d.clone();
                }
            }
            Ok(())
        }
    ),
    row!("percentage_random", [], Kind::IntDir, "100", "Percentage of seq/random mix that should be random",
         |o, v| {
             let parts = split_dirs(req(v)?, false)?;
             for (i, p) in parts.iter().enumerate() {
                 if let Some(p) = p {
                     let n = int_in(Some(p), o.kb_base, 0, 100)? as u32;
                     o.percentage_random[i] = n;
                 }
             }
             Ok(())
         }),
    row!("random_sequence_stride", [], Kind::Bool, "0", "Advance a random_distribution=sequence by its length after each cycle (newest fio)",
         |o, v| { o.newest.random_sequence_stride = parse_bool(req(v)?)?; Ok(()) }).since("post-3.42"),
    row!("sprandom", [], Kind::Bool, "0", "SSD preconditioning: write the physical capacity once with a steady-state invalid-block distribution (fio 3.41+)",
         |o, v| { o.newest.sprandom = parse_bool(req(v)?)?; Ok(()) }).since("3.41"),
    row!("spr_num_regions", [], Kind::Int { min: 1, max: u32::MAX as i64 }, "100", "Number of regions for sprandom (fio 3.41+)",
         |o, v| { o.newest.spr_num_regions = int_in(v, o.kb_base, 1, u32::MAX as i64)? as u32; Ok(()) }).since("3.41"),
    row!("spr_op", [], Kind::FloatList, "0.15", "Over-provisioning ratio for sprandom (fio 3.41+)",
         |o, v| { o.newest.spr_op = parse_float_list(req(v)?, 1)?.0[0]; Ok(()) }).since("3.41"),
    row!("spr_cs", [], Kind::Size { pct: false }, "0", "Device cache size for sprandom (fio 3.42+)",
         |o, v| { o.newest.spr_cs = parse_size(req(v)?, o.kb_base)?; Ok(()) }).since("3.42"),
    row!("num_range", [], Kind::Int { min: 0, max: 256 }, "1", "Number of ranges per trim command (fio 3.37+)",
         |o, v| { o.newest.num_range = int_in(v, o.kb_base, 0, 256)? as u32; Ok(()) }).since("3.37"),
    row!("fdp", [], Kind::Bool, "0", "Use Data Placement (NVMe FDP) (fio 3.34+)",
         |o, v| { o.newest.fdp = parse_bool(req(v)?)?; Ok(()) }).since("3.34"),
    row!("dataplacement", ["data_placement"], Kind::Choice(&[("none", "Do not use data placement"), ("fdp", "Use Flexible Data Placement"), ("streams", "Use Streams")]),
         "none", "Data placement directive to use (fio 3.38+)",
         |o, v| {
             use crate::newest::DataPlacement as D;
             o.newest.dataplacement = Some(choice(v, &[("none", D::None), ("fdp", D::Fdp), ("streams", D::Streams)])?);
             Ok(())
         }).since("3.38"),
    row!("plid_select", ["fdp_pli_select"], Kind::Choice(&[("roundrobin", "Round robin select Placement IDs"), ("random", "Randomly select Placement IDs"), ("scheme", "Use a scheme (dp_scheme) to select Placement IDs")]),
         "roundrobin", "Policy for selecting placement IDs (fio 3.36+)",
         |o, v| {
             use crate::newest::PlidSelect as P;
             o.newest.plid_select = choice(v, &[("roundrobin", P::RoundRobin), ("random", P::Random), ("scheme", P::Scheme)])?;
             Ok(())
         }).since("3.36"),
    row!("plids", ["fdp_pli"], Kind::Str, "", "Placement ID indices (a,b-c,...) (fio 3.34+)",
         |o, v| { o.newest.plids = Some(crate::newest::parse_plids(req(v)?)?); Ok(()) }).since("3.34"),
    row!("dp_scheme", [], Kind::Str, "", "File of start,end,index lines selecting placement IDs by offset (fio 3.38+)",
         |o, v| { o.newest.dp_scheme = Some(req(v)?.to_string()); Ok(()) }).since("3.38"),
    row!("recover_zbd_write_error", [], Kind::Bool, "0", "Recover write pointers after write errors on zoned devices (fio 3.40+)",
         |o, v| { o.newest.recover_zbd_write_error = parse_bool(req(v)?)?; Ok(()) }).since("3.40"),
    row!("write_zone_remainder", [], Kind::Bool, "0", "Write the remainder of a zone with a short write instead of finishing it (fio 3.42+)",
         |o, v| { o.newest.write_zone_remainder = parse_bool(req(v)?)?; Ok(()) }).since("3.42"),
    row!("zonemode", [], Kind::Choice(&[("none", "no zoning"), ("strided", "strided mode - random I/O is restricted to a single zone"), ("zbd", "zoned block device mode - random I/O selects one of multiple zones randomly")]),
         "none", "Mode for the zonesize, zonerange and zoneskip parameters",
         |o, v| {
             o.zonemode = match req(v)? {
                 "none" => ZoneMode::None,
                 "strided" => ZoneMode::Strided,
                 "zbd" => ZoneMode::Zbd,
                 s => return Err(format!("'{s}' is not a valid value; valid values: none, strided, zbd")),
             };
             Ok(())
         }),
    row!("zonesize", [], Kind::Size { pct: false }, "0", "Amount of data to read per zone",
         |o, v| { o.zonesize = parse_size(req(v)?, o.kb_base)?; Ok(()) }),
    row!("zonerange", [], Kind::Size { pct: false }, "0", "Give size of an IO zone",
         |o, v| { o.zonerange = parse_size(req(v)?, o.kb_base)?; Ok(()) }),
    row!("zoneskip", [], Kind::Size { pct: false }, "0", "Space between IO zones",
         |o, v| {
             let v = req(v)?;
             o.zoneskip = match o.zbd.note_zones(4, v) { Some(_) => 0, None => parse_size(v, o.kb_base)? };
             Ok(())
         }),
    // ---- zonemode=zbd
    row!("zonecapacity", [], Kind::Size { pct: false }, "0", "Capacity per zone",
         |o, v| { o.zbd.zonecapacity = parse_size(req(v)?, o.kb_base)?; Ok(()) }),
    row!("max_open_zones", [], Kind::Int { min: 0, max: 4096 }, "0", "Limit on the number of simultaneously opened sequential write zones with zonemode=zbd",
         |o, v| { o.zbd.max_open_zones = int_in(v, o.kb_base, 0, 4096)? as u32; Ok(()) }),
    row!("job_max_open_zones", [], Kind::Int { min: 0, max: 4096 }, "0", "Limit on the number of simultaneously opened sequential write zones with zonemode=zbd by one thread/process",
         |o, v| { o.zbd.job_max_open_zones = int_in(v, o.kb_base, 0, 4096)? as u32; Ok(()) }),
    row!("ignore_zone_limits", [], Kind::Bool, "0", "Ignore the zone resource limits (max open/active zones) reported by the device",
         |o, v| { o.zbd.ignore_zone_limits = parse_bool(req(v)?)?; Ok(()) }),
    row!("read_beyond_wp", [], Kind::Bool, "0", "Allow reads beyond the zone write pointer",
         |o, v| { o.zbd.read_beyond_wp = parse_bool(req(v)?)?; Ok(()) }),
    row!("zone_reset_threshold", [], Kind::FloatList, "", "Zoned block device reset threshold",
         |o, v| { o.zbd.zone_reset_threshold = unit_float(req(v)?)?; Ok(()) }),
    row!("zone_reset_frequency", [], Kind::FloatList, "", "Zoned block device zone reset frequency in HZ",
         |o, v| { o.zbd.zone_reset_frequency = unit_float(req(v)?)?; Ok(()) }),
    row!(
        "ioengine",
        [],
        Kind::Choice(ENGINE_NAMES_HELP),
        "psync",
        "IO engine to use",
        |o, v| {
            o.ioengine = req(v)?.to_string();
            Ok(())
        }
    ),
    row!(
        "iodepth",
        [],
        Kind::Int { min: 1, max: 65536 },
        "1",
        "Number of IO buffers to keep in flight",
        |o, v| {
            o.iodepth = int_in(v, o.kb_base, 1, 65536)? as u32;
            Ok(())
        }
    ),
    row!("io_submit_mode", [], Kind::Choice(&[("inline", "Submit and complete IO inline"), ("offload", "Offload submit and complete to threads")]),
         "inline", "How IO submissions and completions are done",
         |o, v| { o.submit_offload = choice(v, &[("inline", false), ("offload", true)])?; Ok(()) }),
    row!(
        "iodepth_batch",
        ["iodepth_batch_submit"],
        Kind::Int { min: 0, max: 65536 },
        "1",
        "Number of IO buffers to submit in one go",
        |o, v| {
            o.iodepth_batch = int_in(v, o.kb_base, 0, 65536)? as u32;
            Ok(())
        }
    ),
    row!(
        "iodepth_batch_complete_min",
        ["iodepth_batch_complete"],
        Kind::Int { min: 0, max: 65536 },
        "1",
        "Min number of IO buffers to retrieve in one go",
        |o, v| {
            o.iodepth_batch_complete_min = int_in(v, o.kb_base, 0, 65536)? as u32;
            Ok(())
        }
    ),
    row!(
        "iodepth_batch_complete_max",
        [],
        Kind::Int { min: 0, max: 65536 },
        "",
        "Max number of IO buffers to retrieve in one go",
        |o, v| {
            o.iodepth_batch_complete_max = Some(int_in(v, o.kb_base, 0, 65536)? as u32);
            Ok(())
        }
    ),
    row!(
        "iodepth_low",
        [],
        Kind::Int { min: 0, max: 65536 },
        "",
        "Low water mark for queuing depth",
        |o, v| {
            o.iodepth_low = Some(int_in(v, o.kb_base, 0, 65536)? as u32);
            Ok(())
        }
    ),
];

/// A float option of range [0, 1] (zone_reset_threshold, zone_reset_frequency), with fio's
/// range message.
fn unit_float(s: &str) -> Result<f64, String> {
    let v = crate::value::parse_float_list(s, 1)?.0[0];
    if v > 1.0 {
        return Err(format!("value out of range: {v:.6} (range max: 1.000000)"));
    }
    if v < 0.0 {
        return Err(format!("value out of range: {v:.6} (range min: 0.000000)"));
    }
    Ok(v)
}
