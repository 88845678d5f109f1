//! The file engines that go through the kernel's plumbing: `splice` (file I/O through a
//! pipe with splice/vmsplice) and `e4defrag` (ext4's EXT4_IOC_MOVE_EXT on a loop device
//! with an ext4 file system the test makes and removes), each against fio 3.33.

use crate::common;
use common::*;

fn io(j: &serde_json::Value, d: &str) -> (u64, u64) {
    let x = &j["jobs"][0][d];
    (
        x["io_bytes"].as_u64().unwrap(),
        x["total_ios"].as_u64().unwrap(),
    )
}

#[test]
fn splice_moves_and_verifies_data_like_fio() {
    let args = [
        "--name=s",
        "--ioengine=splice",
        "--directory=@D@",
        "--rw=randrw",
        "--bs=16k",
        "--size=8M",
        "--verify=crc32c",
        "--output-format=json",
    ];
    let d = tempfile::tempdir().unwrap();
    let a = subst(&args, d.path());
    let r = flexio(&a.iter().map(String::as_str).collect::<Vec<_>>(), d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = json_of(&r.stdout);
    assert_eq!(j["jobs"][0]["error"], 0, "verification passed");
    assert!(io(&j, "write").0 > 0 && io(&j, "read").0 > 0);
    let Some((fio, fx)) = both(&args) else {
        return;
    };
    assert_eq!(fio.code, 0, "{}", fio.stderr);
    assert_eq!(fx.code, 0, "{}", fx.stderr);
    let (jf, jx) = (json_of(&fio.stdout), json_of(&fx.stdout));
    // Same seeds, same offsets: the same requests in both, verified the same way.
    assert_eq!(io(&jf, "write"), io(&jx, "write"));
    assert_eq!(io(&jf, "read"), io(&jx, "read"));
}

#[test]
fn e4defrag_moves_extents_and_keeps_the_data() {
    let Some(mut dev) = loopdev::LoopDev::new(256 << 20) else {
        return;
    };
    if !dev.mount() {
        eprintln!("SKIP: cannot make and mount an ext4 file system on a loop device");
        return;
    }
    let mnt = dev.mountpoint().unwrap().to_path_buf();
    let file = mnt.join("data");
    let content: Vec<u8> = (0..16u32 << 20)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&file, &content).unwrap();
    let fname = format!("--filename={}", file.display());
    let dir = format!("--directory={}", mnt.display());
    let run = |bin: &std::path::Path, extra: &[&str]| {
        let mut a = vec![
            "--name=d",
            "--ioengine=e4defrag",
            "--donorname=donor",
            &dir,
            "--rw=write",
            "--bs=64k",
            "--filesize=16M",
            "--output-format=json",
        ];
        a.push(&fname);
        a.extend_from_slice(extra);
        let r = run_in_env(bin, &a, &mnt, ORACLE_COMPAT);
        assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
        json_of(&r.stdout)
    };
    let j = run(&flexio_bin(), &[]);
    assert_eq!(io(&j, "write"), (16 << 20, 256), "every block moved");
    assert!(
        std::fs::read(&file).unwrap() == content,
        "defragmenting keeps the data"
    );
    let j = run(&flexio_bin(), &["--inplace=1", "--rw=randwrite"]);
    assert_eq!(io(&j, "write"), (16 << 20, 256));
    assert!(std::fs::read(&file).unwrap() == content);
    // Reads are refused, as in fio.
    let r = flexio(
        &[
            "--name=d",
            "--ioengine=e4defrag",
            "--donorname=donor",
            &fname,
            "--rw=read",
            "--size=1M",
        ],
        &mnt,
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("Invalid argument"), "{}", r.stderr);
    let r = flexio(
        &[
            "--name=d",
            "--ioengine=e4defrag",
            &fname,
            "--rw=write",
            "--size=1M",
        ],
        &mnt,
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("donorname"), "{}", r.stderr);
    if let Some(fio) = fio_bin() {
        let jf = run(&fio, &[]);
        assert_eq!(io(&jf, "write"), (16 << 20, 256), "fio moves the same");
        assert!(std::fs::read(&file).unwrap() == content);
    }
}
