//! The passthrough engines (sg, io_uring_cmd, mtd) on a machine without SCSI, NVMe or MTD
//! devices: jobs parse as in fio 3.33 (fio's example files are in tests/parse_only.rs),
//! and a run stops before any job with one line naming what is missing. The command
//! encodings are unit-tested in the engines' files against the kernel's layouts.

use crate::common;
use common::*;

fn run(args: &[&str]) -> Run {
    let d = tempfile::tempdir().unwrap();
    run_bounded(&flexio_bin(), args, d.path(), &[], 60)
}

#[test]
fn missing_devices_are_named() {
    for (engine, dev, want) in [
        (
            "sg",
            "/dev/sg0",
            "/dev/sg0: no such device: the sg engine needs a SCSI generic device (/dev/sgN) or a SCSI disk's block device",
        ),
        (
            "mtd",
            "/dev/mtd0",
            "/dev/mtd0: no such device: the mtd engine needs an MTD character device (/dev/mtdN)",
        ),
        (
            "io_uring_cmd",
            "/dev/ng0n1",
            "/dev/ng0n1: no such device: the io_uring_cmd engine needs an NVMe namespace's generic character device (/dev/ngXnY)",
        ),
    ] {
        if std::path::Path::new(dev).exists() {
            eprintln!("SKIP: {dev} exists here; the missing-device message is not checked");
            continue;
        }
        let e = format!("--ioengine={engine}");
        let f = format!("--filename={dev}");
        let r = run(&["--name=x", &e, &f, "--size=1m"]);
        assert_eq!(r.code, 1, "{engine}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{engine}: {}", r.stderr);
        assert!(!r.stdout.contains("Starting"), "stopped before any job: {}", r.stdout);
    }
}

/// Nodes that exist but are not the engine's device: fio's words where fio has them.
#[test]
fn wrong_nodes_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("plain");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    let plain = format!("--filename={}", file.display());
    for (engine, target, want) in [
        (
            "sg",
            plain.as_str(),
            "ioengine sg only works on block or character devices",
        ),
        (
            "sg",
            "--filename=/dev/null",
            "/dev/null: not a SCSI device (SG_GET_VERSION_NUM: ",
        ),
        (
            "mtd",
            "--filename=/dev/null",
            "/dev/null: not an MTD device (MEMGETINFO: ",
        ),
        (
            "io_uring_cmd",
            plain.as_str(),
            "ioengine io_uring_cmd only works with nvme ns generic char devices (/dev/ngXnY)",
        ),
        (
            "io_uring_cmd",
            "--filename=/dev/null",
            "/dev/null: failed to fetch namespace-id (NVME_IOCTL_ID: ",
        ),
    ] {
        let e = format!("--ioengine={engine}");
        let r = run(&["--name=x", &e, target, "--size=1m"]);
        assert_eq!(r.code, 1, "{engine} {target}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{engine} {target}: {}", r.stderr);
    }
    // No filename: generated names are never device nodes.
    let r = run(&["--name=x", "--ioengine=sg", "--size=1m"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("the sg engine needs filename= naming a SCSI generic device"),
        "{}",
        r.stderr
    );
}

/// A loop device is a block device but not a SCSI one.
#[test]
fn a_loop_device_is_not_a_scsi_disk() {
    let Some(l) = common::loopdev::LoopDev::new(4 << 20) else {
        return;
    };
    let f = format!("--filename={}", l.dev.display());
    let r = run(&["--name=x", "--ioengine=sg", &f, "--size=1m"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "{}: not a SCSI device (SG_GET_VERSION_NUM",
            l.dev.display()
        )),
        "{}",
        r.stderr
    );
    let r = run(&["--name=x", "--ioengine=mtd", &f, "--size=1m"]);
    assert!(
        r.stderr
            .contains("is a block device: the mtd engine needs an MTD character device"),
        "{}",
        r.stderr
    );
}

/// The engines' options as fio 3.33 has them: sg's readfua/writefua/sg_write_mode/stream_id,
/// io_uring_cmd's io_uring table with cmd_type (io_uring has cmd_type too, as in fio), mtd's
/// skip_bad; io_uring_cmd's options of fio 3.36 and later exist only in the newest fio.
#[test]
fn options_parse_as_fio() {
    let ok = |args: &[&str]| {
        let mut a = vec!["--parse-only", "--name=x"];
        a.extend_from_slice(args);
        let r = run(&a);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    };
    let bad = |args: &[&str], want: &str| {
        let mut a = vec!["--parse-only", "--name=x"];
        a.extend_from_slice(args);
        let r = run(&a);
        assert_eq!(r.code, 1, "{args:?}");
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
    };
    for mode in [
        "write",
        "write_and_verify",
        "verify",
        "write_same",
        "same",
        "write_same_ndob",
        "verify_bytchk_00",
        "verify_bytchk_01",
        "verify_bytchk_11",
        "write_stream",
    ] {
        ok(&[
            "--compat=3.33",
            "--ioengine=sg",
            &format!("--sg_write_mode={mode}"),
        ]);
    }
    ok(&[
        "--compat=3.33",
        "--ioengine=sg",
        "--readfua=1",
        "--writefua=1",
        "--stream_id=7",
        "--hipri",
    ]);
    bad(
        &["--ioengine=sg", "--sg_write_mode=nope"],
        "not a valid value",
    );
    ok(&["--compat=3.33", "--ioengine=mtd", "--skip_bad=1"]);
    ok(&[
        "--compat=3.33",
        "--ioengine=io_uring_cmd",
        "--cmd_type=nvme",
        "--sqthread_poll",
        "--nonvectored=1",
        "--registerfiles",
    ]);
    ok(&["--compat=3.33", "--ioengine=io_uring", "--cmd_type=nvme"]);
    // Newer than 3.33: readfua for io_uring_cmd (3.38), write_mode (3.38), deac (3.39),
    // protection information (3.36), cmd_type=bsg (after 3.42).
    ok(&[
        "--ioengine=io_uring_cmd",
        "--readfua=1",
        "--write_mode=zeroes",
        "--deac=1",
    ]);
    ok(&[
        "--ioengine=io_uring_cmd",
        "--md_per_io_size=64",
        "--pi_chk=GUARD,REFTAG",
        "--apptag=0x10",
        "--apptag_mask=0xff",
    ]);
    ok(&[
        "--ioengine=io_uring_cmd",
        "--write_mode=write/50:zeroes/30:uncor/",
    ]);
    bad(
        &["--ioengine=io_uring_cmd", "--write_mode=write/50"],
        "at least two entries",
    );
    bad(
        &["--ioengine=io_uring_cmd", "--pi_chk=CRC"],
        "not a protection information field",
    );
    bad(
        &["--compat=3.33", "--ioengine=io_uring_cmd", "--readfua=1"],
        "option 'readfua' belongs to ioengine sg",
    );
    bad(
        &["--compat=3.33", "--ioengine=io_uring_cmd", "--deac=1"],
        "unrecognized option '--deac'",
    );
    bad(
        &["--compat=3.33", "--ioengine=io_uring_cmd", "--cmd_type=bsg"],
        "cmd_type",
    );
    // What flexio does not do is said before any job.
    let r = run(&[
        "--name=x",
        "--ioengine=io_uring_cmd",
        "--cmd_type=bsg",
        "--filename=/dev/bsg/0",
        "--size=1m",
    ]);
    assert!(
        r.stderr.contains(
            "cmd_type=bsg (SCSI commands through bsg passthrough) is not supported by flexio"
        ),
        "{}",
        r.stderr
    );
}

/// io_uring's protection-information options (fio 3.41) stop the run naming what is
/// missing when the target has no protection information.
#[test]
fn protection_information_needs_a_device_that_has_it() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("f");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    let f = format!("--filename={}", file.display());
    let r = run(&[
        "--name=x",
        "--ioengine=io_uring",
        &f,
        "--size=1m",
        "--md_per_io_size=64",
    ]);
    if r.stderr.contains("io_uring is not available") {
        eprintln!("SKIP: no io_uring here");
        return;
    }
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("no protection information: not a block device"),
        "{}",
        r.stderr
    );
    if let Some(l) = common::loopdev::LoopDev::new(4 << 20) {
        let f = format!("--filename={}", l.dev.display());
        let r = run(&[
            "--name=x",
            "--ioengine=io_uring",
            &f,
            "--size=1m",
            "--pi_chk=GUARD",
        ]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(
            r.stderr
                .contains("no protection information: it has no integrity profile")
                || r.stderr
                    .contains("no protection information: its integrity format is none"),
            "{}",
            r.stderr
        );
    }
}
