//! Where a result came from, recorded in it (the JSON's `flexio.provenance`): the tool, the
//! host, each target's file system and device, and the cgroup limits the run was under.
//! Everything is read from /proc and /sys at the start of the run; what cannot be read is
//! left out, never guessed. A device's serial number is recorded only as a hash.

use crate::diskstats;
use flexio_stats::report::Fact;
use std::path::{Path, PathBuf};

/// An object being built: members are added only when their value was read.
#[derive(Default)]
struct Facts(Vec<(String, Fact)>);

impl Facts {
    fn str(mut self, k: &str, v: Option<String>) -> Self {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            self.0.push((k.to_string(), Fact::Str(v)));
        }
        self
    }
    fn int(mut self, k: &str, v: Option<i64>) -> Self {
        if let Some(v) = v {
            self.0.push((k.to_string(), Fact::Int(v)));
        }
        self
    }
    fn bool(mut self, k: &str, v: Option<bool>) -> Self {
        if let Some(v) = v {
            self.0.push((k.to_string(), Fact::Bool(v)));
        }
        self
    }
    fn obj(mut self, k: &str, v: Facts) -> Self {
        if !v.0.is_empty() {
            self.0.push((k.to_string(), Fact::Obj(v.0)));
        }
        self
    }
}

/// A file's text, trimmed; `None` when it cannot be read or is empty.
fn read(p: impl AsRef<Path>) -> Option<String> {
    let s = std::fs::read_to_string(p).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

fn read_int(p: impl AsRef<Path>) -> Option<i64> {
    read(p)?.parse().ok()
}

/// The provenance of a run on `targets` (its files and devices; none for engines without
/// a disk), under `compat` ("3.33" or "latest"). Each target is looked at here.
pub fn collect(targets: &[PathBuf], compat: &str) -> Vec<(String, Fact)> {
    let keyed: Vec<(&Path, Option<DeviceKey>)> = targets
        .iter()
        .map(|t| (t.as_path(), device_key(t)))
        .collect();
    collect_keyed(&keyed, compat)
}

/// [`collect`] with each target's device key known (from planning's look at it:
/// [`crate::plan::device_keys`]).
///
/// Targets on one device (one file system, or one block device) are one entry: the first
/// one's path, with `files`, how many of the run's targets it stands for, when that is more
/// than one. A job of 100,000 files has one entry, read once, not 100,000.
pub fn collect_keyed(targets: &[(&Path, Option<DeviceKey>)], compat: &str) -> Vec<(String, Fact)> {
    let mut out = Vec::new();
    out.push(("tool".to_string(), Fact::Obj(tool(compat).0)));
    out.push(("host".to_string(), Fact::Obj(host().0)));
    let list: Vec<Fact> = crate::plan::one_per_device(targets)
        .into_iter()
        .map(|(t, _, n)| {
            let mut entry = vec![("path".to_string(), Fact::Str(t.display().to_string()))];
            if n > 1 {
                entry.push(("files".to_string(), Fact::Int(n as i64)));
            }
            entry.extend(target(t).0);
            Fact::Obj(entry)
        })
        .collect();
    if !list.is_empty() {
        out.push(("targets".to_string(), Fact::List(list)));
    }
    let cg = cgroup();
    if !cg.0.is_empty() {
        out.push(("cgroup".to_string(), Fact::Obj(cg.0)));
    }
    out
}

/// Options in the order given, each once (a later value of the same option replaces the
/// earlier one, where it stood last); a bare flag has the value "".
fn given(echo: &[(String, String)]) -> Vec<(String, Fact)> {
    let mut out: Vec<(String, Fact)> = Vec::new();
    for (k, v) in echo {
        out.retain(|(x, _)| x != k);
        out.push((k.clone(), Fact::Str(v.clone())));
    }
    out
}

/// The resolved job set (the JSON's `flexio.provenance.job`): the options given in global
/// scope and in each job, each job's random seed (`randseed`, with `seed_drawn` where it was
/// drawn from the system's entropy because the job asked for unrepeatable numbers), and the
/// default of every other option the jobs' fio knows (its core options and those of the
/// engines the jobs use), so that each job's every option can be read off. `flexio rerun`
/// rebuilds the job from it.
pub fn job(set: &flexio_job::JobSet) -> Fact {
    let drawn = &set.seeds_drawn;
    use flexio_engine::registry::CATALOG;
    let canonical = |k: &str| CATALOG.lookup(k).map(|d| d.name).unwrap_or("");
    let mut named: Vec<&str> = set.global_echo.iter().map(|(k, _)| canonical(k)).collect();
    let mut engines: Vec<&str> = Vec::new();
    let mut jobs = Vec::new();
    for (i, def) in set.jobs.iter().enumerate() {
        named.extend(def.echo.iter().map(|(k, _)| canonical(k)));
        if !engines.contains(&def.opts.ioengine.as_str()) {
            engines.push(def.opts.ioengine.as_str());
        }
        let mut j = vec![
            ("name".to_string(), Fact::Str(def.opts.name.clone())),
            (
                "options".to_string(),
                Fact::Obj(given(
                    &def.echo
                        .iter()
                        .filter(|(k, _)| k != "name")
                        .cloned()
                        .collect::<Vec<_>>(),
                )),
            ),
        ];
        if let Some(seed) = def.opts.randseed {
            let v = i64::try_from(seed).map_or_else(|_| Fact::Str(seed.to_string()), Fact::Int);
            j.push(("randseed".to_string(), v));
        }
        j.push(("seed_drawn".to_string(), Fact::Bool(drawn.contains(&i))));
        jobs.push(Fact::Obj(j));
    }
    let mut defaults: Vec<(String, Fact)> = Vec::new();
    let rows = CATALOG.core_rows().chain(
        engines
            .iter()
            .flat_map(|e| CATALOG.engine_options_at(e, set.compat)),
    );
    for row in rows {
        if !row.known_at(set.compat)
            || named.contains(&row.name)
            || defaults.iter().any(|(k, _)| k == row.name)
        {
            continue;
        }
        defaults.push((row.name.to_string(), Fact::Str(row.default.to_string())));
    }
    Fact::Obj(vec![
        ("global".to_string(), Fact::Obj(given(&set.global_echo))),
        ("jobs".to_string(), Fact::List(jobs)),
        ("defaults".to_string(), Fact::Obj(defaults)),
    ])
}

fn tool(compat: &str) -> Facts {
    Facts::default()
        .str("name", Some("flexio".into()))
        .str("version", Some(crate::VERSION.into()))
        .str(
            "build",
            Some(
                if cfg!(debug_assertions) {
                    "debug"
                } else {
                    "release"
                }
                .into(),
            ),
        )
        .str(
            "target",
            Some(format!(
                "{}-{}",
                std::env::consts::ARCH,
                std::env::consts::OS
            )),
        )
        .str("compat", Some(compat.into()))
        .str("commit", option_env!("FLEXIO_GIT_COMMIT").map(String::from))
        .str("features", Some(features().join(",")))
}

/// The cargo features of the run engine this build has.
fn features() -> Vec<&'static str> {
    let mut f = Vec::new();
    if cfg!(feature = "io_uring") {
        f.push("io_uring");
    }
    if cfg!(feature = "libaio") {
        f.push("libaio");
    }
    if cfg!(feature = "shared_loop") {
        f.push("shared_loop");
    }
    f
}

/// `NAME="value"` from os-release text.
fn os_release_value(text: &str, name: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .map(|v| v.trim_matches('"').to_string())
}

/// The number of CPUs in a list such as `0-3,8,10-11`.
fn cpu_count(list: &str) -> Option<i64> {
    let mut n = 0;
    for part in list.trim().split(',') {
        match part.split_once('-') {
            Some((a, b)) => n += b.parse::<i64>().ok()? - a.parse::<i64>().ok()? + 1,
            None => {
                part.parse::<i64>().ok()?;
                n += 1
            }
        }
    }
    Some(n)
}

fn host() -> Facts {
    let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.trim().to_string())
        })
    };
    let flags = field("flags").unwrap_or_default();
    let meminfo = read("/proc/meminfo").unwrap_or_default();
    let mem_kib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
    let os = read("/etc/os-release").unwrap_or_default();
    Facts::default()
        .str("hostname", read("/proc/sys/kernel/hostname"))
        .str("kernel", read("/proc/sys/kernel/osrelease"))
        .str("kernel_version", read("/proc/sys/kernel/version"))
        .str("distribution", os_release_value(&os, "PRETTY_NAME"))
        .str("cpu_model", field("model name"))
        .int(
            "cpus_online",
            read("/sys/devices/system/cpu/online").and_then(|s| cpu_count(&s)),
        )
        .str(
            "cpufreq_governor",
            read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        )
        .int("memory_kib", mem_kib)
        .bool(
            "hypervisor",
            (!flags.is_empty()).then(|| flags.split_whitespace().any(|f| f == "hypervisor")),
        )
        .str("system_vendor", read("/sys/class/dmi/id/sys_vendor"))
        .str("system_product", read("/sys/class/dmi/id/product_name"))
}

/// The mount holding `path` (by its device numbers): (mount point, type, options, source).
fn mount_of(path: &Path) -> Option<(String, String, String, String)> {
    let (maj, min) = diskstats::numbers_of(path, false)?;
    parse_mountinfo(&read("/proc/self/mountinfo")?, &format!("{maj}:{min}"))
}

/// The last mount of device `id` (`MAJ:MIN`) in mountinfo text.
fn parse_mountinfo(info: &str, id: &str) -> Option<(String, String, String, String)> {
    info.lines().rev().find_map(|l| {
        let (pre, post) = l.split_once(" - ")?;
        let f: Vec<&str> = pre.split(' ').collect();
        let g: Vec<&str> = post.split(' ').collect();
        (f.get(2) == Some(&id)).then(|| {
            (
                f.get(4).unwrap_or(&"").replace("\\040", " "),
                g.first().unwrap_or(&"").to_string(),
                f.get(5).unwrap_or(&"").to_string(),
                g.get(1).unwrap_or(&"").to_string(),
            )
        })
    })
}

use crate::plan::{device_key, DeviceKey};

/// A target's file system and disk (its path is added by the caller).
fn target(path: &Path) -> Facts {
    use std::os::unix::fs::FileTypeExt;
    let block = std::fs::metadata(path)
        .map(|m| m.file_type().is_block_device())
        .unwrap_or(false);
    let mut t = Facts::default();
    if !block {
        if let Some((point, fstype, opts, source)) = mount_of(path) {
            t = t.obj(
                "filesystem",
                Facts::default()
                    .str("type", Some(fstype))
                    .str("mount_point", Some(point))
                    .str("mount_options", Some(opts))
                    .str("source", Some(source)),
            );
        }
    }
    if let Some(dir) = diskstats::disk_dir(path) {
        t = t.obj("device", device(&dir));
    }
    t
}

/// A disk's facts from its sysfs directory.
fn device(dir: &Path) -> Facts {
    use sha2::{Digest, Sha256};
    let q = dir.join("queue");
    let d = dir.join("device");
    let serial = read(d.join("serial")).or_else(|| read(dir.join("serial")));
    let serial_hash = serial.map(|s| {
        let h = Sha256::digest(s.as_bytes());
        h.iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    });
    let scheduler =
        read(q.join("scheduler")).and_then(|s| diskstats::active_scheduler(&s).map(str::to_string));
    Facts::default()
        .str(
            "name",
            dir.file_name().map(|n| n.to_string_lossy().into_owned()),
        )
        .str("model", read(d.join("model")))
        .str(
            "firmware",
            read(d.join("firmware_rev")).or_else(|| read(d.join("rev"))),
        )
        .str("serial_hash", serial_hash)
        .int("size_bytes", read_int(dir.join("size")).map(|s| s * 512))
        .bool("rotational", read_int(q.join("rotational")).map(|v| v != 0))
        .int("logical_block_size", read_int(q.join("logical_block_size")))
        .int(
            "physical_block_size",
            read_int(q.join("physical_block_size")),
        )
        .str("scheduler", scheduler)
        .int("read_ahead_kb", read_int(q.join("read_ahead_kb")))
        .int("nr_requests", read_int(q.join("nr_requests")))
        .int("max_sectors_kb", read_int(q.join("max_sectors_kb")))
        .int("queue_depth", read_int(d.join("queue_depth")))
        .str("write_cache", read(q.join("write_cache")))
        .bool(
            "discard",
            read_int(q.join("discard_max_bytes")).map(|v| v > 0),
        )
        .str("loop_backing_file", read(dir.join("loop/backing_file")))
        .bool(
            "loop_direct_io",
            read_int(dir.join("loop/dio")).map(|v| v != 0),
        )
}

/// The I/O and CPU limits of this process's cgroups (v2 `io.max`, `cpu.max`; v1 blkio
/// throttles and CFS quota), as their files say.
fn cgroup() -> Facts {
    let Some(text) = read("/proc/self/cgroup") else {
        return Facts::default();
    };
    let mut f = Facts::default();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(ctl), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let rel = path.trim_start_matches('/');
        if ctl.is_empty() {
            let base = Path::new("/sys/fs/cgroup").join(rel);
            f = f
                .str("v2_path", Some(path.to_string()))
                .str("io.max", read(base.join("io.max")))
                .str("cpu.max", read(base.join("cpu.max")));
        }
        for c in ctl.split(',') {
            let base = Path::new("/sys/fs/cgroup").join(c).join(rel);
            match c {
                "blkio" => {
                    f = f.str("blkio_path", Some(path.to_string()));
                    for k in [
                        "blkio.throttle.read_iops_device",
                        "blkio.throttle.write_iops_device",
                        "blkio.throttle.read_bps_device",
                        "blkio.throttle.write_bps_device",
                    ] {
                        f = f.str(k, read(base.join(k)));
                    }
                }
                "cpu" => {
                    let quota = read_int(base.join("cpu.cfs_quota_us")).filter(|q| *q > 0);
                    if quota.is_some() {
                        f = f.int("cpu.cfs_quota_us", quota).int(
                            "cpu.cfs_period_us",
                            read_int(base.join("cpu.cfs_period_us")),
                        );
                    }
                }
                _ => {}
            }
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_os_release_and_mountinfo() {
        assert_eq!(cpu_count("0-3"), Some(4));
        assert_eq!(cpu_count("0-1,4,6-7\n"), Some(5));
        assert_eq!(cpu_count("x"), None);
        let os = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
        assert_eq!(
            os_release_value(os, "PRETTY_NAME").as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        let mi = "22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
                  40 22 7:0 / /mnt/my\\040disk rw,noatime - xfs /dev/loop0 rw,attr2\n\
                  41 22 7:0 / /mnt/again ro - xfs /dev/loop0 ro\n";
        assert_eq!(
            parse_mountinfo(mi, "7:0"),
            Some((
                "/mnt/again".into(),
                "xfs".into(),
                "ro".into(),
                "/dev/loop0".into()
            ))
        );
        assert_eq!(parse_mountinfo(mi, "253:0").unwrap().1, "ext4");
        let first = parse_mountinfo(&mi.lines().take(2).collect::<Vec<_>>().join("\n"), "7:0");
        assert_eq!(first.unwrap().0, "/mnt/my disk");
        assert_eq!(parse_mountinfo(mi, "8:0"), None);
    }

    #[test]
    fn facts_leave_out_what_was_not_read() {
        let f = Facts::default()
            .str("a", None)
            .str("b", Some(String::new()))
            .int("c", None)
            .obj("d", Facts::default())
            .str("e", Some("x".into()));
        assert_eq!(f.0, vec![("e".to_string(), Fact::Str("x".into()))]);
        assert!(read("/nonexistent/flexio").is_none());
    }
}
