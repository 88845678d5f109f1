//! The engines' TLS (issue 28): the http engine's `https=on` (the server's certificate
//! checked against the CAs `SSL_CERT_FILE` names, as fio's libcurl would take the system's)
//! and `https=insecure` against a Python `ssl` object server with a throwaway certificate
//! made by the openssl command line; `http_mode=swift` (token and upload MD5, which the
//! server checks); and `nbds://` URIs (NBD_OPT_STARTTLS) against nbdkit
//! `--tls=require`, over a Unix socket and TCP, with fio 3.33's nbd engine on the same URI.
//! A wrong CA, a certificate for another name and a plain client at a TLS-only server fail
//! with words that say so.

use crate::common;
use common::certs::*;
use common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// openssl and python3, or a visible SKIP (CI installs both and requires them).
fn have_tools() -> bool {
    for tool in ["openssl", "python3"] {
        let ok = Command::new(tool)
            .arg(if tool == "openssl" {
                "version"
            } else {
                "--version"
            })
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            assert!(
                std::env::var("FLEXIO_REQUIRE_FIO").as_deref() != Ok("1"),
                "{tool} is required here (FLEXIO_REQUIRE_FIO=1)"
            );
            eprintln!("SKIP: {tool} is not installed");
            return false;
        }
    }
    true
}

/// Certificates for the tests: the CA `ca`, a server certificate `srv` for 127.0.0.1 and
/// localhost, one `other` for another name, and an unrelated CA `rogue`.
fn pki() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    ca(d.path(), "ca");
    ca(d.path(), "rogue");
    cert(
        d.path(),
        "srv",
        "ca",
        "IP:127.0.0.1,DNS:localhost",
        "serverAuth",
    );
    cert(
        d.path(),
        "other",
        "ca",
        "DNS:elsewhere.example",
        "serverAuth",
    );
    d
}

/// The object server with `args`; (the server, its HTTPS port, its plain port).
struct Server {
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn object_server(args: &[&str]) -> (Server, Vec<u16>) {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/object_server.py"
    );
    let mut child = Command::new("python3")
        .arg(script)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ports = line
        .split_whitespace()
        .map(|p| p.parse().expect("the server prints its ports"))
        .collect();
    (Server { child }, ports)
}

fn tls_server(pki: &Path, which: &str, extra: &[&str]) -> (Server, u16, u16) {
    let tls = format!(
        "{}:{}",
        pki.join(format!("{which}.pem")).display(),
        pki.join(format!("{which}.key")).display()
    );
    let mut a = vec!["--tls", tls.as_str()];
    a.extend_from_slice(extra);
    let (s, p) = object_server(&a);
    (s, p[0], p[1])
}

fn stats(port: u16) -> serde_json::Value {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "GET /__stats HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut r = String::new();
    s.read_to_string(&mut r).unwrap();
    serde_json::from_str(r.split("\r\n\r\n").nth(1).unwrap()).unwrap()
}

fn http_job(host: &str, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let d = tempfile::tempdir().unwrap();
    let host = format!("--http_host={host}");
    let mut a = vec![
        "--name=h",
        "--ioengine=http",
        host.as_str(),
        "--filename=/bucket/obj",
        "--output-format=json",
    ];
    a.extend_from_slice(extra);
    run_bounded(&flexio_bin(), &a, d.path(), env, 60)
}

fn io(j: &serde_json::Value, d: &str) -> (u64, u64) {
    let x = &j["jobs"][0][d];
    (
        x["io_bytes"].as_u64().unwrap(),
        x["total_ios"].as_u64().unwrap(),
    )
}

const WRITE_VERIFY: &[&str] = &["--rw=write", "--bs=16k", "--size=512k", "--verify=crc32c"];

fn ca_env(pki: &Path, name: &str) -> String {
    pki.join(format!("{name}.pem")).display().to_string()
}

#[test]
fn https_on_checks_the_servers_certificate() {
    if !have_tools() {
        return;
    }
    let pki = pki();
    let (_srv, port, plain) = tls_server(pki.path(), "srv", &[]);
    let ca = ca_env(pki.path(), "ca");
    // By IP address and by name: both in the certificate.
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        let before = stats(plain);
        let mut a = vec!["--https=on"];
        a.extend_from_slice(WRITE_VERIFY);
        let r = http_job(&host, &a, &[("SSL_CERT_FILE", &ca)]);
        assert_eq!(r.code, 0, "{host}: {}", r.stderr);
        let j = json_of(&r.stdout);
        assert_eq!(io(&j, "write"), (512 << 10, 32), "{host}");
        assert_eq!(
            io(&j, "read"),
            (512 << 10, 32),
            "{host}: read back and verified"
        );
        let s = stats(plain);
        let n = |k: &str| s[k].as_u64().unwrap() - before[k].as_u64().unwrap();
        assert_eq!((n("PUT"), n("GET")), (32, 32), "{host}");
        assert_eq!(n("tls"), 64, "{host}: every request over TLS");
    }
    assert_eq!(stats(plain)["bytes"], 512 << 10);
    // A CA that did not sign the server's certificate: refused, saying why and which CAs.
    let rogue = ca_env(pki.path(), "rogue");
    let r = http_job(
        &format!("127.0.0.1:{port}"),
        &["--https=on", "--rw=write", "--size=64k"],
        &[("SSL_CERT_FILE", &rogue)],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("not signed by a trusted CA") && r.stderr.contains("rogue.pem"),
        "{}",
        r.stderr
    );
    // https=insecure checks nothing: the same CA is no obstacle.
    let r = http_job(
        &format!("127.0.0.1:{port}"),
        &["--https=insecure", "--rw=write", "--bs=16k", "--size=64k"],
        &[("SSL_CERT_FILE", &rogue)],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(io(&json_of(&r.stdout), "write"), (64 << 10, 4));
    // A CA bundle that is not there: the run does not start.
    let r = http_job(
        &format!("127.0.0.1:{port}"),
        &["--https=on", "--rw=write", "--size=64k"],
        &[("SSL_CERT_FILE", "/nonexistent/ca.pem")],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("SSL_CERT_FILE") && r.stderr.contains("/nonexistent/ca.pem"),
        "{}",
        r.stderr
    );
    // Plain HTTP to the TLS port is no HTTP at all.
    let r = http_job(
        &format!("127.0.0.1:{port}"),
        &["--rw=write", "--size=16k"],
        &[],
    );
    assert_ne!(r.code, 0);
}

#[test]
fn https_refuses_a_certificate_for_another_name() {
    if !have_tools() {
        return;
    }
    let pki = pki();
    let (_srv, port, _plain) = tls_server(pki.path(), "other", &[]);
    let ca = ca_env(pki.path(), "ca");
    let r = http_job(
        &format!("127.0.0.1:{port}"),
        &["--https=on", "--rw=write", "--size=16k"],
        &[("SSL_CERT_FILE", &ca)],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("does not name 127.0.0.1"), "{}", r.stderr);
    // Trusting it anyway.
    let r = http_job(
        &format!("127.0.0.1:{port}"),
        &["--https=insecure", "--rw=write", "--bs=16k", "--size=16k"],
        &[("SSL_CERT_FILE", &ca)],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn swift_sends_the_token_and_each_uploads_md5() {
    if !have_tools() {
        return;
    }
    let pki = pki();
    let ca = ca_env(pki.path(), "ca");
    // Over HTTPS.
    let (_srv, port, plain) = tls_server(pki.path(), "srv", &["--swift", "tok-123"]);
    let mut a = vec![
        "--https=on",
        "--http_mode=swift",
        "--http_swift_auth_token=tok-123",
    ];
    a.extend_from_slice(WRITE_VERIFY);
    let r = http_job(&format!("localhost:{port}"), &a, &[("SSL_CERT_FILE", &ca)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = json_of(&r.stdout);
    assert_eq!(io(&j, "write"), (512 << 10, 32));
    assert_eq!(io(&j, "read"), (512 << 10, 32));
    let s = stats(plain);
    assert_eq!((s["PUT"].as_u64(), s["GET"].as_u64()), (Some(32), Some(32)));
    assert_eq!(s["bad_auth"], 0);
    assert_eq!(s["bad_etag"], 0, "every upload's Etag is its MD5");
    assert_eq!(s["seen"]["PUT x-auth-token"], "tok-123");
    assert_eq!(s["seen"]["PUT etag"].as_str().map(str::len), Some(32));
    // The wrong token: the server says 403, the job fails.
    let r = http_job(
        &format!("localhost:{port}"),
        &[
            "--https=on",
            "--http_mode=swift",
            "--http_swift_auth_token=wrong",
            "--rw=write",
            "--size=16k",
        ],
        &[("SSL_CERT_FILE", &ca)],
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("HTTP status code 403"), "{}", r.stderr);
    // Over plain HTTP, trims deleting the objects.
    let (_srv2, ports) = object_server(&["--swift", "t2"]);
    let port = ports[0];
    let r = http_job(
        &format!("127.0.0.1:{port}"),
        &[
            "--http_mode=swift",
            "--http_swift_auth_token=t2",
            "--rw=write",
            "--bs=8k",
            "--size=64k",
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(stats(port)["objects"], 8);
    let r = http_job(
        &format!("127.0.0.1:{port}"),
        &[
            "--http_mode=swift",
            "--http_swift_auth_token=t2",
            "--rw=trim",
            "--bs=8k",
            "--size=64k",
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s = stats(port);
    assert_eq!(
        (s["objects"].as_u64(), s["tls"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(s["bad_etag"], 0);
}

/// nbdkit with TLS required, its certificates in a directory as nbdkit and libnbd name
/// them; on a Unix socket, or on TCP when `port` is given. `None`: nbdkit is missing
/// (a visible SKIP, or a failure under FLEXIO_REQUIRE_FIO=1).
struct Nbdkit {
    child: Child,
    _dir: tempfile::TempDir,
    sock: PathBuf,
}

impl Drop for Nbdkit {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn nbdkit_tls(certs: &Path, port: Option<u16>) -> Option<Nbdkit> {
    if Command::new("nbdkit").arg("--version").output().is_err() {
        assert!(
            std::env::var("FLEXIO_REQUIRE_FIO").as_deref() != Ok("1"),
            "nbdkit is required (FLEXIO_REQUIRE_FIO=1) but not installed"
        );
        eprintln!("SKIP: nbdkit is not installed (apt-get install nbdkit)");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("nbd.sock");
    let mut cmd = Command::new("nbdkit");
    cmd.arg("-f");
    match port {
        Some(p) => cmd.args(["-i", "127.0.0.1", "-p", &p.to_string()]),
        None => cmd.arg("-U").arg(&sock),
    };
    let child = cmd
        .arg("--tls=require")
        .arg(format!("--tls-certificates={}", certs.display()))
        .args(["memory", "32M"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let ready = || match port {
        Some(p) => std::net::TcpStream::connect(("127.0.0.1", p)).is_ok(),
        None => sock.exists(),
    };
    while !ready() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(Nbdkit {
        child,
        _dir: dir,
        sock,
    })
}

/// A certificates directory: nbdkit's names for the server's files, libnbd's for the CA.
fn cert_dir(pki: &Path, ca: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(pki.join(format!("{ca}.pem")), d.path().join("ca-cert.pem")).unwrap();
    std::fs::copy(pki.join("srv.pem"), d.path().join("server-cert.pem")).unwrap();
    std::fs::copy(pki.join("srv.key"), d.path().join("server-key.pem")).unwrap();
    d
}

fn nbd_job(bin: &Path, uri: &str, extra: &[&str], env: &[(&str, &str)]) -> Run {
    let d = tempfile::tempdir().unwrap();
    let uri = format!("--uri={uri}");
    let mut a = vec![
        "--name=n",
        "--ioengine=nbd",
        uri.as_str(),
        "--output-format=json",
    ];
    a.extend_from_slice(extra);
    run_bounded(bin, &a, d.path(), env, 60)
}

#[test]
fn nbds_starts_tls_and_checks_the_server() {
    if !have_tools() {
        return;
    }
    let pki = pki();
    let certs = cert_dir(pki.path(), "ca");
    let Some(unix) = nbdkit_tls(certs.path(), None) else {
        return;
    };
    let job = [
        "--rw=randwrite",
        "--bs=16k",
        "--iodepth=8",
        "--size=8M",
        "--verify=crc32c",
    ];
    let sock = unix.sock.display().to_string();
    let cd = certs.path().display().to_string();
    // Over the Unix socket, the certificate checked for the name asked for.
    let uri = format!(
        "nbds+unix:///?socket={sock}&tls-certificates={cd}&tls-verify-peer=true&tls-hostname=localhost"
    );
    let r = nbd_job(&flexio_bin(), &uri, &job, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = json_of(&r.stdout);
    assert_eq!(io(&j, "write").0, 8 << 20);
    assert_eq!(io(&j, "read").0, 8 << 20, "verified read-back over TLS");
    // No size: the export's, read over TLS.
    let r = nbd_job(&flexio_bin(), &uri, &["--rw=read", "--bs=1m"], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(io(&json_of(&r.stdout), "read"), (32 << 20, 32));
    // The plain protocol at a server that requires TLS: told to use nbds.
    let r = nbd_job(
        &flexio_bin(),
        &format!("nbd+unix:///?socket={sock}"),
        &["--rw=read", "--size=1m"],
        &[],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("requires TLS") && r.stderr.contains("nbds://"),
        "{}",
        r.stderr
    );
    // A CA that did not sign the server's certificate.
    let rogue = cert_dir(pki.path(), "rogue");
    let r = nbd_job(
        &flexio_bin(),
        &format!(
            "nbds+unix:///?socket={sock}&tls-certificates={}&tls-verify-peer=true",
            rogue.path().display()
        ),
        &["--rw=read", "--size=1m"],
        &[],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("not signed by a trusted CA"),
        "{}",
        r.stderr
    );
    // ...unless the peer is not checked (libnbd's default over a Unix socket).
    let r = nbd_job(
        &flexio_bin(),
        &format!(
            "nbds+unix:///?socket={sock}&tls-certificates={}",
            rogue.path().display()
        ),
        &["--rw=read", "--size=1m"],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A pre-shared key: refused with the reason.
    let r = nbd_job(
        &flexio_bin(),
        &format!("nbds+unix:///?socket={sock}&tls-psk-file=/x"),
        &["--rw=read", "--size=1m"],
        &[],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("not supported by flexio"), "{}", r.stderr);

    // Over TCP: checked by default, for the URI's host (127.0.0.1 is in the certificate).
    drop(unix);
    let port = free_port();
    let Some(_tcp) = nbdkit_tls(certs.path(), Some(port)) else {
        return;
    };
    let uri = format!("nbds://127.0.0.1:{port}/?tls-certificates={cd}");
    let r = nbd_job(&flexio_bin(), &uri, &job, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(io(&json_of(&r.stdout), "read").0, 8 << 20);
    let r = nbd_job(
        &flexio_bin(),
        &format!(
            "nbds://127.0.0.1:{port}/?tls-certificates={}",
            rogue.path().display()
        ),
        &["--rw=read", "--size=1m"],
        &[],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("not signed by a trusted CA"),
        "{}",
        r.stderr
    );
}

#[test]
fn nbds_uris_run_as_in_fio() {
    if !have_tools() {
        return;
    }
    let Some(fio) = fio_bin() else {
        return;
    };
    let pki = pki();
    let certs = cert_dir(pki.path(), "ca");
    let port = free_port();
    let Some(_srv) = nbdkit_tls(certs.path(), Some(port)) else {
        return;
    };
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // fio's libnbd refuses certificate directories named in a URI ("local file access"),
    // and as root it looks in /etc/pki/libnbd, which a test does not touch: the peer is
    // not checked, in both.
    let uri = format!("nbds://127.0.0.1:{port}/?tls-verify-peer=false");
    let job = [
        "--rw=randrw",
        "--bs=16k",
        "--iodepth=8",
        "--size=8M",
        "--verify=crc32c",
    ];
    let rf = nbd_job(&fio, &uri, &job, &[]);
    let rx = nbd_job(&flexio_bin(), &uri, &job, ORACLE_COMPAT);
    assert_eq!(rf.code, 0, "fio: {}", rf.stderr);
    assert_eq!(rx.code, 0, "{}", rx.stderr);
    let (jf, jx) = (json_of(&rf.stdout), json_of(&rx.stdout));
    // The same URI, the same seeds: the same requests, verified in both.
    assert_eq!(io(&jf, "read"), io(&jx, "read"));
    assert_eq!(io(&jf, "write"), io(&jx, "write"));
}
