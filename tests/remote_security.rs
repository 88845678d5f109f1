//! The server's security model (docs/multi-host.md, "Security"): what remote jobs may do,
//! who may connect, and a server that survives junk connections and vanished clients.

use crate::common;

use common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A flexio server on 127.0.0.1, killed when dropped.
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
    fn start(dir: &Path, extra: &[&str]) -> Srv {
        let port = free_port();
        let log = dir.join(format!("server-{port}.log"));
        let mut args = vec![format!("--server=ip:127.0.0.1,{port}")];
        args.extend(extra.iter().map(|s| s.to_string()));
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let child = spawn_logged(&flexio_bin(), &a, dir, &log);
        let t = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "server never listened: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Srv { child, port, log }
    }
    fn client(&self) -> String {
        format!("--client=ip:127.0.0.1,{}", self.port)
    }
    /// A flexio client of this server, run in `dir` with `args` after `--client`.
    fn run(&self, dir: &Path, args: &[&str]) -> Run {
        let mut all = vec![self.client()];
        all.extend(args.iter().map(|a| a.to_string()));
        let a: Vec<&str> = all.iter().map(String::as_str).collect();
        run_bounded(&flexio_bin(), &a, dir, &[], 60)
    }
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
    fn threads(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/task", self.child.id()))
            .map(|d| d.count())
            .unwrap_or(0)
    }
    fn rss_kib(&self) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        s.lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap()
    }
}

fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let srv = d.path().join("srv");
    let cli = d.path().join("cli");
    std::fs::create_dir_all(&srv).unwrap();
    std::fs::create_dir_all(&cli).unwrap();
    (d, srv, cli)
}

fn private(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

#[test]
fn the_default_server_listens_on_loopback_only_and_says_so() {
    let d = tempfile::tempdir().unwrap();
    let port = free_port();
    let log = d.path().join("s.log");
    let mut child = spawn_logged(
        &flexio_bin(),
        &[&format!("--server=,{port}")],
        d.path(),
        &log,
    );
    let t = Instant::now();
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("listening")
    {
        assert!(t.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(20));
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        text.contains(&format!(
            "fio: server listening on 127.0.0.1,{port} (this host only;"
        )),
        "{text}"
    );
    assert!(text.contains("may not run programs"), "{text}");
}

#[test]
fn remote_jobs_that_run_programs_or_leave_the_root_are_refused_with_reasons() {
    let (_d, srv_dir, cli) = dirs();
    let victim = srv_dir.join("created-by-exec");
    std::fs::write(
        cli.join("exec.fio"),
        format!(
            "[x]\nioengine=exec\nprogram=/usr/bin/touch\narguments={}\n",
            victim.display()
        ),
    )
    .unwrap();
    std::fs::write(
        cli.join("outside.fio"),
        "[o]\nioengine=psync\nrw=read\nbs=4k\nsize=4k\nfilename=/etc/hostname\n",
    )
    .unwrap();
    std::fs::write(
        cli.join("log.fio"),
        "[l]\nioengine=null\nsize=1m\nwrite_bw_log=../escaped\n",
    )
    .unwrap();
    std::fs::write(
        cli.join("dev.fio"),
        "[n]\nioengine=psync\nrw=write\nbs=4k\nsize=64k\nfilename=/dev/null\n",
    )
    .unwrap();
    std::fs::write(
        cli.join("inside.fio"),
        "[i]\nioengine=psync\nrw=write\nbs=4k\nsize=64k\nfilename=data\n",
    )
    .unwrap();
    let s = Srv::start(&srv_dir, &[]);
    let cases = [
        ("exec.fio", "ioengine=exec: runs a program, which this server does not allow (start it with --allow-exec)"),
        ("outside.fio", "file /etc/hostname is outside the server root"),
        ("log.fio", "write_bw_log: ../escaped is outside the server root"),
        ("dev.fio", "/dev/null is a device that the server does not allow (start it with --allow-device=/dev/null)"),
    ];
    for (job, why) in cases {
        let r = s.run(&cli, &[job]);
        assert_ne!(r.code, 0, "{job}: {}", r.stdout);
        assert!(
            r.stdout.contains(why) || r.stderr.contains(why),
            "{job}: no {why:?} in\n{}\n{}",
            r.stdout,
            r.stderr
        );
    }
    assert!(!victim.exists(), "the refused exec job ran");
    assert!(!srv_dir.join("../escaped_bw.1.log").exists());
    // A job file the server would read for the client, outside the root.
    let r = s.run(&cli, &["--remote-config=/etc/hostname"]);
    assert_ne!(r.code, 0);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(all.contains("outside the server root"), "{all}");
    // Inside the root it runs.
    let r = s.run(&cli, &["inside.fio"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        std::fs::metadata(srv_dir.join("data")).unwrap().len(),
        64 << 10
    );
    drop(s);
    // With --allow-exec and --allow-device they run.
    let s = Srv::start(&srv_dir, &["--allow-exec", "--allow-device=/dev/null"]);
    for job in ["exec.fio", "dev.fio"] {
        let r = s.run(&cli, &[job]);
        assert_eq!(r.code, 0, "{job}: {}{}\n{}", r.stdout, r.stderr, s.log());
    }
    assert!(victim.exists(), "the allowed exec job did not run");
}

#[test]
fn tokens_authenticate_both_ends() {
    let (_d, srv_dir, cli) = dirs();
    private(&srv_dir.join("token"), "correct horse battery staple\n");
    private(&cli.join("right"), "correct horse battery staple\n");
    private(&cli.join("wrong"), "incorrect horse battery staple\n");
    std::fs::write(cli.join("j.fio"), "[j]\nioengine=null\nsize=4m\n").unwrap();
    let s = Srv::start(&srv_dir, &["--auth-token-file=token"]);
    let r = s.run(
        &cli,
        &["--auth-token-file=right", "j.fio", "--output-format=json"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("\"jobname\" : \"j\""), "{}", r.stdout);
    let r = s.run(&cli, &["--auth-token-file=wrong", "j.fio"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("wrong token"), "{}", r.stderr);
    let t = Instant::now();
    while !s.log().contains("refused 127.0.0.1") {
        assert!(t.elapsed() < Duration::from_secs(5), "{}", s.log());
        std::thread::sleep(Duration::from_millis(20));
    }
    // A token others can read is refused by both ends.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(cli.join("right"), std::fs::Permissions::from_mode(0o644))
            .unwrap();
    }
    let r = s.run(&cli, &["--auth-token-file=right", "j.fio"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("chmod 600"), "{}", r.stderr);
    let r = run_bounded(
        &flexio_bin(),
        &["--server=ip:127.0.0.1,1", "--auth-token-file=right"],
        &cli,
        &[],
        20,
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("chmod 600"), "{}", r.stderr);
}

/// Clients from another address than loopback: a network namespace of the test's own,
/// with 10.77.0.1 on its loopback interface (connections between two addresses of one
/// host come from that address, not from 127.0.0.1).
#[test]
fn clients_from_other_hosts_need_a_token_or_allow_fio_clients() {
    let Some(fio) = fio_bin() else {
        eprintln!("SKIP: fio 3.33 is not installed");
        return;
    };
    let probe = std::process::Command::new("unshare")
        .args([
            "-n",
            "sh",
            "-c",
            "ip link set lo up && ip addr add 10.77.0.1/32 dev lo",
        ])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        assert!(
            std::env::var_os("FLEXIO_REQUIRE_FS").is_none(),
            "cannot make a network namespace (unshare -n, ip)"
        );
        eprintln!("SKIP: cannot make a network namespace (unshare -n and ip, as root)");
        return;
    }
    let (_d, srv_dir, cli) = dirs();
    private(&srv_dir.join("token"), "correct horse battery staple\n");
    private(&cli.join("token"), "correct horse battery staple\n");
    std::fs::write(cli.join("j.fio"), "[j]\nioengine=null\nsize=4m\n").unwrap();
    std::fs::write(
        cli.join("exec.fio"),
        format!(
            "[x]\nioengine=exec\nprogram=/usr/bin/touch\narguments={}\n",
            srv_dir.join("created").display()
        ),
    )
    .unwrap();
    let script = format!(
        r#"set -u
ip link set lo up && ip addr add 10.77.0.1/32 dev lo || exit 99
server() {{
  ( cd {srv} && exec {flexio} --server=10.77.0.1,8765 "$@" > server.log 2>&1 ) &
  pid=$!
  for i in $(seq 100); do grep -q listening {srv}/server.log 2>/dev/null && break; sleep 0.05; done
}}
stop() {{ kill $pid; wait $pid 2>/dev/null; }}
cd {cli}
server
echo "== A fio"; {fio} --client=10.77.0.1,8765 j.fio 2>&1; echo "rc=$?"
echo "== A flexio"; {flexio} --client=10.77.0.1,8765 j.fio 2>&1; echo "rc=$?"
stop
server --auth-token-file=token
echo "== B fio"; {fio} --client=10.77.0.1,8765 j.fio 2>&1; echo "rc=$?"
echo "== B token"; {flexio} --client=10.77.0.1,8765 --auth-token-file=token j.fio 2>&1; echo "rc=$?"
stop
server --allow-fio-clients
echo "== C fio"; {fio} --client=10.77.0.1,8765 j.fio 2>&1; echo "rc=$?"
echo "== C exec"; {fio} --client=10.77.0.1,8765 exec.fio 2>&1; echo "rc=$?"
stop
echo "== end"
"#,
        srv = srv_dir.display(),
        cli = cli.display(),
        flexio = flexio_bin().display(),
        fio = fio.display(),
    );
    std::fs::write(cli.join("ns.sh"), script).unwrap();
    let r = run_bounded(Path::new("unshare"), &["-n", "sh", "ns.sh"], &cli, &[], 240);
    let out = r.stdout;
    eprintln!("{out}");
    let part = |name: &str| -> String {
        let start = out
            .find(&format!("== {name}\n"))
            .unwrap_or_else(|| panic!("{out}"));
        let rest = &out[start + 4 + name.len()..];
        rest[..rest.find("== ").unwrap_or(rest.len())].to_string()
    };
    let a = part("A fio");
    assert!(
        a.contains("refusing a client from 10.77.0.1"),
        "fio from another host was not refused:\n{a}"
    );
    let a = part("A flexio");
    assert!(
        a.contains("refusing a client from 10.77.0.1") && a.contains("rc=1"),
        "{a}"
    );
    let b = part("B fio");
    assert!(b.contains("connect with flexio --auth-token-file"), "{b}");
    let b = part("B token");
    assert!(b.contains("rc=0") && b.contains("j: (groupid=0"), "{b}");
    let c = part("C fio");
    assert!(c.contains("rc=0") && c.contains("j: (groupid=0"), "{c}");
    let c = part("C exec");
    assert!(c.contains("runs a program"), "{c}");
    assert!(!srv_dir.join("created").exists());
}

#[test]
fn junk_connections_do_not_keep_a_real_client_out() {
    let (_d, srv_dir, cli) = dirs();
    std::fs::write(cli.join("j.fio"), "[j]\nioengine=null\nsize=64m\n").unwrap();
    let s = Srv::start(&srv_dir, &[]);
    // Settle, then measure.
    let r = s.run(&cli, &["j.fio"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let rss0 = s.rss_kib();
    let mut junk = Vec::new();
    for k in 0..64u32 {
        let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        match k % 4 {
            // Nothing at all.
            0 => {}
            // Garbage.
            1 => {
                let _ = c.write_all(&[0xffu8; 4096]);
            }
            // Something like a frame header, then silence.
            2 => {
                let mut h = vec![0u8; 48];
                h[0] = 0;
                h[1] = 0x60;
                h[2..4].copy_from_slice(&8u16.to_be_bytes());
                h[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
                let _ = c.write_all(&h);
            }
            // Half a hello.
            _ => {
                let _ = c.write_all(b"FLXHELO1\x01abc");
            }
        }
        junk.push(c);
    }
    let t = Instant::now();
    let r = s.run(&cli, &["j.fio"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    let rss1 = s.rss_kib();
    assert!(
        rss1 < rss0 + 32 * 1024,
        "the server grew from {rss0} KiB to {rss1} KiB"
    );
    // Junk that sent bytes is closed by the server; idle junk times out.
    let mut closed = 0;
    for c in &mut junk {
        let _ = c.set_read_timeout(Some(Duration::from_millis(200)));
        let mut b = [0u8; 256];
        loop {
            match c.read(&mut b) {
                Ok(0) => {
                    closed += 1;
                    break;
                }
                Ok(_) => continue,
                Err(_) => break,
            }
        }
    }
    assert!(closed >= 16, "only {closed} junk connections closed");
}

#[test]
fn a_killed_client_leaves_no_job_running() {
    let (_d, srv_dir, cli) = dirs();
    std::fs::write(
        cli.join("long.fio"),
        "[long]\nioengine=psync\nrw=randread\nbs=4k\nsize=1m\nfilename=data\ntime_based\nruntime=120\nnumjobs=4\n",
    )
    .unwrap();
    std::fs::write(cli.join("j.fio"), "[j]\nioengine=null\nsize=4m\n").unwrap();
    let s = Srv::start(&srv_dir, &[]);
    let idle = s.threads();
    let mut child = spawn_flexio(&[&s.client(), "long.fio"], &cli, &[]);
    let t = Instant::now();
    while s.threads() < idle + 4 {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    let _ = child.wait();
    let t = Instant::now();
    while s.threads() > idle {
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "{} threads still running on the server ({} when idle)",
            s.threads(),
            idle
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // And the run slot is free again.
    let r = s.run(&cli, &["j.fio"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

#[test]
fn one_run_at_a_time() {
    let (_d, srv_dir, cli) = dirs();
    std::fs::write(
        cli.join("long.fio"),
        "[long]\nioengine=null\nsize=1g\ntime_based\nruntime=8\n",
    )
    .unwrap();
    std::fs::write(cli.join("j.fio"), "[j]\nioengine=null\nsize=4m\n").unwrap();
    let s = Srv::start(&srv_dir, &[]);
    let first = spawn_flexio(&[&s.client(), "long.fio"], &cli, &[]);
    std::thread::sleep(Duration::from_millis(1500));
    let r = s.run(&cli, &["j.fio"]);
    assert_eq!(r.code, 1);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(all.contains("another client's run is in progress"), "{all}");
    let r = collect(first);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}
