//! flexio's codec as a client of a live `fio --server` (fio 3.33): probe, send a job line
//! and a job, run it, and decode every message fio sends until it quits, checking that
//! the decoded numbers match the job and that re-encoding gives fio's exact bytes.

mod common;

use common::{fio, free_port, wait_for_path, Guard};
use flexio_remote::convert::job_result_of;
use flexio_remote::frame::{Header, HEADER_LEN};
use flexio_remote::iolog::LOG_BW;
use flexio_remote::msg::{Job, JobLine, Probe, CLIENT_TYPE_CLI, PROBE_FLAG_ZLIB};
use flexio_remote::ts::{KIND_CLAT, KIND_LAT};
use flexio_remote::{Conn, Error, Message, Opcode, RawMessage, Sender};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::{Duration, Instant};

const JOB: &str = "\
[global]
ioengine=null
bs=4k

[fixed]
rw=read
size=4m
write_lat_log=lat
log_offset=1

[timed]
rw=randwrite
size=1g
time_based
runtime=2
rate_iops=500
write_bw_log=bw
log_avg_msec=500
";

fn start_server(dir: &std::path::Path) -> Option<(Guard, std::path::PathBuf)> {
    let fio = fio()?;
    let sock = dir.join("fio.sock");
    let server = Guard::spawn(
        Command::new(fio)
            .arg(format!("--server=sock:{}", sock.display()))
            .current_dir(dir),
    );
    assert!(
        wait_for_path(&sock, Duration::from_secs(10)),
        "fio --server did not create its socket"
    );
    Some((server, sock))
}

/// Connect to the server's socket. fio binds the socket path before it listens, so a
/// connection refused in between is retried for a while.
fn connect(sock: &std::path::Path) -> UnixStream {
    let deadline = Instant::now() + Duration::from_secs(10);
    let s = loop {
        match UnixStream::connect(sock) {
            Ok(s) => break s,
            Err(e)
                if e.kind() == std::io::ErrorKind::ConnectionRefused
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("connect to fio --server: {e}"),
        }
    };
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(15))).unwrap();
    s
}

/// Re-encoding a decoded message gives the payload fio sent, byte for byte.
fn assert_same_bytes(raw: &RawMessage, m: &Message) {
    if matches!(m, Message::IoLog(_)) {
        return; // recompressed differently; the samples are checked instead
    }
    assert_eq!(
        m.payload(),
        raw.payload,
        "re-encoded {:?} differs from fio's bytes",
        raw.op()
    );
}

#[test]
fn codec_drives_a_live_fio_server() {
    let dir = tempfile::tempdir().unwrap();
    let Some((server, sock)) = start_server(dir.path()) else {
        return;
    };
    let mut c = Conn::new(connect(&sock), Sender::Client);
    let probe_tag = 0x55fb_c8f6_bb50u64;
    c.send(
        &Message::Probe(Probe {
            flags: PROBE_FLAG_ZLIB,
            server: "sock".into(),
        }),
        probe_tag,
    )
    .unwrap();
    c.send(
        &Message::JobLine(JobLine {
            client_type: CLIENT_TYPE_CLI as u16,
            args: vec!["fio".into(), "--output-format=normal".into()],
        }),
        0,
    )
    .unwrap();
    c.send(
        &Message::Job(Job {
            client_type: CLIENT_TYPE_CLI,
            text: JOB.into(),
        }),
        0,
    )
    .unwrap();
    c.send(&Message::Run, 0).unwrap();

    let deadline = Instant::now() + Duration::from_secs(60);
    let eta_tag = 0x7f00_dead_beef_0001u64;
    let mut eta_sent = false;
    let mut got: Vec<(u64, Message)> = Vec::new();
    loop {
        assert!(Instant::now() < deadline, "fio did not finish in 60 s");
        let raw = c.recv_raw().expect("a message from fio");
        let m = Message::decode(&raw, Sender::Server)
            .unwrap_or_else(|e| panic!("decode {:?}: {e}", raw.op()));
        assert_same_bytes(&raw, &m);
        if m == Message::ServerStart && !eta_sent {
            c.send(&Message::SendEta, eta_tag).unwrap();
            eta_sent = true;
        }
        let quit = m == Message::Quit;
        got.push((raw.tag, m));
        if quit {
            break;
        }
    }
    drop(c);
    drop(server);
    let ops: Vec<Opcode> = got.iter().map(|(_, m)| m.opcode()).collect();

    // Probe reply first, echoing the tag.
    match &got[0] {
        (t, Message::ProbeReply(p)) => {
            assert_eq!(*t, probe_tag);
            assert_eq!(p.fio_version, "fio-3.33");
            assert_eq!(p.flags & 1, 1, "zlib negotiated");
            assert_eq!(p.bpp, 8);
            assert!(p.cpus >= 1 && !p.hostname.is_empty());
        }
        m => panic!("first message {m:?}"),
    }
    // START after JOBLINE (0,0), then cumulative after the job.
    let starts: Vec<_> = got
        .iter()
        .filter_map(|(_, m)| match m {
            Message::Start(s) => Some((s.jobs, s.stat_outputs)),
            _ => None,
        })
        .collect();
    assert_eq!(starts, [(0, 0), (2, 2)]);
    // ADD_JOB per job definition, with the options where the pack puts them.
    let adds: Vec<_> = got
        .iter()
        .filter_map(|(_, m)| match m {
            Message::AddJob(a) => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(adds.len(), 2);
    assert_eq!(adds[0].thread_number, 1);
    assert_eq!(adds[0].pack.str("name"), "fixed");
    assert_eq!(adds[0].pack.str("ioengine"), "null");
    assert_eq!(adds[0].pack.u64("size"), 4 << 20);
    assert_eq!(adds[0].pack.u32("iodepth"), 1);
    assert_eq!(adds[1].pack.str("name"), "timed");
    assert_eq!(adds[1].pack.u32("time_based"), 1);
    match adds[1].pack.get("rate_iops").unwrap() {
        flexio_remote::pack::Value::U32s(v) => assert_eq!(v[1], 500),
        v => panic!("{v:?}"),
    }
    match adds[0].pack.get("bs").unwrap() {
        flexio_remote::pack::Value::U64s(v) => assert_eq!(v, [4096, 4096, 4096]),
        v => panic!("{v:?}"),
    }
    // Log text.
    let text: String = got
        .iter()
        .filter_map(|(_, m)| match m {
            Message::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect();
    assert!(text.contains("fixed: (g=0): rw=read"), "{text}");
    assert!(text.contains("Starting 2 processes"), "{text}");
    // The ETA answered our tag.
    let eta = got
        .iter()
        .find(|(_, m)| matches!(m, Message::Eta(_)))
        .expect("an ETA reply");
    assert_eq!(eta.0, eta_tag);
    // Job options: the global ones, then each report's before its TS.
    let opts: Vec<_> = got
        .iter()
        .filter_map(|(_, m)| match m {
            Message::JobOpt(o) => Some((o.global, o.groupid, o.name.clone(), o.value.clone())),
            _ => None,
        })
        .collect();
    assert!(
        opts.contains(&(true, 0, "ioengine".into(), "null".into())),
        "{opts:?}"
    );
    assert!(
        opts.contains(&(false, 0, "rw".into(), "read".into())),
        "{opts:?}"
    );
    assert!(
        opts.contains(&(false, 1, "rw".into(), "randwrite".into())),
        "{opts:?}"
    );
    // Thread stats.
    let ts: Vec<_> = got
        .iter()
        .filter_map(|(_, m)| match m {
            Message::Ts(t) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(ts.len(), 2);
    let fixed = ts.iter().find(|t| t.name == "fixed").expect("fixed TS");
    assert_eq!(fixed.io_bytes, [4 << 20, 0, 0]);
    assert_eq!(fixed.total_io_u, [1024, 0, 0, 0]);
    assert_eq!(fixed.clat_stat[0].samples, 1024);
    assert_eq!(fixed.plat[KIND_CLAT][0].iter().sum::<u64>(), 1024);
    assert_eq!(fixed.plat[KIND_LAT][0].iter().sum::<u64>(), 0);
    assert!(fixed.clat_stat[0].min <= fixed.clat_stat[0].max);
    assert_eq!(fixed.members, 1);
    assert_eq!(fixed.thread_number, 1);
    assert_eq!(fixed.sig_figs, 4);
    assert_eq!(fixed.kb_base, 1024);
    assert_eq!(fixed.percentiles().len(), 17);
    let timed = ts.iter().find(|t| t.name == "timed").expect("timed TS");
    let ios = timed.total_io_u[1];
    assert!(
        (800..=1200).contains(&ios),
        "{ios} writes at 500 IOPS for 2 s"
    );
    assert_eq!(timed.io_bytes[1], ios * 4096);
    assert!(
        (1800..=2300).contains(&timed.runtime[1]),
        "{:?}",
        timed.runtime
    );
    assert_eq!(timed.rs.iobytes, [4 << 20, ios * 4096, 0]);
    // flexio's view of fio's numbers.
    let j = job_result_of(fixed);
    assert_eq!(j.stats.dirs[0].clat.samples, 1024);
    assert_eq!(j.stats.dirs[0].clat_hist.total(), 1024);
    assert_eq!(j.stats.dirs[0].clat.min, fixed.clat_stat[0].min);
    let mean = j.stats.dirs[0].clat.mean();
    assert!((mean - fixed.clat_stat[0].mean).abs() <= 1e-9 * mean.max(1.0));
    // Group stats.
    let gs: Vec<_> = got
        .iter()
        .filter_map(|(_, m)| match m {
            Message::Gs(g) => Some(g),
            _ => None,
        })
        .collect();
    assert_eq!(gs.len(), 1);
    assert_eq!(gs[0].iobytes, [4 << 20, ios * 4096, 0]);
    assert_eq!(gs[0].min_run[2], u64::MAX, "unused direction");
    // Logs: the latency logs carry offsets (40-byte records), the bw log averages.
    let logs: Vec<_> = got
        .iter()
        .filter_map(|(_, m)| match m {
            Message::IoLog(l) => Some(l),
            _ => None,
        })
        .collect();
    assert!(logs.len() >= 3, "{} logs", logs.len());
    let lat = logs
        .iter()
        .find(|l| l.name.starts_with("lat_clat") && !l.samples.is_empty())
        .expect("a clat log with samples");
    assert_eq!(lat.compressed, 1);
    assert!(lat.samples.len() as u64 <= lat.nr_samples && lat.nr_samples == 1024);
    for s in &lat.samples {
        let off = s.offset.expect("log_offset=1 gives offsets");
        assert!(off % 4096 == 0 && off < 4 << 20, "offset {off}");
        assert_eq!((s.ddir, s.bs), (0, 4096));
    }
    let bw = logs
        .iter()
        .find(|l| l.log_type == LOG_BW)
        .expect("the bw log");
    assert!(bw.name.starts_with("bw_bw"), "{}", bw.name);
    assert!(bw.samples.iter().all(|s| s.ddir == 1 && s.value > 0));
    // The end: STOP 0,0 then QUIT.
    let n = ops.len();
    assert_eq!(&ops[n - 2..], [Opcode::Stop, Opcode::Quit]);
    assert!(matches!(got[n - 2].1, Message::Stop(s) if s.error == 0 && s.signal == 0));
}

/// Send raw bytes and collect what fio answers until it closes.
fn exchange(sock: &std::path::Path, bytes: &[u8]) -> Vec<RawMessage> {
    let mut s = connect(sock);
    s.write_all(bytes).unwrap();
    let mut out = Vec::new();
    loop {
        match flexio_remote::frame::read_message(&mut s) {
            Ok(m) => out.push(m),
            Err(Error::Closed) => break,
            Err(e) => panic!("reading fio's answer: {e}"),
        }
    }
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    out
}

#[test]
fn live_fio_server_rejects_bad_frames_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    let Some((server, sock)) = start_server(dir.path()) else {
        return;
    };
    let text = |msgs: &[RawMessage]| -> String {
        msgs.iter()
            .filter_map(|m| match Message::decode(m, Sender::Server) {
                Ok(Message::Text(t)) => Some(t.text),
                _ => None,
            })
            .collect()
    };
    // Another protocol version (header CRC valid): fio names the version and closes.
    let mut h = Header::new(Opcode::Run as u16, 0, 0, &[]);
    h.version = 99;
    h.cmd_crc = flexio_remote::crc::crc16(&h.to_bytes()[..20]);
    let answer = exchange(&sock, &h.to_bytes());
    let t = text(&answer);
    assert!(t.contains("bad server cmd version 99"), "{t:?}");
    // And flexio's decoder names both versions for the same frame.
    let e = Header::parse(&h.to_bytes()).unwrap_err();
    assert!(e.to_string().contains("version 99") && e.to_string().contains("version 97"));
    // A corrupted header CRC.
    let mut b = Header::new(Opcode::Run as u16, 0, 0, &[]).to_bytes();
    b[20] ^= 0xff;
    let t = text(&exchange(&sock, &b));
    assert!(t.contains("bad crc"), "{t:?}");
    // A payload CRC mismatch.
    let mut f = RawMessage::new(Opcode::Job, 0, vec![1, 0, 0, 0, 1, 0, 0, 0, 0]).encode();
    f[HEADER_LEN] ^= 1;
    let answer = exchange(&sock, &f);
    assert!(!text(&answer).is_empty(), "fio says why it closes");
    drop(server);
}

#[test]
fn probe_over_tcp_loopback() {
    let Some(fio) = fio() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // The free port can be taken between the probe and fio's bind: try a few.
    for attempt in 0..3 {
        let port = free_port();
        let server = Guard::spawn(
            Command::new(&fio)
                .arg(format!("--server=ip:127.0.0.1,{port}"))
                .current_dir(dir.path()),
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        let stream = loop {
            match std::net::TcpStream::connect(("127.0.0.1", port)) {
                Ok(s) => break Some(s),
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                Err(_) => break None,
            }
        };
        let Some(stream) = stream else {
            let out = server.stop();
            eprintln!(
                "attempt {attempt}: fio did not listen on {port}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            continue;
        };
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut c = Conn::new(stream, Sender::Client);
        c.send(
            &Message::Probe(Probe {
                flags: 0,
                server: "127.0.0.1".into(),
            }),
            u64::MAX,
        )
        .unwrap();
        let (tag, m) = c.recv().unwrap();
        assert_eq!(tag, u64::MAX);
        match m {
            Message::ProbeReply(p) => assert_eq!(p.flags & 1, 0, "no zlib unless offered"),
            m => panic!("{m:?}"),
        }
        // An empty server still answers SEND_ETA, with 168 zero bytes.
        c.send(&Message::SendEta, 9).unwrap();
        let raw = c.recv_raw().unwrap();
        assert_eq!((raw.op().unwrap(), raw.tag), (Opcode::Eta, 9));
        assert!(matches!(
            Message::decode(&raw, Sender::Server),
            Ok(Message::Eta(_))
        ));
        drop(server);
        return;
    }
    panic!("fio --server could not bind a free loopback port in 3 attempts");
}
