//! Fuzz bodies for the wire protocol, shared by the libFuzzer targets
//! (`fuzz/libfuzzer/`, `cargo fuzz`) and the stable mutation fuzzer (`flexio-fuzz --target
//! packets|server`, CI's smoke run). A panic, a hang or unbounded growth is a finding.
//!
//! Input is a list of records, so mutations keep reaching the message decoders instead of
//! dying at the frame checksums: each record is `selector len:u16le payload[len]`.
//! - The selector's low 5 bits pick the opcode (fio's 22 and a few unknown ones), and its
//!   top bits how the record becomes bytes: a well-formed message (frames, fragments and
//!   checksums as a real peer sends), its frames with one header byte flipped, or the
//!   payload as raw bytes on the wire.
//! - The record's payload is the message payload; for IOLOG it is often deflated first, so
//!   the compressed paths get real zlib streams.

use flexio_remote::frame::{encode_parts, Opcode, HEADER_LEN};
use flexio_remote::{Decoder, Message, Sender};

/// Turn fuzz input into bytes on the wire.
pub fn wire(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut tag = 1u64;
    while i + 3 <= input.len() {
        let sel = input[i];
        let len = u16::from_le_bytes([input[i + 1], input[i + 2]]) as usize;
        i += 3;
        let payload = &input[i..(i + len).min(input.len())];
        i += payload.len();
        let idx = (sel & 0x1f) as usize;
        let opcode = match Opcode::ALL.get(idx) {
            Some(op) => *op as u16,
            None => 100 + idx as u16,
        };
        let deflated;
        let payload = if opcode == Opcode::IoLog as u16 && sel & 0x20 != 0 && payload.len() > 8 {
            // Keep the IOLOG header, deflate the records after it.
            let (head, body) = payload.split_at(payload.len().min(96));
            let mut p = head.to_vec();
            p.extend_from_slice(&miniz_oxide::deflate::compress_to_vec_zlib(body, 1));
            deflated = p;
            &deflated[..]
        } else {
            payload
        };
        tag = tag.wrapping_add(1);
        match sel >> 6 {
            0 | 1 => out.extend_from_slice(&encode_parts(opcode, tag, &[payload])),
            2 => {
                let mut f = encode_parts(opcode, tag, &[payload]);
                if let Some(b) = payload.first() {
                    let at = *b as usize % HEADER_LEN.min(f.len());
                    f[at] ^= payload.get(1).copied().unwrap_or(0x55) | 1;
                }
                out.extend_from_slice(&f);
            }
            _ => out.extend_from_slice(payload),
        }
    }
    out
}

/// The packet decoder: every message decoded as both ends would, and re-encoded and
/// decoded again: that must succeed, and a second round trip must change nothing.
pub fn packets(input: &[u8]) -> String {
    let mut shape = String::new();
    let bytes = wire(input);
    let mut dec = Decoder::with_limit(4 << 20);
    // Fed in pieces, as reads return them.
    let step = 1 + input.first().copied().unwrap_or(0) as usize * 7;
    for chunk in bytes.chunks(step) {
        dec.push(chunk);
        loop {
            match dec.next_message() {
                Ok(Some(raw)) => {
                    for from in [Sender::Client, Sender::Server] {
                        let decoded = Message::decode(&raw, from);
                        match &decoded {
                            Ok(m) => shape.push_str(m.opcode().name()),
                            Err(e) => {
                                let e = e.to_string();
                                shape.push_str(
                                    e.split(|c: char| c.is_ascii_digit()).next().unwrap_or(""),
                                );
                            }
                        }
                        shape.push(';');
                        if let Ok(m) = decoded {
                            // Re-encoding may normalise (a truncated log keeps what
                            // arrived), but only once: after one round trip it is stable.
                            let m2 = round_trip(&m, raw.tag, from);
                            let m3 = round_trip(&m2, raw.tag, from);
                            assert_eq!(
                                format!("{m2:?}"),
                                format!("{m3:?}"),
                                "decode(encode(m)) is not stable"
                            );
                        }
                    }
                }
                Ok(None) => break,
                // A broken stream ends the connection.
                Err(e) => {
                    let e = e.to_string();
                    shape.push_str(e.split(|c: char| c.is_ascii_digit()).next().unwrap_or(""));
                    return shape;
                }
            }
        }
    }
    shape
}

fn round_trip(m: &Message, tag: u64, from: Sender) -> Message {
    let mut d = Decoder::default();
    d.push(&m.to_frames(tag));
    let raw = d
        .next_message()
        .expect("a re-encoded message reassembles")
        .expect("a re-encoded message is complete");
    Message::decode(&raw, from).expect("a re-encoded message decodes")
}

/// Inputs that are well-formed messages of each kind a client or server sends, in the
/// record format ([`wire`]): the mutation fuzzer's seeds.
pub fn seeds() -> Vec<Vec<u8>> {
    use flexio_remote::msg::*;
    let msgs = vec![
        Message::Probe(Probe {
            flags: 0,
            server: "host".into(),
        }),
        Message::JobLine(JobLine {
            client_type: 1,
            args: vec![
                "fio".into(),
                "--name=x".into(),
                "--ioengine=null".into(),
                "--size=1m".into(),
            ],
        }),
        Message::Job(Job {
            client_type: 1,
            text: "[global]\nioengine=null\n[a]\nsize=1m\nrw=randrw\n".into(),
        }),
        Message::LoadFile(LoadFile {
            client_type: 1,
            path: "jobs.fio".into(),
        }),
        Message::Text(Text {
            level: 1,
            log_sec: 1,
            log_usec: 2,
            text: "hello\n".into(),
        }),
        Message::Start(Start {
            jobs: 1,
            stat_outputs: 1,
        }),
        Message::Stop(Stop {
            error: 0,
            signal: 0,
        }),
        Message::Eta(Eta::default()),
        Message::Du(DiskUtil::default()),
        Message::VTriggerReply(flexio_remote::vstate::VTriggerReply::default()),
        Message::SendEta,
        Message::Run,
        Message::Quit,
    ];
    let record = |m: &Message| {
        let idx = Opcode::ALL
            .iter()
            .position(|o| *o == m.opcode())
            .unwrap_or(0) as u8;
        let p = m.payload();
        let mut r = vec![idx, (p.len() & 0xff) as u8, (p.len() >> 8) as u8];
        r.extend_from_slice(&p);
        r
    };
    let mut out: Vec<Vec<u8>> = msgs.iter().map(record).collect();
    // A whole client session: probe, job, run.
    out.push(
        [&msgs[0], &msgs[2], &msgs[11]]
            .iter()
            .flat_map(|m| record(m))
            .collect(),
    );
    out
}

/// The server's connection state machine: the input as one client's bytes (after an
/// optional flexio hello), served under the default rules in a scratch root, no job run.
pub fn server(input: &[u8], root: &std::path::Path) -> String {
    let mut bytes = Vec::new();
    let token = match input.first() {
        // A flexio client that authenticates (its proof cannot be right: refused).
        Some(b) if b & 3 == 1 => {
            bytes.extend_from_slice(super::auth::HELLO);
            bytes.extend_from_slice(input.get(1..34).unwrap_or(&[]));
            Some(super::auth::Token::from_bytes(
                b"fuzzing-token-0123456789".to_vec(),
            ))
        }
        // A hello to a server without a token.
        Some(b) if b & 3 == 2 => {
            bytes.extend_from_slice(super::auth::HELLO);
            None
        }
        _ => None,
    };
    bytes.extend_from_slice(&wire(input.get(1..).unwrap_or(&[])));
    let out = super::server::serve_bytes(&bytes, root, token);
    // The shape: the opcodes of the replies.
    let mut dec = Decoder::default();
    dec.push(&out);
    let mut shape = String::new();
    while let Ok(Some(raw)) = dec.next_message() {
        shape.push_str(raw.op().map(|o| o.name()).unwrap_or("?"));
        shape.push(';');
    }
    shape
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_records_reach_the_decoders() {
        // A PROBE (opcode index 5) with an empty payload and a RUN (index 2).
        let probe = Opcode::ALL
            .iter()
            .position(|o| *o == Opcode::Probe)
            .unwrap() as u8;
        let input = [probe, 0, 0];
        let mut d = Decoder::default();
        d.push(&wire(&input));
        let raw = d.next_message().unwrap().unwrap();
        assert_eq!(raw.op().unwrap(), Opcode::Probe);
        packets(&input);
    }

    #[test]
    fn the_server_answers_a_probe_and_refuses_an_exec_job() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        let probe = Message::Probe(flexio_remote::msg::Probe {
            flags: 0,
            server: "x".into(),
        });
        let job = Message::Job(flexio_remote::msg::Job {
            client_type: 1,
            text: "[x]\nioengine=exec\nprogram=/bin/true\n".into(),
        });
        let mut bytes = probe.to_frames(1);
        bytes.extend(job.to_frames(0));
        bytes.extend(Message::Run.to_frames(0));
        let out = super::super::server::serve_bytes(&bytes, &root, None);
        let mut dec = Decoder::default();
        dec.push(&out);
        let mut texts = String::new();
        let mut replied = false;
        while let Ok(Some(raw)) = dec.next_message() {
            match Message::decode(&raw, Sender::Server).unwrap() {
                Message::ProbeReply(_) => replied = true,
                Message::Text(t) => texts.push_str(&t.text),
                _ => {}
            }
        }
        assert!(replied);
        assert!(texts.contains("runs a program"), "{texts}");
    }
}
