//! Trims on the system-call engines (fio's `os_trim`: BLKDISCARD). On a block device every
//! engine discards the range (a loop device punches the hole in its backing file, so the
//! range reads back as zeros); on a regular file the ioctl answers ENOTTY, and the job ends
//! with that error, as in fio. Compared with fio 3.33 on the same device.

use crate::common;
use common::loopdev::LoopDev;
use common::*;
use std::io::{Read, Seek, SeekFrom};

const ENGINES: [&str; 9] = [
    "sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap",
];

fn json(r: &Run) -> serde_json::Value {
    json_of(&r.stdout)
}

fn region_is(dev: &str, off: u64, len: usize, zero: bool) -> bool {
    let mut f = std::fs::File::open(dev).unwrap();
    f.seek(SeekFrom::Start(off)).unwrap();
    let mut b = vec![0u8; len];
    f.read_exact(&mut b).unwrap();
    b.iter().all(|x| *x == 0) == zero
}

#[test]
fn every_system_call_engine_trims_a_block_device() {
    let Some(lo) = LoopDev::new(64 << 20) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let dev = lo.path();
    let fill = flexio(
        &[
            "--name=fill",
            &format!("--filename={dev}"),
            "--rw=write",
            "--bs=1m",
            "--buffer_pattern=0x5a",
        ],
        d.path(),
    );
    assert_eq!(fill.code, 0, "{}", fill.stderr);
    for (i, e) in ENGINES.iter().enumerate() {
        let off = i as u64 * (4 << 20);
        let r = flexio(
            &[
                "--name=t",
                &format!("--filename={dev}"),
                &format!("--ioengine={e}"),
                "--rw=trim",
                "--bs=64k",
                "--size=4m",
                &format!("--offset={off}"),
                "--output-format=json",
            ],
            d.path(),
        );
        if *e == "io_uring" && r.code != 0 && r.stderr.contains("io_uring") {
            eprintln!("SKIP: io_uring: {}", r.stderr.lines().next().unwrap_or(""));
            continue;
        }
        assert_eq!(r.code, 0, "{e}: {}", r.stderr);
        let j = json(&r);
        let t = &j["jobs"][0];
        assert_eq!(t["error"], 0, "{e}");
        assert_eq!(t["trim"]["total_ios"], 64, "{e}");
        assert_eq!(t["trim"]["io_bytes"], 4 << 20, "{e}");
        assert!(t["trim"]["clat_ns"]["mean"].as_f64().unwrap() > 0.0, "{e}");
        assert!(
            region_is(dev, off, 4 << 20, true),
            "{e}: the range reads zero"
        );
    }
    // What no trim touched keeps its data.
    assert!(region_is(dev, 60 << 20, 4 << 20, false));
}

#[test]
fn trim_patterns_on_a_block_device_match_fio() {
    let Some(fio) = fio_bin() else { return };
    let Some(lo) = LoopDev::new(32 << 20) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let dev = lo.path();
    for rw in ["trim", "randtrim", "trimwrite", "randtrimwrite"] {
        let args = [
            "--name=t",
            &format!("--filename={dev}") as &str,
            &format!("--rw={rw}"),
            "--bs=16k",
            "--size=8m",
            "--ioengine=psync",
            "--output-format=json",
        ];
        let f = run_in(&fio, &args, d.path());
        let x = run_in_env(&flexio_bin(), &args, d.path(), ORACLE_COMPAT);
        assert_eq!(f.code, 0, "fio {rw}: {}", f.stderr);
        assert_eq!(x.code, 0, "flexio {rw}: {}", x.stderr);
        let (f, x) = (json(&f), json(&x));
        for dir in ["trim", "write"] {
            for k in ["total_ios", "io_bytes"] {
                assert_eq!(
                    x["jobs"][0][dir][k], f["jobs"][0][dir][k],
                    "{rw}: {dir} {k}"
                );
            }
        }
    }
}

#[test]
fn a_trim_on_a_regular_file_fails_as_in_fio() {
    let Some(fio) = fio_bin() else { return };
    let d = tempfile::tempdir().unwrap();
    for e in ["psync", "libaio"] {
        let args = [
            "--name=t",
            "--filename=plain.dat",
            "--rw=trim",
            "--bs=64k",
            "--size=1m",
            &format!("--ioengine={e}") as &str,
            "--output-format=json",
        ];
        let f = run_in(&fio, &args, d.path());
        let x = run_in_env(&flexio_bin(), &args, d.path(), ORACLE_COMPAT);
        let (fj, xj) = (json(&f), json(&x));
        assert_eq!(
            fj["jobs"][0]["error"],
            libc_enotty(),
            "fio {e}: {}",
            f.stderr
        );
        assert_eq!(
            xj["jobs"][0]["error"], fj["jobs"][0]["error"],
            "{e}: {}",
            x.stderr
        );
        assert_eq!(x.code, f.code, "{e}: exit status");
        assert!(
            x.stderr.contains("Inappropriate ioctl for device"),
            "{e}: {}",
            x.stderr
        );
    }
}

fn libc_enotty() -> i64 {
    25
}
