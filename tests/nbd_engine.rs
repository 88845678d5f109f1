//! The nbd engine against nbdkit's memory plugin (a Debian package; .ci/run installs it):
//! the export's size becomes the job's, data written comes back verified, trims and
//! flushes reach the server, and fio 3.33's nbd engine does the same requests.

use crate::common;
use common::*;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An nbdkit serving a 64 MiB memory export on a unix socket; killed on drop.
struct Server {
    child: Child,
    uri: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn nbdkit() -> Option<Server> {
    if Command::new("nbdkit").arg("--version").output().is_err() {
        if std::env::var("FLEXIO_REQUIRE_FIO").as_deref() == Ok("1") {
            panic!("nbdkit is required (FLEXIO_REQUIRE_FIO=1) but not installed");
        }
        eprintln!("SKIP: nbdkit is not installed (apt-get install nbdkit)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("nbd.sock");
    let child = Command::new("nbdkit")
        .args(["-f", "-U"])
        .arg(&sock)
        .args(["memory", "64M"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !sock.exists() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let uri = format!("--uri=nbd+unix:///?socket={}", sock.display());
    Some(Server {
        child,
        uri,
        _dir: dir,
    })
}

fn io(j: &serde_json::Value, d: &str) -> (u64, u64) {
    let x = &j["jobs"][0][d];
    (
        x["io_bytes"].as_u64().unwrap(),
        x["total_ios"].as_u64().unwrap(),
    )
}

#[test]
fn nbd_export_end_to_end() {
    let Some(srv) = nbdkit() else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut a = vec![
            "--name=n",
            "--ioengine=nbd",
            &srv.uri,
            "--output-format=json",
        ];
        a.extend_from_slice(args);
        let r = run_bounded(&flexio_bin(), &a, d.path(), &[], 60);
        assert_eq!(r.code, 0, "{a:?}\n{}", r.stderr);
        json_of(&r.stdout)
    };
    // No size: the export's 64 MiB.
    let j = run(&["--rw=read", "--bs=1m"]);
    assert_eq!(io(&j, "read"), (64 << 20, 64));
    // Pipelined random writes verified on read-back, then trims and flushes.
    let j = run(&[
        "--rw=randwrite",
        "--bs=16k",
        "--iodepth=16",
        "--size=16M",
        "--verify=crc32c",
    ]);
    assert_eq!(j["jobs"][0]["error"], 0);
    assert_eq!(io(&j, "write").0, 16 << 20);
    assert_eq!(io(&j, "read").0, 16 << 20, "verified read-back");
    let j = run(&["--rw=randtrim", "--bs=64k", "--size=8M"]);
    assert_eq!(io(&j, "trim"), (8 << 20, 128));
    let j = run(&["--rw=write", "--bs=64k", "--size=4M", "--fsync=8"]);
    // fio 3.33 counts 7 here too: no flush after the last write.
    assert_eq!(
        j["jobs"][0]["sync"]["total_ios"], 7,
        "a flush after every 8th write"
    );
    // No server: a clear error.
    let r = flexio(
        &[
            "--name=n",
            "--ioengine=nbd",
            "--uri=nbd+unix:///?socket=/nonexistent",
            "--rw=read",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("/nonexistent"), "{}", r.stderr);
    let r = flexio(
        &[
            "--name=n",
            "--ioengine=nbd",
            "--uri=nbds://h/x?tls-psk-file=/k",
            "--rw=read",
        ],
        d.path(),
    );
    assert_eq!(r.code, 1);
    // (nbds:// itself: tests/issue28_tls.rs.)
    assert!(r.stderr.contains("pre-shared key"), "{}", r.stderr);
}

#[test]
fn nbd_over_ipv6_loopback() {
    if Command::new("nbdkit").arg("--version").output().is_err() {
        eprintln!("SKIP: nbdkit is not installed (apt-get install nbdkit)");
        return;
    }
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("SKIP: no IPv6 loopback (::1) on this machine");
        return;
    }
    let port = free_port().to_string();
    let mut child = Command::new("nbdkit")
        .args(["-f", "-i", "::1", "-p", &port, "memory", "4M"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while std::net::TcpStream::connect(format!("[::1]:{port}")).is_err()
        && t.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let d = tempfile::tempdir().unwrap();
    let uri = format!("--uri=nbd://[::1]:{port}/");
    let r = run_bounded(
        &flexio_bin(),
        &[
            "--name=n",
            "--ioengine=nbd",
            &uri,
            "--rw=read",
            "--bs=64k",
            "--output-format=json",
        ],
        d.path(),
        &[],
        60,
    );
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(io(&json_of(&r.stdout), "read"), (4 << 20, 64));
}

#[test]
fn nbd_matches_fio() {
    let Some(fio) = fio_bin() else {
        return;
    };
    let Some(srv) = nbdkit() else {
        return;
    };
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    let a = [
        "--name=n",
        "--ioengine=nbd",
        &srv.uri,
        "--rw=randrw",
        "--bs=16k",
        "--iodepth=8",
        "--size=16M",
        "--verify=crc32c",
        "--output-format=json",
    ];
    let rf = run_bounded(&fio, &a, d.path(), &[], 60);
    let rx = run_bounded(&flexio_bin(), &a, d.path(), ORACLE_COMPAT, 60);
    assert_eq!(rf.code, 0, "{}", rf.stderr);
    assert_eq!(rx.code, 0, "{}", rx.stderr);
    let (jf, jx) = (json_of(&rf.stdout), json_of(&rx.stdout));
    // Same seeds: the same mix of requests, verified in both.
    assert_eq!(io(&jf, "read"), io(&jx, "read"));
    assert_eq!(io(&jf, "write"), io(&jx, "write"));
    assert_eq!(jx["jobs"][0]["error"], 0);
}
