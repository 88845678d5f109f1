//! The http engine against a small object server the test starts
//! (tests/fixtures/object_server.py, loopback only): WebDAV mode with basic authentication,
//! S3 mode whose AWS Signature Version 4 the server checks, trims as DELETE, data verified
//! on read-back. (The installed fio 3.33 is built without its http engine, so there is no
//! oracle run; the object names and the signature are fio's.) HTTPS and Swift:
//! tests/issue28_tls.rs.

use crate::common;
use common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server(args: &[&str]) -> Option<Server> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/object_server.py"
    );
    let mut child = match Command::new("python3")
        .arg(script)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("SKIP: python3 cannot run the object server: {e}");
            return None;
        }
    };
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().parse().expect("the server prints its port");
    Some(Server { child, port })
}

fn stats(port: u16) -> serde_json::Value {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "GET /__stats HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut r = String::new();
    s.read_to_string(&mut r).unwrap();
    serde_json::from_str(r.split("\r\n\r\n").nth(1).unwrap()).unwrap()
}

fn run(port: u16, args: &[&str]) -> Run {
    let d = tempfile::tempdir().unwrap();
    let host = format!("--http_host=127.0.0.1:{port}");
    let mut a = vec![
        "--name=h",
        "--ioengine=http",
        &host,
        "--filename=/bucket/obj",
    ];
    a.extend_from_slice(args);
    run_bounded(&flexio_bin(), &a, d.path(), &[], 60)
}

fn io(j: &serde_json::Value, d: &str) -> (u64, u64) {
    let x = &j["jobs"][0][d];
    (
        x["io_bytes"].as_u64().unwrap(),
        x["total_ios"].as_u64().unwrap(),
    )
}

#[test]
fn webdav_objects_with_basic_auth() {
    let Some(srv) = server(&["--basic", "u:p"]) else {
        return;
    };
    let job = [
        "--http_user=u",
        "--http_pass=p",
        "--rw=write",
        "--bs=16k",
        "--size=2M",
        "--verify=crc32c",
        "--output-format=json",
    ];
    let r = run(srv.port, &job);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = json_of(&r.stdout);
    assert_eq!(io(&j, "write"), (2 << 20, 128));
    assert_eq!(
        io(&j, "read"),
        (2 << 20, 128),
        "every object read back and verified"
    );
    let s = stats(srv.port);
    assert_eq!(s["PUT"], 128);
    assert_eq!(
        s["objects"], 128,
        "one object per request: <filename>_<offset>_<length>"
    );
    assert_eq!(s["bytes"], 2 << 20);
    assert_eq!(s["bad_auth"], 0);
    // Trims delete the objects.
    let r = run(
        srv.port,
        &[
            "--http_user=u",
            "--http_pass=p",
            "--rw=trim",
            "--bs=16k",
            "--size=2M",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(stats(srv.port)["objects"], 0);
    // Missing objects read as zeros; the wrong password is an I/O error.
    let r = run(
        srv.port,
        &[
            "--http_user=u",
            "--http_pass=p",
            "--rw=read",
            "--bs=16k",
            "--size=64k",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run(
        srv.port,
        &[
            "--http_user=u",
            "--http_pass=x",
            "--rw=write",
            "--bs=16k",
            "--size=64k",
        ],
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("HTTP status code 403"), "{}", r.stderr);
}

#[test]
fn s3_requests_carry_valid_signatures() {
    let Some(srv) = server(&["--s3", "AKID:s3cr3t:eu-west-1"]) else {
        return;
    };
    let s3 = [
        "--http_mode=s3",
        "--http_s3_keyid=AKID",
        "--http_s3_key=s3cr3t",
        "--http_s3_region=eu-west-1",
    ];
    let mut a = s3.to_vec();
    a.extend_from_slice(&[
        "--rw=randrw",
        "--bs=8k",
        "--size=1M",
        "--verify=crc32c",
        "--output-format=json",
    ]);
    let r = run(srv.port, &a);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = json_of(&r.stdout);
    assert_eq!(j["jobs"][0]["error"], 0);
    assert!(io(&j, "write").0 > 0);
    let s = stats(srv.port);
    assert_eq!(s["bad_auth"], 0, "the server accepted every signature");
    assert!(s["PUT"].as_u64().unwrap() > 0 && s["GET"].as_u64().unwrap() > 0);
    // A wrong secret is refused by the server.
    let mut a = s3.to_vec();
    a[2] = "--http_s3_key=wrong";
    a.extend_from_slice(&["--rw=write", "--bs=8k", "--size=16k"]);
    let r = run(srv.port, &a);
    assert_eq!(r.code, 1);
    assert!(stats(srv.port)["bad_auth"].as_u64().unwrap() > 0);
}

/// Server-side encryption with a customer key, a storage class and a session token are
/// sent on S3 requests and signed (the server checks every signed header).
#[test]
fn s3_encryption_storage_class_and_token_are_signed() {
    let Some(srv) = server(&["--s3", "AKID:s3cr3t:eu-west-1"]) else {
        return;
    };
    let key = "0123456789abcdef0123456789abcdef";
    let r = run(
        srv.port,
        &[
            "--http_mode=s3",
            "--http_s3_keyid=AKID",
            "--http_s3_key=s3cr3t",
            "--http_s3_region=eu-west-1",
            &format!("--http_s3_sse_customer_key={key}"),
            "--http_s3_storage_class=REDUCED_REDUNDANCY",
            "--http_s3_security_token=session-token",
            "--rw=write",
            "--bs=8k",
            "--size=64k",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s = stats(srv.port);
    assert_eq!(
        s["bad_auth"], 0,
        "every signature, over every header, is valid"
    );
    let seen = &s["seen"];
    assert_eq!(seen["PUT x-amz-storage-class"], "REDUCED_REDUNDANCY");
    assert_eq!(seen["PUT x-amz-security-token"], "session-token");
    assert_eq!(
        seen["PUT x-amz-server-side-encryption-customer-algorithm"],
        "AES256"
    );
    // The key base64-encoded, and the base64 of its MD5 (computed independently here).
    assert_eq!(
        seen["PUT x-amz-server-side-encryption-customer-key"],
        "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
    );
    assert_eq!(
        seen["PUT x-amz-server-side-encryption-customer-key-md5"],
        "hRasmdxgYDKV3nvbahU1MA=="
    );
    // Under --compat=3.33 the token (fio 3.41) is unknown.
    let r = run(
        srv.port,
        &[
            "--compat=3.33",
            "--http_s3_security_token=t",
            "--rw=write",
            "--size=8k",
        ],
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("http_s3_security_token"), "{}", r.stderr);
}

/// http_object_mode=range: one object per file, read with Range requests.
#[test]
fn range_mode_reads_byte_ranges_of_one_object() {
    let Some(srv) = server(&["--preload", "bucket/obj:65536"]) else {
        return;
    };
    let r = run(
        srv.port,
        &[
            "--http_object_mode=range",
            "--rw=read",
            "--bs=4k",
            "--size=64k",
            "--output-format=json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(io(&json_of(&r.stdout), "read").0, 65536);
    let s = stats(srv.port);
    assert_eq!(s["missing"], 0, "every read found the object");
    assert!(s["ranges"].as_u64().unwrap() >= 16, "{s}");
    let r = run(
        srv.port,
        &["--http_object_mode=range", "--rw=write", "--size=8k"],
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("http_object_mode=range"), "{}", r.stderr);
}

#[test]
fn what_flexio_cannot_do_is_said() {
    // (https and http_mode=swift: tests/issue28_tls.rs.)
    let r = run(1, &["--rw=write"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("size="), "{}", r.stderr);
}
