//! Provenance in every JSON result (`flexio.provenance`): the host and each target's file
//! system and device, checked against /proc and /sys on a loop device and on tmpfs; what
//! cannot be read is left out, and fio's keys are unchanged.

use crate::common;
use common::fstargets::{FsKind, FsTarget};
use common::loopdev::LoopDev;
use serde_json::Value;
use std::path::Path;

fn sys(p: &str) -> String {
    std::fs::read_to_string(p).unwrap().trim().to_string()
}

fn provenance(args: &[&str], dir: &Path) -> Value {
    let mut a = vec!["--output-format=json", "--name=p", "--rw=read", "--size=1m"];
    a.extend(args);
    let r = common::flexio(&a, dir);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(v["jobs"][0]["read"]["io_bytes"].as_u64().unwrap() > 0);
    v["flexio"]["provenance"].clone()
}

fn check_host(p: &Value) {
    let h = &p["host"];
    assert_eq!(h["kernel"], sys("/proc/sys/kernel/osrelease"), "{h}");
    let mem = sys("/proc/meminfo");
    let kib: i64 = mem
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(h["memory_kib"], kib);
    assert!(h["cpus_online"].as_i64().unwrap() >= 1);
    assert_eq!(p["tool"]["name"], "flexio");
    assert_eq!(p["tool"]["compat"], "latest");
}

#[test]
fn a_loop_devices_facts_are_its_sysfs_values() {
    let Some(dev) = LoopDev::new(16 << 20) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let f = format!("--filename={}", dev.path());
    let p = provenance(&[&f], d.path());
    check_host(&p);
    let t = &p["targets"][0];
    assert_eq!(t["path"], dev.path());
    // A block device is its own target: no file system facts.
    assert!(t.get("filesystem").is_none(), "{t}");
    let dv = &t["device"];
    let q = |k: &str| sys(&format!("/sys/block/{}/queue/{k}", dev.name()));
    assert_eq!(dv["name"], dev.name());
    assert_eq!(dv["read_ahead_kb"].to_string(), q("read_ahead_kb"));
    assert_eq!(dv["nr_requests"].to_string(), q("nr_requests"));
    assert_eq!(
        dv["logical_block_size"].to_string(),
        q("logical_block_size")
    );
    assert_eq!(
        dv["physical_block_size"].to_string(),
        q("physical_block_size")
    );
    assert_eq!(dv["rotational"], q("rotational") != "0");
    let size: i64 = sys(&format!("/sys/block/{}/size", dev.name()))
        .parse()
        .unwrap();
    assert_eq!(dv["size_bytes"], size * 512);
    let sched = q("scheduler");
    let active = sched
        .split_whitespace()
        .find(|w| w.starts_with('['))
        .unwrap();
    assert_eq!(
        dv["scheduler"],
        active.trim_matches(|c| c == '[' || c == ']')
    );
    assert_eq!(
        dv["loop_backing_file"],
        sys(&format!("/sys/block/{}/loop/backing_file", dev.name()))
    );
    // A loop device has no serial and no model: left out, not guessed.
    assert!(
        dv.get("model").is_none() && dv.get("serial_hash").is_none(),
        "{dv}"
    );
    // Under --compat=3.33 the facts are there too, and say so.
    let p = provenance(&["--compat=3.33", &f], d.path());
    assert_eq!(p["tool"]["compat"], "3.33");
}

#[test]
fn a_tmpfs_target_has_its_mount_and_no_device() {
    let Some(fs) = FsTarget::new(FsKind::Tmpfs, 16 << 20) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let file = fs.path().join("p.dat");
    let f = format!("--filename={}", file.display());
    let p = provenance(&[&f], d.path());
    check_host(&p);
    let t = &p["targets"][0];
    let m = &t["filesystem"];
    assert_eq!(m["type"], "tmpfs", "{t}");
    assert_eq!(m["mount_point"], fs.path().to_str().unwrap());
    // The options are the mount's, as /proc/self/mountinfo lists them.
    let info = sys("/proc/self/mountinfo");
    let line = info
        .lines()
        .rev()
        .find(|l| l.split(' ').nth(4) == Some(fs.path().to_str().unwrap()))
        .unwrap();
    assert_eq!(m["mount_options"], line.split(' ').nth(5).unwrap());
    assert!(t.get("device").is_none(), "tmpfs has no disk: {t}");
    // An engine without a disk has no targets.
    let p = provenance(&["--ioengine=null"], d.path());
    assert!(p.get("targets").is_none(), "{p}");
}
