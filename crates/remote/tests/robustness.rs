//! Malformed input of every kind gives an error, never a panic: valid messages of every
//! layout, truncated, extended and with random bytes changed, through the typed decoders
//! (both directions) and the incremental frame decoder.

use flexio_remote::convert::thread_stat_of;
use flexio_remote::frame::{encode_message, Decoder};
use flexio_remote::iolog::{IoLog, IoSample, LOG_LAT, XMIT_COMPRESSED};
use flexio_remote::msg::*;
use flexio_remote::pack::{AddJob, OptionsPack};
use flexio_remote::ts::{GroupStats, ThreadStat, SS_DATA};
use flexio_remote::vstate::{RandState, StateV3, VTriggerReply};
use flexio_remote::{Message, Opcode, RawMessage, Sender};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn samples() -> Vec<RawMessage> {
    let mut ts = ThreadStat {
        ss_dur: 3,
        ss_state: SS_DATA,
        ss_iops: vec![1, 2, 3],
        ss_bw: vec![4, 5, 6],
        ..Default::default()
    };
    ts.clat_prio[1].push(flexio_remote::ts::ClatPrio {
        hist: flexio_remote::ts::zero_plat(),
        stat: Default::default(),
        ioprio: 0x2000,
    });
    let log = IoLog {
        nr_samples: 50,
        thread_number: 1,
        log_type: LOG_LAT,
        compressed: XMIT_COMPRESSED,
        log_offset: 0,
        log_prio: 0,
        hist_coarseness: 0,
        name: "lat.log".into(),
        samples: (0..50)
            .map(|i| IoSample {
                time: i,
                value: i * 7,
                ddir: 0,
                prio_logged: false,
                priority: 0,
                bs: 4096,
                offset: Some(i * 4096),
                hist: None,
            })
            .collect(),
        incomplete: false,
    };
    let msgs = [
        Message::Probe(Probe {
            flags: 1,
            server: "sock".into(),
        }),
        Message::ProbeReply(ProbeReply {
            hostname: "h".into(),
            bigendian: 0,
            fio_version: "fio-3.33".into(),
            os: 1,
            arch: 1,
            bpp: 8,
            cpus: 2,
            flags: 1,
        }),
        Message::Job(Job {
            client_type: 1,
            text: "[a]\nrw=read\n".into(),
        }),
        Message::JobLine(JobLine {
            client_type: 1,
            args: vec!["fio".into(), "--eta=never".into()],
        }),
        Message::LoadFile(LoadFile {
            client_type: 1,
            path: "/j.fio".into(),
        }),
        Message::Text(Text {
            level: 2,
            log_sec: 1,
            log_usec: 2,
            text: "hello\n".into(),
        }),
        Message::Ts(Box::new(ts)),
        Message::Gs(GroupStats::default()),
        Message::Eta(Eta {
            run_str: "R(1)".into(),
            ..Default::default()
        }),
        Message::Du(DiskUtil::default()),
        Message::AddJob(Box::new(AddJob {
            thread_number: 1,
            groupid: 0,
            pack: OptionsPack::default(),
        })),
        Message::IoLog(log),
        Message::VTriggerReply(VTriggerReply {
            threads: vec![StateV3 {
                depth: 2,
                nofiles: 1,
                numberio: 3,
                index: 0,
                rand: RandState::Taus258([1; 5]),
                name: "j".into(),
                comps: vec![(0, 4096)],
            }],
        }),
        Message::JobOpt(JobOpt::new(true, 0, "bs", "4k")),
        Message::Start(Start {
            jobs: 1,
            stat_outputs: 1,
        }),
    ];
    msgs.iter()
        .map(|m| RawMessage::new(m.opcode(), 0, m.payload()))
        .collect()
}

#[test]
fn mutated_messages_never_panic() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let base = samples();
    let mut errors = 0;
    for round in 0..3000 {
        let orig = &base[round % base.len()];
        let mut p = orig.payload.clone();
        match rng.below(4) {
            0 => p.truncate(rng.below(p.len() + 1)),
            1 => p.extend((0..rng.below(64)).map(|_| rng.next() as u8)),
            _ => {
                for _ in 0..1 + rng.below(8) {
                    if p.is_empty() {
                        break;
                    }
                    let i = rng.below(p.len());
                    // Bias towards the count and length fields near the start.
                    let i = if rng.below(2) == 0 {
                        i % 64.min(p.len())
                    } else {
                        i
                    };
                    p[i] = rng.next() as u8;
                }
            }
        }
        let raw = RawMessage {
            opcode: orig.opcode,
            tag: 0,
            payload: p,
        };
        for from in [Sender::Client, Sender::Server] {
            if Message::decode(&raw, from).is_err() {
                errors += 1;
            }
        }
    }
    assert!(errors > 3000, "mutations are caught ({errors} errors)");
}

#[test]
fn mutated_frames_never_panic() {
    let mut rng = Rng(99);
    let ts = thread_stat_of(
        &flexio_stats::JobResult {
            name: "x".into(),
            groupid: 0,
            pid: 1,
            description: None,
            echo: vec![],
            group_reporting: false,
            stats_enabled: true,
            params: flexio_stats::ReportParams {
                kb_base: 1024,
                unit_base: 0,
                sig_figs: 4,
                percentile_list: vec![50.0],
                percentile_precision: 2,
                clat_percentiles: true,
                lat_percentiles: false,
                slat_percentiles: false,
                latency_depth: 1,
                continue_on_error: false,
                unified: Default::default(),
                nostats_engine: false,
                latency_target_ns: 0,
                latency_window_us: 0,
                latency_percentile: 100.0,
            },
            stats: Default::default(),
            steadystate: None,
        },
        1,
        1,
        &GroupStats::default(),
    );
    let mut stream = Vec::new();
    for raw in samples() {
        stream.extend(raw.encode());
    }
    stream.extend(encode_message(
        Opcode::Ts,
        0,
        &flexio_remote::Payload::encode(&ts),
    ));
    for _ in 0..300 {
        let mut s = stream.clone();
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(s.len());
            s[i] ^= 1 << rng.below(8);
        }
        let mut d = Decoder::default();
        let mut i = 0;
        while i < s.len() {
            let n = 1 + rng.below(3000);
            d.push(&s[i..(i + n).min(s.len())]);
            i += n;
            loop {
                match d.next_message() {
                    Ok(Some(m)) => {
                        let _ = Message::decode(&m, Sender::Server);
                    }
                    Ok(None) => break,
                    Err(_) => break,
                }
            }
        }
    }
}
