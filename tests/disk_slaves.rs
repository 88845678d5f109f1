//! Disk stats of a device with slaves, on a real device-mapper target: a linear map over a
//! loop device the test creates (and removes). flexio's block must have fio 3.33's shape:
//! the dm device indented two more with the slave aggregate, then the loop device. Where
//! the machine lacks loop devices, dmsetup or the device-mapper driver, the test prints
//! `SKIP: <reason>` and passes.

use crate::common;
use common::loopdev::LoopDev;
use common::*;
use std::path::PathBuf;
use std::process::Command;

/// A linear device-mapper target over a loop device; removed on drop.
struct DmLinear {
    name: String,
    /// `/dev/dm-N`.
    dev: PathBuf,
    _lo: LoopDev,
}

impl DmLinear {
    fn new(size: u64) -> Option<DmLinear> {
        let lo = LoopDev::new(size)?;
        let name = format!("flexio-test-{}", std::process::id());
        let table = format!("0 {} linear {} 0", size / 512, lo.path());
        let out = match Command::new("dmsetup")
            .args(["create", &name, "--table", &table])
            .output()
        {
            Ok(o) => o,
            Err(e) => {
                eprintln!("SKIP: dmsetup is not usable: {e}");
                return None;
            }
        };
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            eprintln!(
                "SKIP: device-mapper unavailable (dmsetup create failed: {})",
                err.lines().next().unwrap_or("").trim()
            );
            // A half-made map (none is expected) must not outlive the test.
            let _ = Command::new("dmsetup").args(["remove", &name]).output();
            return None;
        }
        let dev = std::fs::canonicalize(format!("/dev/mapper/{name}")).ok();
        let dm = DmLinear {
            name,
            dev: dev.unwrap_or_default(),
            _lo: lo,
        };
        if !dm.dev.to_string_lossy().starts_with("/dev/dm-") {
            eprintln!("SKIP: /dev/mapper/{} is not a /dev/dm-N node", dm.name);
            return None;
        }
        Some(dm)
    }

    fn path(&self) -> &str {
        self.dev.to_str().unwrap()
    }

    fn kname(&self) -> String {
        self.dev.file_name().unwrap().to_string_lossy().into_owned()
    }
}

impl Drop for DmLinear {
    fn drop(&mut self) {
        let _ = Command::new("dmsetup")
            .args(["remove", &self.name])
            .status();
    }
}

/// The lines after "Disk stats (read/write):".
fn disk_block(out: &str) -> Vec<String> {
    out.lines()
        .skip_while(|l| *l != "Disk stats (read/write):")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn dm_device_over_a_loop_device_as_fio_shows_it() {
    let Some(dm) = DmLinear::new(16 << 20) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let job = |extra: &[&str]| -> Vec<String> {
        [
            "--name=dm",
            "--rw=read",
            "--bs=64k",
            "--size=4M",
            "--direct=1",
            "--ioengine=psync",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([format!("--filename={}", dm.path())])
        .chain(extra.iter().map(|s| s.to_string()))
        .collect()
    };
    let args = job(&[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // The newest fio's layout (flexio's default).
    let new = flexio(&args, d.path());
    assert_eq!(new.code, 0, "{}", new.stderr);
    let block = disk_block(&new.stdout);
    let lo = dm._lo.name();
    assert_eq!(block.len(), 2, "{}", new.stdout);
    let master = regex::Regex::new(&format!(
        r"^    {}: ios=\d+/\d+, sectors=\d+/\d+, merge=\d+/\d+, ticks=\d+/\d+, in_queue=\d+, util=\d+\.\d\d%, aggrios=\d+/\d+, aggsectors=\d+/\d+, aggrmerge=\d+/\d+, aggrticks=\d+/\d+, aggrin_queue=\d+, aggrutil=\d+\.\d\d%$",
        dm.kname()
    ))
    .unwrap();
    assert!(master.is_match(&block[0]), "{}", block[0]);
    assert!(
        block[1].starts_with(&format!("  {lo}: ios=")),
        "{}",
        block[1]
    );
    // One slave: its figures are the aggregate.
    let agg = block[0].split(", aggrios=").nth(1).unwrap();
    let slave_ios = block[1].split("ios=").nth(1).unwrap().split(',').next();
    assert_eq!(agg.split(',').next(), slave_ios, "{block:?}");
    let json_args = job(&["--output-format=json"]);
    let json_args: Vec<&str> = json_args.iter().map(String::as_str).collect();
    let Some((fio, ours)) = both(&args) else {
        return;
    };
    assert_eq!(fio.code, 0, "{}", fio.stderr);
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    let (fb, ob) = (disk_block(&fio.stdout), disk_block(&ours.stdout));
    let shape = |b: &[String]| -> Vec<String> { b.iter().filter_map(|l| line_shape(l)).collect() };
    assert_eq!(
        shape(&ob),
        shape(&fb),
        "fio:\n{}\nflexio:\n{}",
        fio.stdout,
        ours.stdout
    );
    let name = |l: &String| l.split(':').next().unwrap().to_string();
    assert_eq!(
        ob.iter().map(name).collect::<Vec<_>>(),
        fb.iter().map(name).collect::<Vec<_>>()
    );
    let (fio, ours) = both(&json_args).unwrap();
    let keys = |out: &str| -> Vec<Vec<String>> {
        json_of(out)["disk_util"]
            .as_array()
            .expect("disk_util")
            .iter()
            .map(|o| o.as_object().unwrap().keys().cloned().collect())
            .collect()
    };
    assert_eq!(keys(&ours.stdout), keys(&fio.stdout));
}
