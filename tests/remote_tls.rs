//! TLS between flexio clients and servers (docs/multi-host.md, "Security"): certificates
//! made with the openssl command line as a user makes them, checked on both sides; wrong
//! certificates, missing ones and readable keys refused with reasons on both ends; a
//! token standing in for a client certificate; and what crosses the network encrypted.

use crate::common;

use common::certs::*;
use common::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// openssl, or `None` with a visible SKIP (CI installs it and requires it).
/// The names every test certificate is for.
const SAN: &str = "IP:127.0.0.1,DNS:localhost";

fn have_openssl() -> bool {
    let ok = Command::new("openssl")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("FLEXIO_REQUIRE_FIO").is_none(),
            "openssl is required here (apt-get install openssl)"
        );
        eprintln!("SKIP: openssl is not installed");
    }
    ok
}

/// Two CAs; the server's certificate, a client's and an outsider's (signed by the other
/// CA), all under `dir/pki`.
fn pki(dir: &Path) -> PathBuf {
    let p = dir.join("pki");
    std::fs::create_dir_all(&p).unwrap();
    ca(&p, "ca");
    ca(&p, "other");
    cert(&p, "server", "ca", SAN, "serverAuth");
    cert(&p, "client", "ca", SAN, "clientAuth");
    cert(&p, "outsider", "other", SAN, "clientAuth");
    p
}

struct Srv {
    child: std::process::Child,
    port: u16,
    log: PathBuf,
}

impl Drop for Srv {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Srv {
    fn start(dir: &Path, extra: &[String]) -> Srv {
        let port = free_port();
        let log = dir.join(format!("server-{port}.log"));
        let mut args = vec![format!("--server=ip:127.0.0.1,{port}")];
        args.extend(extra.iter().cloned());
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let child = spawn_logged(&flexio_bin(), &a, dir, &log);
        let t = Instant::now();
        while !std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("listening")
        {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "server never listened: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Srv { child, port, log }
    }
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
    /// Wait until the server's log holds `text`.
    fn logged(&self, text: &str) -> String {
        let t = Instant::now();
        loop {
            let l = self.log();
            if l.contains(text) {
                return l;
            }
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "{text:?} not in:\n{l}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn client(dir: &Path, port: u16, args: &[String]) -> Run {
    let mut all = vec![format!("--client=ip:127.0.0.1,{port}")];
    all.extend(args.iter().cloned());
    let a: Vec<&str> = all.iter().map(String::as_str).collect();
    run_bounded(&flexio_bin(), &a, dir, &[], 60)
}

/// `--tls-cert`/`--tls-key` of the certificate `cert` (if any) and `--tls-ca` of the CA
/// `ca`, all under `p`.
fn tls(p: &Path, cert: Option<&str>, ca: &str) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(c) = cert {
        v.push(format!(
            "--tls-cert={}",
            p.join(format!("{c}.pem")).display()
        ));
        v.push(format!(
            "--tls-key={}",
            p.join(format!("{c}.key")).display()
        ));
    }
    v.push(format!(
        "--tls-ca={}",
        p.join(format!("{ca}.pem")).display()
    ));
    v
}

fn sw(p: &Path, pairs: &[(&str, &str)]) -> Vec<String> {
    pairs
        .iter()
        .map(|(k, f)| format!("--{k}={}", p.join(f).display()))
        .collect()
}

/// A TCP relay from a port of its own to `to`, keeping every byte that crosses it.
fn tap(to: u16) -> (u16, Arc<Mutex<Vec<u8>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(a) = c else { return };
            let Ok(b) = TcpStream::connect(("127.0.0.1", to)) else {
                return;
            };
            for (mut from, mut into) in [(a.try_clone().unwrap(), b.try_clone().unwrap()), (b, a)] {
                let seen = s2.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 16384];
                    loop {
                        match from.read(&mut buf) {
                            Ok(0) | Err(_) => {
                                let _ = into.shutdown(std::net::Shutdown::Write);
                                return;
                            }
                            Ok(n) => {
                                seen.lock().unwrap().extend_from_slice(&buf[..n]);
                                if into.write_all(&buf[..n]).is_err() {
                                    return;
                                }
                            }
                        }
                    }
                });
            }
        }
    });
    (port, seen)
}

#[test]
fn certificates_on_both_sides_run_the_job_encrypted() {
    if !have_openssl() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let p = pki(d.path());
    let cli = d.path().join("cli");
    std::fs::create_dir_all(&cli).unwrap();
    std::fs::write(
        cli.join("j.fio"),
        "[a-job-name-to-look-for]\nioengine=null\nsize=4m\n",
    )
    .unwrap();
    let s = Srv::start(d.path(), &tls(&p, Some("server"), "ca"));
    assert!(
        s.log()
            .contains("must authenticate with TLS with a client certificate\n"),
        "{}",
        s.log()
    );
    let (port, seen) = tap(s.port);
    let mut args = tls(&p, Some("client"), "ca");
    args.extend(["j.fio".into(), "--output-format=json".into()]);
    let r = client(&cli, port, &args);
    assert_eq!(r.code, 0, "{}{}\nserver:\n{}", r.stdout, r.stderr, s.log());
    assert!(
        r.stdout
            .contains("\"jobname\" : \"a-job-name-to-look-for\""),
        "{}",
        r.stdout
    );
    // The job went over the wire, but not as text: only the flexio hello is plain.
    let bytes = seen.lock().unwrap().clone();
    assert!(bytes.len() > 10_000, "{} bytes crossed", bytes.len());
    assert!(bytes.starts_with(b"FLXHELO1\x02"));
    let needle = b"a-job-name-to-look-for";
    assert!(
        !bytes.windows(needle.len()).any(|w| w == needle),
        "the job name crossed the network in clear"
    );
    // The same job without TLS does show it (the tap sees what it should).
    let plain = Srv::start(d.path(), &[]);
    let (port2, seen2) = tap(plain.port);
    let r = client(&cli, port2, &["j.fio".into()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let bytes = seen2.lock().unwrap().clone();
    assert!(bytes.windows(needle.len()).any(|w| w == needle));
}

#[test]
fn wrong_or_missing_certificates_are_refused_on_both_sides() {
    if !have_openssl() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let p = pki(d.path());
    std::fs::write(d.path().join("j.fio"), "[j]\nioengine=null\nsize=1m\n").unwrap();
    let s = Srv::start(d.path(), &tls(&p, Some("server"), "ca"));
    let job = || "j.fio".to_string();
    // A client certificate from another CA.
    let mut a = tls(&p, Some("outsider"), "ca");
    a.push(job());
    let r = client(d.path(), s.port, &a);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("the server refused our certificate"),
        "{}",
        r.stderr
    );
    let l = s.logged("refused 127.0.0.1: TLS");
    assert!(l.contains("certificate"), "{l}");
    // No client certificate at all.
    let mut a = sw(&p, &[("tls-ca", "ca.pem")]);
    a.push(job());
    let r = client(d.path(), s.port, &a);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("needs --tls-cert and --tls-key"),
        "{}",
        r.stderr
    );
    // The client does not trust the server's CA.
    let mut a = tls(&p, Some("client"), "other");
    a.push(job());
    let r = client(d.path(), s.port, &a);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("signed by our --tls-ca"), "{}", r.stderr);
    // A token-only client: this server speaks TLS only.
    let tok = d.path().join("token");
    std::fs::write(&tok, "correct horse battery staple\n").unwrap();
    private(&tok);
    let r = client(
        d.path(),
        s.port,
        &[format!("--auth-token-file={}", tok.display()), job()],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("TLS connections only"), "{}", r.stderr);
    // Keys others can read are refused by both ends.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p.join("client.key"), std::fs::Permissions::from_mode(0o640))
            .unwrap();
    }
    let mut a = tls(&p, Some("client"), "ca");
    a.push(job());
    let r = client(d.path(), s.port, &a);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("chmod 600"), "{}", r.stderr);
    let mut a = vec!["--server=ip:127.0.0.1,1".to_string()];
    a.extend(tls(&p, Some("client"), "ca"));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let r = run_bounded(&flexio_bin(), &a, d.path(), &[], 20);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("chmod 600"), "{}", r.stderr);
    // A TLS server that would authenticate no client does not start.
    let a = sw(&p, &[("tls-cert", "server.pem"), ("tls-key", "server.key")]);
    let mut all = vec!["--server=ip:127.0.0.1,1".to_string()];
    all.extend(a);
    let a: Vec<&str> = all.iter().map(String::as_str).collect();
    let r = run_bounded(&flexio_bin(), &a, d.path(), &[], 20);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("must authenticate its clients"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_token_inside_tls_stands_in_for_a_client_certificate() {
    if !have_openssl() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let p = pki(d.path());
    std::fs::write(d.path().join("j.fio"), "[j]\nioengine=null\nsize=1m\n").unwrap();
    let tok = d.path().join("token");
    std::fs::write(&tok, "correct horse battery staple\n").unwrap();
    private(&tok);
    let wrong = d.path().join("wrong");
    std::fs::write(&wrong, "incorrect horse battery staple\n").unwrap();
    private(&wrong);
    let mut a = sw(&p, &[("tls-cert", "server.pem"), ("tls-key", "server.key")]);
    a.push(format!("--auth-token-file={}", tok.display()));
    let s = Srv::start(d.path(), &a);
    assert!(s.log().contains("TLS and the token"), "{}", s.log());
    let ca = sw(&p, &[("tls-ca", "ca.pem")]);
    let with = |t: &Path| {
        let mut a = ca.clone();
        a.push(format!("--auth-token-file={}", t.display()));
        a.push("j.fio".into());
        a
    };
    let r = client(d.path(), s.port, &with(&tok));
    assert_eq!(r.code, 0, "{}{}\n{}", r.stdout, r.stderr, s.log());
    let r = client(d.path(), s.port, &with(&wrong));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("wrong token"), "{}", r.stderr);
    let mut a = ca.clone();
    a.push("j.fio".into());
    let r = client(d.path(), s.port, &a);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("--auth-token-file"), "{}", r.stderr);
    s.logged("refused 127.0.0.1");
}
