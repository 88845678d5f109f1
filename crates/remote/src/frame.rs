//! Framing (fio-protocol.md §2): the 24-byte command header with its two CRC-16s,
//! fragmentation into frames of at most 1024 payload bytes linked by the `MORE` flag, and
//! reassembly, both incremental ([`Decoder`]) and over a blocking stream
//! ([`read_message`], with the stream's own read timeout).

use crate::crc::crc16;
use crate::error::{Error, Result};
use std::io::{ErrorKind, Read, Write};

/// The protocol version of fio 3.32 and 3.33 (`FIO_SERVER_VER`).
pub const VERSION: u16 = 97;
/// Header bytes before every frame's payload.
pub const HEADER_LEN: usize = 24;
/// Largest payload of one frame (`FIO_SERVER_MAX_FRAGMENT_PDU`).
pub const MAX_FRAGMENT: usize = 1024;
/// Largest reassembled message fio accepts (`FIO_SERVER_MAX_CMD_MB` = 2048 MiB).
pub const MAX_MESSAGE: u64 = 2048 << 20;
/// Flag bit: another fragment of this message follows.
pub const FLAG_MORE: u32 = 1;
/// The default TCP port.
pub const DEFAULT_PORT: u16 = 8765;

/// The opcodes of protocol version 97 (§4.0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum Opcode {
    Quit = 1,
    Exit = 2,
    Job = 3,
    JobLine = 4,
    Text = 5,
    Ts = 6,
    Gs = 7,
    SendEta = 8,
    Eta = 9,
    Probe = 10,
    Start = 11,
    Stop = 12,
    Du = 13,
    ServerStart = 14,
    AddJob = 15,
    Run = 16,
    IoLog = 17,
    UpdateJob = 18,
    LoadFile = 19,
    VTrigger = 20,
    SendFile = 21,
    JobOpt = 22,
}

impl Opcode {
    pub const ALL: [Opcode; 22] = [
        Opcode::Quit,
        Opcode::Exit,
        Opcode::Job,
        Opcode::JobLine,
        Opcode::Text,
        Opcode::Ts,
        Opcode::Gs,
        Opcode::SendEta,
        Opcode::Eta,
        Opcode::Probe,
        Opcode::Start,
        Opcode::Stop,
        Opcode::Du,
        Opcode::ServerStart,
        Opcode::AddJob,
        Opcode::Run,
        Opcode::IoLog,
        Opcode::UpdateJob,
        Opcode::LoadFile,
        Opcode::VTrigger,
        Opcode::SendFile,
        Opcode::JobOpt,
    ];

    pub fn from_u16(v: u16) -> Result<Opcode> {
        match v {
            1..=22 => Ok(Opcode::ALL[v as usize - 1]),
            _ => Err(Error::UnknownOpcode(v)),
        }
    }

    /// fio's name of the opcode (as in its messages, e.g. "timeout on cmd SEND_ETA").
    pub fn name(self) -> &'static str {
        [
            "QUIT",
            "EXIT",
            "JOB",
            "JOBLINE",
            "TEXT",
            "TS",
            "GS",
            "SEND_ETA",
            "ETA",
            "PROBE",
            "START",
            "STOP",
            "DU",
            "SERVER_START",
            "ADD_JOB",
            "RUN",
            "IOLOG",
            "UPDATE_JOB",
            "LOAD_FILE",
            "VTRIGGER",
            "SENDFILE",
            "JOB_OPT",
        ][self as usize - 1]
    }
}

/// One frame's header as it is on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub version: u16,
    pub opcode: u16,
    pub flags: u32,
    pub tag: u64,
    pub pdu_len: u32,
    pub cmd_crc: u16,
    pub pdu_crc: u16,
}

impl Header {
    /// The header of a frame carrying `payload`, with both CRCs computed.
    pub fn new(opcode: u16, flags: u32, tag: u64, payload: &[u8]) -> Header {
        let mut h = Header {
            version: VERSION,
            opcode,
            flags,
            tag,
            pdu_len: payload.len() as u32,
            cmd_crc: 0,
            pdu_crc: crc16(payload),
        };
        h.cmd_crc = crc16(&h.to_bytes()[..20]);
        h
    }

    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..2].copy_from_slice(&self.version.to_le_bytes());
        b[2..4].copy_from_slice(&self.opcode.to_le_bytes());
        b[4..8].copy_from_slice(&self.flags.to_le_bytes());
        b[8..16].copy_from_slice(&self.tag.to_le_bytes());
        b[16..20].copy_from_slice(&self.pdu_len.to_le_bytes());
        b[20..22].copy_from_slice(&self.cmd_crc.to_le_bytes());
        b[22..24].copy_from_slice(&self.pdu_crc.to_le_bytes());
        b
    }

    /// Parse and check a header in fio's order: header CRC, version, payload length.
    pub fn parse(b: &[u8; HEADER_LEN]) -> Result<Header> {
        let u16at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        let u32at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let mut t = [0u8; 8];
        t.copy_from_slice(&b[8..16]);
        let h = Header {
            version: u16at(0),
            opcode: u16at(2),
            flags: u32at(4),
            tag: u64::from_le_bytes(t),
            pdu_len: u32at(16),
            cmd_crc: u16at(20),
            pdu_crc: u16at(22),
        };
        let want = crc16(&b[..20]);
        if want != h.cmd_crc {
            return Err(Error::HeaderCrc {
                got: h.cmd_crc,
                want,
            });
        }
        if h.version != VERSION {
            return Err(Error::Version {
                got: h.version,
                want: VERSION,
            });
        }
        if h.pdu_len as usize > MAX_FRAGMENT {
            return Err(Error::FragmentTooLarge { len: h.pdu_len });
        }
        Ok(h)
    }

    /// Check this frame's payload against its CRC.
    pub fn check_payload(&self, payload: &[u8]) -> Result<()> {
        let want = crc16(payload);
        if want != self.pdu_crc {
            return Err(Error::PayloadCrc {
                opcode: self.opcode,
                got: self.pdu_crc,
                want,
            });
        }
        Ok(())
    }
}

/// A reassembled message: its opcode (not yet checked against the opcode table, since
/// fio's client tolerates unknown ones), tag and whole payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawMessage {
    pub opcode: u16,
    pub tag: u64,
    pub payload: Vec<u8>,
}

impl RawMessage {
    pub fn new(opcode: Opcode, tag: u64, payload: Vec<u8>) -> Self {
        RawMessage {
            opcode: opcode as u16,
            tag,
            payload,
        }
    }
    pub fn op(&self) -> Result<Opcode> {
        Opcode::from_u16(self.opcode)
    }
    /// The message as frames, ready to write.
    pub fn encode(&self) -> Vec<u8> {
        encode_parts(self.opcode, self.tag, &[&self.payload])
    }
}

/// Frames of one message whose payload is the concatenation of `parts`, each part cut
/// into 1024-byte frames on its own (as fio's IOLOG sender does; a plain message is one
/// part). Every frame but the last carries `MORE`. Empty parts produce no frame (a
/// zero-length frame would end the message at the receiver); a wholly empty message is
/// one frame without payload.
pub fn encode_parts(opcode: u16, tag: u64, parts: &[&[u8]]) -> Vec<u8> {
    let chunks: Vec<&[u8]> = parts
        .iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| p.chunks(MAX_FRAGMENT))
        .collect();
    let total: usize = chunks.iter().map(|c| c.len() + HEADER_LEN).sum();
    let mut out = Vec::with_capacity(total.max(HEADER_LEN));
    if chunks.is_empty() {
        out.extend_from_slice(&Header::new(opcode, 0, tag, &[]).to_bytes());
        return out;
    }
    let last = chunks.len() - 1;
    for (i, c) in chunks.iter().enumerate() {
        let flags = if i < last { FLAG_MORE } else { 0 };
        out.extend_from_slice(&Header::new(opcode, flags, tag, c).to_bytes());
        out.extend_from_slice(c);
    }
    out
}

/// Frames of one message with a single payload.
pub fn encode_message(opcode: Opcode, tag: u64, payload: &[u8]) -> Vec<u8> {
    encode_parts(opcode as u16, tag, &[payload])
}

/// Joins frames into messages (§2.3): payloads are concatenated while `MORE` is set; a
/// frame with an empty payload ends the message whatever its flags; a continuation frame
/// must keep the first frame's opcode; the total is limited.
#[derive(Debug)]
pub struct Reassembler {
    partial: Option<RawMessage>,
    limit: u64,
}

impl Default for Reassembler {
    fn default() -> Self {
        Reassembler {
            partial: None,
            limit: MAX_MESSAGE,
        }
    }
}

impl Reassembler {
    /// A reassembler that refuses messages larger than `limit` bytes (at most fio's).
    pub fn with_limit(limit: u64) -> Self {
        Reassembler {
            partial: None,
            limit: limit.min(MAX_MESSAGE),
        }
    }

    /// Add one checked frame; returns the message when it is complete.
    pub fn push(&mut self, h: &Header, payload: &[u8]) -> Result<Option<RawMessage>> {
        let msg = match &mut self.partial {
            Some(m) => {
                if m.opcode != h.opcode {
                    let first = m.opcode;
                    self.partial = None;
                    return Err(Error::OpcodeChanged {
                        first,
                        then: h.opcode,
                    });
                }
                m
            }
            None => self.partial.insert(RawMessage {
                opcode: h.opcode,
                tag: h.tag,
                payload: Vec::new(),
            }),
        };
        let len = msg.payload.len() as u64 + payload.len() as u64;
        if len > self.limit {
            self.partial = None;
            return Err(Error::MessageTooLarge {
                len,
                limit: self.limit,
            });
        }
        msg.payload.extend_from_slice(payload);
        if h.flags & FLAG_MORE != 0 && !payload.is_empty() {
            return Ok(None);
        }
        Ok(self.partial.take())
    }

    /// Whether a message is half received.
    pub fn in_message(&self) -> bool {
        self.partial.is_some()
    }
}

/// Incremental decoder: feed received bytes with [`Decoder::push`], take messages with
/// [`Decoder::next_message`]. After an error the connection must be dropped (as fio does).
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
    start: usize,
    asm: Reassembler,
}

impl Decoder {
    pub fn with_limit(limit: u64) -> Self {
        Decoder {
            asm: Reassembler::with_limit(limit),
            ..Default::default()
        }
    }

    pub fn push(&mut self, data: &[u8]) {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
        self.buf.extend_from_slice(data);
    }

    /// The next complete message, `None` when more bytes are needed.
    pub fn next_message(&mut self) -> Result<Option<RawMessage>> {
        loop {
            let avail = &self.buf[self.start..];
            if avail.len() < HEADER_LEN {
                return Ok(None);
            }
            let mut hb = [0u8; HEADER_LEN];
            hb.copy_from_slice(&avail[..HEADER_LEN]);
            let h = Header::parse(&hb)?;
            let end = HEADER_LEN + h.pdu_len as usize;
            if avail.len() < end {
                return Ok(None);
            }
            let payload = &avail[HEADER_LEN..end];
            h.check_payload(payload)?;
            let done = self.asm.push(&h, payload)?;
            self.start += end;
            if self.start > 1 << 16 {
                self.buf.drain(..self.start);
                self.start = 0;
            }
            if let Some(m) = done {
                return Ok(Some(m));
            }
        }
    }

    /// Bytes received but not yet consumed (a partial frame) or a partial message: the
    /// stream must not end here.
    pub fn is_mid_message(&self) -> bool {
        self.start < self.buf.len() || self.asm.in_message()
    }
}

fn read_exact_or(
    r: &mut impl Read,
    buf: &mut [u8],
    what: &'static str,
    at_start: bool,
) -> Result<()> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 && at_start => return Err(Error::Closed),
            Ok(0) => {
                return Err(Error::Truncated {
                    what,
                    need: buf.len(),
                    have: got,
                })
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(Error::Timeout { waiting_for: what })
            }
            Err(e) => return Err(Error::Io(e)),
        }
    }
    Ok(())
}

/// Read one whole message from a blocking stream (set a read timeout on the socket: a
/// timeout is reported as [`Error::Timeout`]). A clean close before the first byte of a
/// message is [`Error::Closed`]; anywhere else it is [`Error::Truncated`].
pub fn read_message(r: &mut impl Read) -> Result<RawMessage> {
    read_message_limited(r, &mut Reassembler::default())
}

/// [`read_message`] with a caller-owned reassembler (for a smaller size limit).
pub fn read_message_limited(r: &mut impl Read, asm: &mut Reassembler) -> Result<RawMessage> {
    let mut payload = [0u8; MAX_FRAGMENT];
    loop {
        let mut hb = [0u8; HEADER_LEN];
        read_exact_or(r, &mut hb, "command header", !asm.in_message())?;
        let h = Header::parse(&hb)?;
        let p = &mut payload[..h.pdu_len as usize];
        read_exact_or(r, p, "frame payload", false)?;
        h.check_payload(p)?;
        if let Some(m) = asm.push(&h, p)? {
            return Ok(m);
        }
    }
}

/// Write one message (all its frames in one write, so that concurrent writers holding a
/// lock never interleave fragments).
pub fn write_message(w: &mut impl Write, opcode: Opcode, tag: u64, payload: &[u8]) -> Result<()> {
    w.write_all(&encode_message(opcode, tag, payload))?;
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn captured_frames() {
        let cases: [(Opcode, u64, Vec<u8>, &str); 5] = [
            (
                Opcode::Run,
                0,
                vec![],
                "61001000 00000000 0000000000000000 00000000 b0bc 0000",
            ),
            (
                Opcode::Quit,
                0,
                vec![],
                "61000100 00000000 0000000000000000 00000000 e585 0000",
            ),
            (
                Opcode::ServerStart,
                0,
                vec![],
                "61000e00 00000000 0000000000000000 00000000 d692 0000",
            ),
            (
                Opcode::Start,
                0,
                hex("02000000 02000000"),
                "61000b00 00000000 0000000000000000 08000000 c43f 8061 02000000 02000000",
            ),
            (
                Opcode::Stop,
                0,
                vec![0; 8],
                "61000c00 00000000 0000000000000000 08000000 754a 0000 0000000000000000",
            ),
        ];
        for (op, tag, payload, want) in cases {
            assert_eq!(encode_message(op, tag, &payload), hex(want), "{op:?}");
        }
        // PROBE header with a pointer-like tag: only the header is given in the reference.
        let mut probe = vec![0u8; 136];
        probe[0] = 1;
        probe[8..17].copy_from_slice(b"127.0.0.1");
        let f = encode_message(Opcode::Probe, 0x55fbc8f6bb50, &probe);
        assert_eq!(
            f[..24],
            hex("61000a00 00000000 50bbf6c8fb550000 88000000 96ce 9aec")[..]
        );
    }

    #[test]
    fn fragmentation_round_trip() {
        let payload: Vec<u8> = (0..3000u32).map(|i| (i * 7) as u8).collect();
        let wire = encode_message(Opcode::Text, 42, &payload);
        assert_eq!(wire.len(), 3000 + 3 * HEADER_LEN);
        // MORE on the first two frames only.
        assert_eq!(wire[4], 1);
        assert_eq!(wire[HEADER_LEN + 1024 + 4], 1);
        assert_eq!(wire[2 * (HEADER_LEN + 1024) + 4], 0);
        // Byte by byte through the incremental decoder.
        let mut d = Decoder::default();
        let mut got = None;
        for b in &wire {
            d.push(std::slice::from_ref(b));
            if let Some(m) = d.next_message().unwrap() {
                got = Some(m);
            }
        }
        let m = got.unwrap();
        assert_eq!((m.opcode, m.tag), (Opcode::Text as u16, 42));
        assert_eq!(m.payload, payload);
        assert!(!d.is_mid_message());
        // And through a blocking reader, twice in a row.
        let mut two = wire.clone();
        two.extend_from_slice(&encode_message(Opcode::Quit, 0, &[]));
        let mut r = &two[..];
        assert_eq!(read_message(&mut r).unwrap().payload, payload);
        assert_eq!(read_message(&mut r).unwrap().opcode, 1);
        assert!(matches!(read_message(&mut r), Err(Error::Closed)));
    }

    #[test]
    fn parts_are_fragmented_separately() {
        let a = vec![1u8; 288];
        let b = vec![2u8; 1558];
        let wire = encode_parts(17, 9, &[&a, &b]);
        let mut r = &wire[..];
        let mut sizes = vec![];
        while !r.is_empty() {
            let mut hb = [0u8; HEADER_LEN];
            hb.copy_from_slice(&r[..HEADER_LEN]);
            let h = Header::parse(&hb).unwrap();
            sizes.push(h.pdu_len);
            r = &r[HEADER_LEN + h.pdu_len as usize..];
        }
        assert_eq!(sizes, [288, 1024, 534]);
        let m = read_message(&mut &wire[..]).unwrap();
        assert_eq!(m.payload.len(), 288 + 1558);
    }

    #[test]
    fn zero_length_frame_ends_a_message() {
        let mut wire = Header::new(5, FLAG_MORE, 0, b"abc").to_bytes().to_vec();
        wire.extend_from_slice(b"abc");
        wire.extend_from_slice(&Header::new(5, FLAG_MORE, 0, b"").to_bytes());
        let m = read_message(&mut &wire[..]).unwrap();
        assert_eq!(m.payload, b"abc");
    }

    #[test]
    fn corrupt_input_is_an_error() {
        let good = encode_message(Opcode::Start, 0, &[2, 0, 0, 0, 2, 0, 0, 0]);
        // Header CRC.
        let mut bad = good.clone();
        bad[8] ^= 1;
        assert!(matches!(
            read_message(&mut &bad[..]),
            Err(Error::HeaderCrc { .. })
        ));
        // Payload CRC.
        let mut bad = good.clone();
        bad[24] ^= 1;
        assert!(matches!(
            read_message(&mut &bad[..]),
            Err(Error::PayloadCrc { opcode: 11, .. })
        ));
        // Version (with a valid header CRC).
        let mut h = Header::new(11, 0, 0, &good[24..]);
        h.version = 99;
        h.cmd_crc = crc16(&h.to_bytes()[..20]);
        let mut bad = h.to_bytes().to_vec();
        bad.extend_from_slice(&good[24..]);
        let e = read_message(&mut &bad[..]).unwrap_err();
        assert!(matches!(e, Error::Version { got: 99, want: 97 }));
        assert!(e.to_string().contains("99 (fio 3.34)"));
        // Oversized fragment.
        let mut h = Header::new(5, 0, 0, &[]);
        h.pdu_len = 1025;
        h.cmd_crc = crc16(&h.to_bytes()[..20]);
        assert!(matches!(
            read_message(&mut &h.to_bytes()[..]),
            Err(Error::FragmentTooLarge { len: 1025 })
        ));
        // Short input: inside the header and inside the payload.
        for cut in [5, 24, 30] {
            let mut d = Decoder::default();
            d.push(&good[..cut]);
            assert!(d.next_message().unwrap().is_none());
            assert!(d.is_mid_message());
            assert!(matches!(
                read_message(&mut &good[..cut]),
                Err(Error::Truncated { .. })
            ));
        }
        // Opcode change inside a message.
        let mut wire = Header::new(5, FLAG_MORE, 0, b"a").to_bytes().to_vec();
        wire.push(b'a');
        wire.extend_from_slice(&Header::new(6, 0, 0, b"b").to_bytes());
        wire.push(b'b');
        assert!(matches!(
            read_message(&mut &wire[..]),
            Err(Error::OpcodeChanged { first: 5, then: 6 })
        ));
        // Size limit.
        let big = encode_message(Opcode::Text, 0, &[0u8; 3000]);
        let mut asm = Reassembler::with_limit(2048);
        assert!(matches!(
            read_message_limited(&mut &big[..], &mut asm),
            Err(Error::MessageTooLarge { .. })
        ));
        assert!(matches!(Opcode::from_u16(0), Err(Error::UnknownOpcode(0))));
        assert!(matches!(
            Opcode::from_u16(23),
            Err(Error::UnknownOpcode(23))
        ));
        assert_eq!(Opcode::from_u16(22).unwrap(), Opcode::JobOpt);
        assert_eq!(Opcode::SendEta.name(), "SEND_ETA");
    }
}
