//! `zonemode=zbd`: the zones of each file, decided once per run and shared by every thread
//! that uses the file (fio shares one zone table per file name), with fio 3.33's checks and
//! messages.
//!
//! A regular file (or a block device that is not zoned) is cut into `zonesize` zones, all
//! empty when the run starts, as fio emulates them; a zoned block device's zones, write
//! pointers and open-zone limit come from the kernel (`BLKREPORTZONE`, sysfs).

use super::{err, PlanError, ThreadPlan};
use flexio_engine::os;
use flexio_job::options::{JobOptions, ZoneMode};
use flexio_job::JobDef;
use flexio_workload::zbd::{Cond, JobParams, Model, Range, Zone, ZoneSet};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The zones of one file as a thread sees them.
#[derive(Clone, Debug)]
pub struct FileZones {
    pub set: Arc<Mutex<ZoneSet>>,
    /// The thread's part of the file, in whole zones.
    pub range: Range,
    /// A real zoned device: its resets are done with BLKRESETZONE.
    pub device: bool,
}

/// A `zonemode=zbd` thread's zones: its parameters and one entry per file (same order as
/// `ThreadPlan::files`).
#[derive(Clone, Debug)]
pub struct ZbdPlan {
    pub params: JobParams,
    pub files: Vec<FileZones>,
    /// fio's setup messages (`<file>: rounded up offset from A to B`), printed after
    /// "Starting ..." as fio does.
    pub notes: Vec<String>,
}

/// The zone tables of a run, by file.
#[derive(Default)]
pub struct Registry {
    sets: HashMap<PathBuf, Arc<Mutex<ZoneSet>>>,
}

/// The zones of a device the kernel says are zoned: its model, zone size and limit.
fn device_zones(path: &Path, name: &str) -> Result<Option<(Model, ZoneSet)>, String> {
    let zoned = std::fs::read_to_string(format!("/sys/class/block/{name}/queue/zoned"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "none".into());
    let model = match zoned.as_str() {
        "host-managed" => Model::HostManaged,
        "host-aware" => Model::HostAware,
        _ => return Ok(None),
    };
    use os::fs::{Mode, OFlags};
    let fd = os::fs::open(path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let size = os::fs::seek(&fd, os::fs::SeekFrom::End(0))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut zones = Vec::new();
    let mut offset = 0u64;
    let mut zone_size = 0u64;
    while offset < size {
        let got = flexio_engine::platform::report_zones(
            std::os::fd::AsFd::as_fd(&fd),
            offset,
            8192,
        )
        .map_err(|e| {
            format!(
                "fio: report zones (offset {offset}) failed for {} ({}): the kernel does not report the zones of this {zoned} device",
                path.display(),
                e.raw_os_error().unwrap_or(libc::EIO)
            )
        })?;
        let Some(last) = got.last() else {
            return Err(format!(
                "{}: report zones from sector {} is empty.",
                path.display(),
                offset >> 9
            ));
        };
        if zone_size == 0 {
            zone_size = got[0].len;
        }
        offset = last.start + last.len;
        for z in got {
            if let Some(prev) = zones.last().map(|p: &Zone| p.start) {
                if z.start != prev + zone_size {
                    return Err(format!("{}: invalid zone data", path.display()));
                }
            }
            let cond = match z.cond {
                0 => Cond::NotWp,
                1 => Cond::Empty,
                2 => Cond::ImpOpen,
                3 => Cond::ExpOpen,
                4 => Cond::Closed,
                0xd => Cond::ReadOnly,
                0xe => Cond::Full,
                _ => Cond::Offline,
            };
            zones.push(Zone::new(z.start, z.capacity, z.wp, z.kind == 2, cond));
        }
    }
    if zones.is_empty() {
        return Err(format!("{}: the device reports no zones", path.display()));
    }
    Ok(Some((model, ZoneSet::reported(model, zone_size, zones))))
}

/// The device limit on open zones (sysfs; 0 = none).
fn device_max_open(name: &str) -> u32 {
    std::fs::read_to_string(format!("/sys/class/block/{name}/queue/max_open_zones"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// The job's parameters for its zones.
fn params(o: &JobOptions) -> JobParams {
    let z = &o.zbd;
    JobParams {
        verify: o.verify != flexio_job::options::verify_code::NONE,
        read_beyond_wp: z.read_beyond_wp,
        reset_threshold: z.zone_reset_threshold,
        reset_frequency: z.zone_reset_frequency,
        job_max_open: z.job_max_open_zones,
        min_bs: [0, 1, 2].map(|d| o.min_bs_dir(d)),
        random: o.rw.is_random(),
        mixed: o.rw.reads() && o.rw.writes(),
        writes: o.rw.writes(),
        zone_skip: o.zoneskip,
    }
}

/// What flexio does not do with zones (each named), and fio's checks that need no file.
fn check_options(def: &JobDef) -> Result<(), PlanError> {
    let o = &def.opts;
    if o.submit_offload {
        return Err(err(
            def,
            "io_submit_mode=offload with zonemode=zbd is not supported by flexio (fio 3.33 aborts on it)",
        ));
    }
    let verify = o.verify != flexio_job::options::verify_code::NONE;
    if verify && o.rw.writes() && o.zbd.zone_reset_frequency > 0.0 {
        return Err(err(
            def,
            "zone_reset_frequency with verify and zonemode=zbd is not supported by flexio \
             (its resets during the writes lose data the read-back expects; fio 3.33 aborts on it)",
        ));
    }
    if verify && o.experimental_verify {
        return Err(err(
            def,
            "experimental_verify with zonemode=zbd is not supported by flexio \
             (fio 3.33 reads nothing back; newer fio refuses it)",
        ));
    }
    if o.rw.trims()
        && (o.min_bs_dir(2) != o.max_bs_dir(2)
            || o.bssplit.as_ref().is_some_and(|s| !s[2].is_empty()))
    {
        return Err(err(
            def,
            "bsrange and bssplit are not allowed for trim with zonemode=zbd",
        ));
    }
    if o.zbd.job_max_open_zones > 0 && o.zbd.max_open_zones == 0 {
        return Err(err(
            def,
            "'job_max_open_zones' cannot be used without a global open zones limit",
        ));
    }
    Ok(())
}

/// Give a thread its zones: check the job against fio's rules, round its regions to whole
/// zones (fio's messages), and share each file's zone table with the other threads.
pub fn apply(def: &JobDef, t: &mut ThreadPlan, reg: &mut Registry) -> Result<(), PlanError> {
    let o = &def.opts;
    if o.zonemode != ZoneMode::Zbd {
        return Ok(());
    }
    check_options(def)?;
    let p = params(o);
    let mut notes = Vec::new();
    let mut files = Vec::new();
    let mut all_whole = true;
    for (i, f) in t.files.iter_mut().enumerate() {
        let fname = f.path.display().to_string();
        if f.block.as_ref().is_some_and(|b| b.char_dev) || t.engine.caps.pipe || t.engine.caps.noio
        {
            return Err(err(
                def,
                format!(
                    "zonemode=zbd needs a regular file or a block device ('{fname}' is neither)"
                ),
            ));
        }
        let set = match reg.sets.get(&f.path) {
            Some(s) => s.clone(),
            None => {
                let s = new_set(def, f)?;
                let s = Arc::new(Mutex::new(s));
                reg.sets.insert(f.path.clone(), s.clone());
                s
            }
        };
        let (range, device) = {
            let mut s = set.lock().unwrap_or_else(|e| e.into_inner());
            if o.zonesize != 0 && o.zonesize != s.zone_size {
                return Err(err(
                    def,
                    format!(
                        "{fname}: job parameter zonesize {} does not match disk zone size {}.",
                        o.zonesize, s.zone_size
                    ),
                ));
            }
            if o.zoneskip % s.zone_size != 0 {
                return Err(err(
                    def,
                    format!(
                        "{fname}: zoneskip {} is not a multiple of the device zone size {}.",
                        o.zoneskip, s.zone_size
                    ),
                ));
            }
            if o.rw.trims() && o.bs[2] != s.zone_size {
                return Err(err(
                    def,
                    format!(
                        "{fname}: trim block size {} is not the zone size {}",
                        o.bs[2], s.zone_size
                    ),
                ));
            }
            if p.verify {
                if let Some(bad) = o.bs.iter().find(|b| s.zone_size % **b != 0) {
                    return Err(err(
                        def,
                        format!(
                            "{fname}: block size {bad} is not a divisor of the zone size {}",
                            s.zone_size
                        ),
                    ));
                }
            }
            // zbd_set_max_open_zones: the first job decides the limit of a file without
            // one of its own; a device's limit bounds it unless ignore_zone_limits.
            if !s.limit_set() {
                let limit = match (s.model, o.zbd.ignore_zone_limits) {
                    (Model::HostManaged, false) => {
                        let dev = f.block.as_ref().map_or(0, |b| device_max_open(&b.name));
                        match (dev, o.zbd.max_open_zones) {
                            (0, u) => u,
                            (d, 0) => d,
                            (d, u) if u <= d => u,
                            (d, u) => {
                                return Err(err(
                                    def,
                                    format!(
                                        "Specified --max_open_zones ({u}) is larger than max ({d})"
                                    ),
                                ))
                            }
                        }
                    }
                    _ => o.zbd.max_open_zones,
                };
                s.set_max_open(limit);
            } else if o.zbd.max_open_zones > 0 && o.zbd.max_open_zones != s.max_open {
                return Err(err(def, "Different 'max_open_zones' values"));
            }
            if o.zbd.job_max_open_zones > 0 && s.max_open == 0 {
                return Err(err(
                    def,
                    "'job_max_open_zones' cannot be used without a global open zones limit",
                ));
            }
            let seq_read = o.rw == flexio_job::options::RwKind::Read;
            let mut these = Vec::new();
            let r = s
                .fit_range(f.region.start, f.region.len, seq_read, &mut these)
                .map_err(|e| {
                    let mut m: Vec<String> =
                        these.iter().map(|n| format!("{fname}: {n}")).collect();
                    m.push(format!("{fname}: {e}"));
                    err(def, m.join("; "))
                })?;
            notes.extend(these.into_iter().map(|n| format!("{fname}: {n}")));
            let whole =
                r.offset == s.zone(0).start && r.offset + r.io_size == s.zone(s.nr_zones()).start;
            all_whole &= whole;
            (r, s.model != Model::Emulated)
        };
        f.region = flexio_workload::Region {
            start: range.offset,
            len: range.io_size,
        };
        f.need = f.need.max(range.offset + range.io_size);
        if let Some(r) = t.spec.files.get_mut(i) {
            *r = f.region;
        }
        files.push(FileZones { set, range, device });
    }
    // fio: a job over several whole files ends the last one at its end while the others
    // start over (tests/zones.rs); smaller regions start over together.
    t.spec.zbd_last_file_ends = t.spec.zone_eof_pass && files.len() > 1 && all_whole;
    t.zbd = Some(ZbdPlan {
        params: p,
        files,
        notes,
    });
    Ok(())
}

/// A fresh zone table for a file: its device's zones, or fio's emulation on the size the
/// file has now (before any layout).
fn new_set(def: &JobDef, f: &super::FilePlan) -> Result<ZoneSet, PlanError> {
    let o = &def.opts;
    let fname = f.path.display().to_string();
    if let Some(b) = f.block.as_ref() {
        if let Some((_, s)) = device_zones(&f.path, &b.name).map_err(|e| err(def, e))? {
            return Ok(s);
        }
    }
    let size = match f.block.as_ref() {
        Some(b) => b.size,
        None => std::fs::metadata(&f.path).map(|m| m.len()).unwrap_or(0),
    };
    ZoneSet::emulated(size, o.zonesize, o.zbd.zonecapacity)
        .map_err(|e| err(def, format!("{fname}: {e}")))
}

#[cfg(test)]
mod tests {
    fn plan(dir: &std::path::Path, args: &[&str]) -> Result<Vec<crate::plan::ThreadPlan>, String> {
        let f = dir.join("f");
        if !f.exists() {
            std::fs::File::create(&f)
                .unwrap()
                .set_len(16 << 20)
                .unwrap();
        }
        let args: Vec<String> = args
            .iter()
            .map(|a| a.replace("@F@", &f.display().to_string()))
            .collect();
        crate::session::prepare(&args, &|p| std::fs::read(p)).map(|p| p.plans)
    }

    #[test]
    fn jobs_on_one_file_share_its_zones_and_its_limit() {
        let d = tempfile::tempdir().unwrap();
        let common = [
            "--filename=@F@",
            "--zonemode=zbd",
            "--zonesize=1M",
            "--rw=randwrite",
        ];
        let mut a = vec!["--name=a", "--max_open_zones=2"];
        a.extend_from_slice(&common);
        a.extend_from_slice(&["--name=b"]);
        a.extend_from_slice(&common);
        let p = plan(d.path(), &a).unwrap();
        let (za, zb) = (p[0].zbd.as_ref().unwrap(), p[1].zbd.as_ref().unwrap());
        assert!(std::sync::Arc::ptr_eq(&za.files[0].set, &zb.files[0].set));
        assert_eq!(za.files[0].set.lock().unwrap().max_open, 2);
        a.push("--max_open_zones=3");
        let e = plan(d.path(), &a).unwrap_err();
        assert!(e.contains("Different 'max_open_zones' values"), "{e}");
    }

    #[test]
    fn regions_are_whole_zones_and_the_notes_name_the_file() {
        let d = tempfile::tempdir().unwrap();
        let p = plan(
            d.path(),
            &[
                "--name=a",
                "--filename=@F@",
                "--zonemode=zbd",
                "--zonesize=1M",
                "--rw=write",
                "--offset=100k",
            ],
        )
        .unwrap();
        assert_eq!(p[0].files[0].region.start, 1 << 20);
        assert_eq!(p[0].spec.files[0], p[0].files[0].region);
        let z = p[0].zbd.as_ref().unwrap();
        assert!(
            z.notes[0].ends_with(": rounded up offset from 102400 to 1048576"),
            "{:?}",
            z.notes
        );
        // No strided zones for zbd, whatever zonesize says.
        assert!(p[0].spec.strided.is_none());
    }

    #[test]
    fn what_flexio_does_not_do_with_zones_is_named() {
        let d = tempfile::tempdir().unwrap();
        for (extra, what) in [
            (
                &["--io_submit_mode=offload"][..],
                "io_submit_mode=offload with zonemode=zbd",
            ),
            (
                &["--verify=crc32c", "--zone_reset_frequency=0.5"][..],
                "zone_reset_frequency with verify and zonemode=zbd",
            ),
            (
                &["--verify=crc32c", "--experimental_verify=1"][..],
                "experimental_verify with zonemode=zbd",
            ),
        ] {
            let mut args = vec![
                "--name=a",
                "--filename=@F@",
                "--zonemode=zbd",
                "--zonesize=1M",
                "--rw=write",
            ];
            args.extend_from_slice(extra);
            let e = plan(d.path(), &args).unwrap_err();
            assert!(
                e.contains(what) && e.contains("not supported by flexio"),
                "{e}"
            );
        }
        // What runs now: verify, trims and writes in one job, zoneskip.
        for extra in [
            &["--verify=crc32c"][..],
            &["--rw=trimwrite", "--bs=1M"][..],
            &["--rw=randtrimwrite", "--bs=4k,4k,1M"][..],
            &["--zoneskip=2M"][..],
        ] {
            let mut args = vec![
                "--name=a",
                "--filename=@F@",
                "--zonemode=zbd",
                "--zonesize=1M",
                "--rw=write",
            ];
            args.extend_from_slice(extra);
            let p = plan(d.path(), &args).unwrap_or_else(|e| panic!("{extra:?}: {e}"));
            assert_eq!(
                p[0].zbd.as_ref().unwrap().params.zone_skip,
                if extra[0] == "--zoneskip=2M" {
                    2 << 20
                } else {
                    0
                }
            );
        }
    }
}
