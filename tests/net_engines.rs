//! The network engines (`net`, `netsplice`) over loopback only: TCP with a listener, UDP
//! (unicast and multicast), unix sockets, ping-pong, and fio 3.33 on the other end of the
//! connection (both ways), which shows flexio speaks fio's wire protocol.

use crate::common;
use common::*;
use std::time::Duration;

/// A port nobody listens on right now (the kernel's choice for an ephemeral bind).
fn free_port(udp: bool) -> String {
    let p = if udp {
        std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    } else {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    p.to_string()
}

fn json_ok(args: &[&str], dir: &std::path::Path) -> serde_json::Value {
    let r = run_bounded(&flexio_bin(), args, dir, &[], 60);
    assert_eq!(r.code, 0, "{args:?}\n{}\n{}", r.stdout, r.stderr);
    json_of(&r.stdout)
}

fn bytes(j: &serde_json::Value, job: usize, dir: &str) -> u64 {
    j["jobs"][job][dir]["io_bytes"].as_u64().unwrap()
}

#[test]
fn tcp_listener_and_sender() {
    let d = tempfile::tempdir().unwrap();
    let port = format!("--port={}", free_port(false));
    for engine in ["net", "netsplice"] {
        let e = format!("--ioengine={engine}");
        let args = [
            "--name=rx",
            &e,
            &port,
            "--listen",
            "--rw=read",
            "--bs=64k",
            "--size=32M",
            "--name=tx",
            &e,
            "--hostname=127.0.0.1",
            &port,
            "--rw=write",
            "--bs=64k",
            "--size=32M",
            "--nodelay=1",
            "--window_size=1m",
            "--mss=1400",
            "--startdelay=1",
        ];
        let r = run_bounded(&flexio_bin(), &args, d.path(), &[], 60);
        assert_eq!(r.code, 0, "{engine}\n{}\n{}", r.stdout, r.stderr);
        assert!(
            r.stdout.contains("fio: waiting for connection"),
            "{}",
            r.stdout
        );
        // net counts bits, as fio does (netsplice does not).
        assert_eq!(r.stdout.contains("bit/s"), engine == "net", "{}", r.stdout);
        let mut a = args.to_vec();
        a.push("--output-format=json");
        let j = json_ok(&a, d.path());
        assert_eq!(
            bytes(&j, 0, "read"),
            32 << 20,
            "{engine}: the reader got everything"
        );
        assert_eq!(bytes(&j, 1, "write"), 32 << 20, "{engine}");
    }
    // Nothing was created in the job's directory: the target is a connection.
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn udp_reader_ends_with_the_senders_goodbye() {
    let d = tempfile::tempdir().unwrap();
    let port = format!("--port={}", free_port(true));
    let j = json_ok(
        &[
            "--name=rx",
            "--ioengine=net",
            &port,
            "--protocol=udp",
            "--rw=read",
            "--bs=4k",
            "--size=64M",
            "--name=tx",
            "--ioengine=net",
            "--hostname=127.0.0.1",
            &port,
            "--protocol=udp",
            "--rw=write",
            "--bs=4k",
            "--size=2M",
            "--rate=8m",
            "--startdelay=1",
            "--output-format=json",
        ],
        d.path(),
    );
    assert_eq!(bytes(&j, 1, "write"), 2 << 20);
    let got = bytes(&j, 0, "read");
    // What did not arrive is counted from fio's sequence trailer, as fio does.
    let ios = j["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    let dropped = j["jobs"][0]["read"]["drop_ios"].as_u64().unwrap();
    assert_eq!(ios + dropped, 512, "{ios} received, {dropped} dropped");
    // Datagrams may be lost, but not at this rate on loopback; the reader stopped at the
    // goodbye, long before its 64 MiB.
    assert!(got > 1 << 20 && got <= 2 << 20, "reader got {got} bytes");
    // Multicast on the loopback interface.
    let j = json_ok(
        &[
            "--name=rx",
            "--ioengine=net",
            "--hostname=239.7.7.7",
            "--interface=127.0.0.1",
            &port,
            "--protocol=udp",
            "--rw=read",
            "--bs=4k",
            "--size=64M",
            "--name=tx",
            "--ioengine=net",
            "--hostname=239.7.7.7",
            "--interface=127.0.0.1",
            "--ttl=0",
            &port,
            "--protocol=udp",
            "--rw=write",
            "--bs=4k",
            "--size=1M",
            "--rate=4m",
            "--startdelay=1",
            "--output-format=json",
        ],
        d.path(),
    );
    assert_eq!(bytes(&j, 1, "write"), 1 << 20);
    assert!(bytes(&j, 0, "read") > 512 << 10, "{}", bytes(&j, 0, "read"));
}

#[test]
fn unix_socket_ping_pong() {
    let d = tempfile::tempdir().unwrap();
    let sock = format!("--filename={}", d.path().join("s").display());
    let j = json_ok(
        &[
            "--name=rx",
            "--ioengine=net",
            &sock,
            "--protocol=unix",
            "--rw=read",
            "--bs=4k",
            "--size=4M",
            "--pingpong",
            "--name=tx",
            "--ioengine=net",
            &sock,
            "--protocol=unix",
            "--rw=write",
            "--bs=4k",
            "--size=4M",
            "--pingpong",
            "--startdelay=1",
            "--output-format=json",
        ],
        d.path(),
    );
    assert_eq!(bytes(&j, 0, "read"), 4 << 20);
    assert_eq!(bytes(&j, 1, "write"), 4 << 20);
    assert_eq!(
        j["jobs"][1]["write"]["total_ios"], 1024,
        "one round trip per block"
    );
}

#[test]
fn option_errors_are_fios() {
    let d = tempfile::tempdir().unwrap();
    for (args, msg) in [
        (
            &[
                "--ioengine=net",
                "--port=9",
                "--rw=randread",
                "--listen",
                "--size=1M",
            ][..],
            "network IO can't be random",
        ),
        (
            &["--ioengine=net", "--rw=write", "--hostname=x", "--size=1M"][..],
            "requires port",
        ),
        (
            &[
                "--ioengine=net",
                "--port=9",
                "--protocol=udp",
                "--listen",
                "--rw=read",
                "--size=1M",
            ][..],
            "listen only valid for TCP",
        ),
        (
            &["--ioengine=net", "--port=9", "--rw=read", "--size=1M"][..],
            "did you forget to set 'listen'",
        ),
        (
            &[
                "--ioengine=net",
                "--port=9",
                "--hostname=127.0.0.1",
                "--rw=write",
            ][..],
            "size=",
        ),
    ] {
        let mut a = vec!["--name=n"];
        a.extend_from_slice(args);
        let r = flexio(&a, d.path());
        assert_eq!(r.code, 1, "{a:?}");
        assert!(r.stderr.contains(msg), "{a:?}: {}", r.stderr);
    }
}

/// fio on one end, flexio on the other, both ways.
#[test]
fn fio_and_flexio_talk_to_each_other() {
    let Some(fio) = fio_bin() else {
        return;
    };
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = tempfile::tempdir().unwrap();
    for (fio_listens, udp) in [(true, false), (false, false), (true, true), (false, true)] {
        let port = format!("--port={}", free_port(udp));
        let proto = if udp {
            "--protocol=udp"
        } else {
            "--protocol=tcp"
        };
        let rx = vec![
            "--name=rx".to_string(),
            "--ioengine=net".into(),
            port.clone(),
            proto.into(),
            "--rw=read".into(),
            "--bs=8k".into(),
            "--size=16M".into(),
            "--output-format=json".into(),
        ];
        let mut rx = rx;
        if !udp {
            rx.push("--listen".into());
        }
        let tx = [
            "--name=tx",
            "--ioengine=net",
            "--hostname=127.0.0.1",
            &port,
            proto,
            "--rw=write",
            "--bs=8k",
            "--size=4M",
            "--rate=16m",
            "--output-format=json",
        ];
        let (rx_bin, tx_bin) = if fio_listens {
            (fio.clone(), flexio_bin())
        } else {
            (flexio_bin(), fio.clone())
        };
        let rx: Vec<&str> = rx.iter().map(String::as_str).collect();
        let listener = spawn_in(&rx_bin, &rx, d.path(), ORACLE_COMPAT);
        // fio binds when its job starts, a moment after it is launched.
        std::thread::sleep(Duration::from_millis(1500));
        let s = run_bounded(&tx_bin, &tx, d.path(), ORACLE_COMPAT, 60);
        let out = listener.wait_with_output().unwrap();
        let rx_out = String::from_utf8_lossy(&out.stdout);
        let what = format!("fio listens: {fio_listens}, udp: {udp}");
        assert_eq!(s.code, 0, "{what}: sender\n{}\n{}", s.stdout, s.stderr);
        assert!(out.status.success(), "{what}: receiver\n{rx_out}");
        let (js, jr) = (json_of(&s.stdout), json_of(&rx_out));
        assert_eq!(bytes(&js, 0, "write"), 4 << 20, "{what}");
        let got = bytes(&jr, 0, "read");
        if udp {
            // Each receiver checks the sequence trailer the other side writes (fio's): what
            // it misses is counted as dropped, so received + dropped = sent.
            let ios = jr["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
            let dropped = jr["jobs"][0]["read"]["drop_ios"].as_u64().unwrap();
            assert_eq!(
                ios + dropped,
                512,
                "{what}: {ios} received, {dropped} dropped"
            );
        } else if fio_listens {
            // fio 3.33's receiver undercounts the rest of a short read (fio talking to fio
            // shows the same): at most one block per short read is missing from its count.
            let short = jr["jobs"][0]["read"]["short_ios"].as_u64().unwrap();
            assert!(
                got <= 4 << 20 && got + short * 8192 >= 4 << 20,
                "{what}: fio counted {got} bytes with {short} short reads"
            );
        } else {
            assert_eq!(got, 4 << 20, "{what}: the receiver ended at the goodbye");
        }
    }
}
