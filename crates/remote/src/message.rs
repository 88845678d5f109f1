//! Every message as one typed enum, decoded according to who sent it (PROBE, UPDATE_JOB,
//! VTRIGGER and SENDFILE have a request and a reply layout under one opcode), and a small
//! blocking connection that sends and receives them.

use crate::error::{Error, Result};
use crate::frame::{read_message, Opcode, RawMessage};
use crate::iolog::IoLog;
use crate::msg::*;
use crate::pack::{AddJob, UpdateJob};
use crate::ts::{GroupStats, ThreadStat};
use crate::vstate::{SendFileReply, SendFileRequest, VTrigger, VTriggerReply};
use std::io::{Read, Write};

/// Who sent a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sender {
    Client,
    Server,
}

/// A decoded message.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    Quit,
    Exit,
    Run,
    SendEta,
    ServerStart,
    Probe(Probe),
    ProbeReply(ProbeReply),
    Job(Job),
    JobLine(JobLine),
    LoadFile(LoadFile),
    Text(Text),
    Ts(Box<ThreadStat>),
    Gs(GroupStats),
    Eta(Eta),
    Start(Start),
    Stop(Stop),
    Du(DiskUtil),
    AddJob(Box<AddJob>),
    UpdateJob(Box<UpdateJob>),
    UpdateJobReply(UpdateJobReply),
    IoLog(IoLog),
    VTrigger(VTrigger),
    VTriggerReply(VTriggerReply),
    SendFileRequest(SendFileRequest),
    SendFileReply(SendFileReply),
    JobOpt(JobOpt),
}

fn empty(op: Opcode, p: &[u8], m: Message) -> Result<Message> {
    if !p.is_empty() {
        return Err(Error::Size {
            what: op.name(),
            got: p.len(),
            want: "0",
        });
    }
    Ok(m)
}

impl Message {
    /// Decode a reassembled message sent by `from`. An opcode the sender never sends is an
    /// error naming it.
    pub fn decode(raw: &RawMessage, from: Sender) -> Result<Message> {
        let op = raw.op()?;
        let p = &raw.payload[..];
        use Opcode as O;
        use Sender::*;
        Ok(match (op, from) {
            (O::Quit, _) => empty(op, p, Message::Quit)?,
            (O::Exit, Client) => empty(op, p, Message::Exit)?,
            (O::Run, Client) => empty(op, p, Message::Run)?,
            (O::SendEta, Client) => empty(op, p, Message::SendEta)?,
            (O::ServerStart, Server) => empty(op, p, Message::ServerStart)?,
            (O::Probe, Client) => Message::Probe(Probe::decode(p)?),
            (O::Probe, Server) => Message::ProbeReply(ProbeReply::decode(p)?),
            (O::Job, Client) => Message::Job(Job::decode(p)?),
            (O::JobLine, Client) => Message::JobLine(JobLine::decode(p)?),
            (O::LoadFile, Client) => Message::LoadFile(LoadFile::decode(p)?),
            (O::Text, Server) => Message::Text(Text::decode(p)?),
            (O::Ts, Server) => Message::Ts(Box::new(ThreadStat::decode(p)?)),
            (O::Gs, Server) => Message::Gs(GroupStats::decode(p)?),
            (O::Eta, Server) => Message::Eta(Eta::decode(p)?),
            (O::Start, Server) => Message::Start(Start::decode(p)?),
            (O::Stop, Server) => Message::Stop(Stop::decode(p)?),
            (O::Du, Server) => Message::Du(DiskUtil::decode(p)?),
            (O::AddJob, Server) => Message::AddJob(Box::new(AddJob::decode(p)?)),
            (O::UpdateJob, Client) => Message::UpdateJob(Box::new(UpdateJob::decode(p)?)),
            (O::UpdateJob, Server) => Message::UpdateJobReply(UpdateJobReply::decode(p)?),
            (O::IoLog, Server) => Message::IoLog(IoLog::decode(p)?),
            (O::VTrigger, Client) => Message::VTrigger(VTrigger::decode(p)?),
            (O::VTrigger, Server) => Message::VTriggerReply(VTriggerReply::decode(p)?),
            (O::SendFile, Server) => Message::SendFileRequest(SendFileRequest::decode(p)?),
            (O::SendFile, Client) => Message::SendFileReply(SendFileReply::decode(p)?),
            (O::JobOpt, Server) => Message::JobOpt(JobOpt::decode(p)?),
            (op, from) => {
                return Err(Error::Field {
                    what: "opcode",
                    detail: format!(
                        "{} is never sent by a {}",
                        op.name(),
                        if from == Client { "client" } else { "server" }
                    ),
                })
            }
        })
    }

    pub fn opcode(&self) -> Opcode {
        use Message as M;
        match self {
            M::Quit => Opcode::Quit,
            M::Exit => Opcode::Exit,
            M::Run => Opcode::Run,
            M::SendEta => Opcode::SendEta,
            M::ServerStart => Opcode::ServerStart,
            M::Probe(_) | M::ProbeReply(_) => Opcode::Probe,
            M::Job(_) => Opcode::Job,
            M::JobLine(_) => Opcode::JobLine,
            M::LoadFile(_) => Opcode::LoadFile,
            M::Text(_) => Opcode::Text,
            M::Ts(_) => Opcode::Ts,
            M::Gs(_) => Opcode::Gs,
            M::Eta(_) => Opcode::Eta,
            M::Start(_) => Opcode::Start,
            M::Stop(_) => Opcode::Stop,
            M::Du(_) => Opcode::Du,
            M::AddJob(_) => Opcode::AddJob,
            M::UpdateJob(_) | M::UpdateJobReply(_) => Opcode::UpdateJob,
            M::IoLog(_) => Opcode::IoLog,
            M::VTrigger(_) | M::VTriggerReply(_) => Opcode::VTrigger,
            M::SendFileRequest(_) | M::SendFileReply(_) => Opcode::SendFile,
            M::JobOpt(_) => Opcode::JobOpt,
        }
    }

    /// The payload bytes.
    pub fn payload(&self) -> Vec<u8> {
        use Message as M;
        match self {
            M::Quit | M::Exit | M::Run | M::SendEta | M::ServerStart => Vec::new(),
            M::Probe(m) => m.encode(),
            M::ProbeReply(m) => m.encode(),
            M::Job(m) => m.encode(),
            M::JobLine(m) => m.encode(),
            M::LoadFile(m) => m.encode(),
            M::Text(m) => m.encode(),
            M::Ts(m) => m.encode(),
            M::Gs(m) => m.encode(),
            M::Eta(m) => m.encode(),
            M::Start(m) => m.encode(),
            M::Stop(m) => m.encode(),
            M::Du(m) => m.encode(),
            M::AddJob(m) => m.encode(),
            M::UpdateJob(m) => m.encode(),
            M::UpdateJobReply(m) => m.encode(),
            M::IoLog(m) => m.encode(),
            M::VTrigger(m) => m.encode(),
            M::VTriggerReply(m) => m.encode(),
            M::SendFileRequest(m) => m.encode(),
            M::SendFileReply(m) => m.encode(),
            M::JobOpt(m) => m.encode(),
        }
    }

    /// The message's frames with `tag` (IOLOG fragmented header and data apart, as fio).
    pub fn to_frames(&self, tag: u64) -> Vec<u8> {
        match self {
            Message::IoLog(l) => l.encode_frames(tag),
            m => RawMessage::new(m.opcode(), tag, m.payload()).encode(),
        }
    }
}

/// A blocking connection speaking the protocol from one side. Set timeouts on the stream
/// before wrapping it: a read that times out is [`Error::Timeout`].
pub struct Conn<S> {
    pub stream: S,
    /// Who we are: messages received are decoded as sent by the other side.
    pub me: Sender,
}

impl<S: Read + Write> Conn<S> {
    pub fn new(stream: S, me: Sender) -> Self {
        Conn { stream, me }
    }

    pub fn send(&mut self, m: &Message, tag: u64) -> Result<()> {
        self.stream.write_all(&m.to_frames(tag))?;
        self.stream.flush()?;
        Ok(())
    }

    /// The next raw message (for callers that tolerate unknown opcodes, as fio's client).
    pub fn recv_raw(&mut self) -> Result<RawMessage> {
        read_message(&mut self.stream)
    }

    /// The next message and its tag.
    pub fn recv(&mut self) -> Result<(u64, Message)> {
        let raw = self.recv_raw()?;
        let from = match self.me {
            Sender::Client => Sender::Server,
            Sender::Server => Sender::Client,
        };
        Ok((raw.tag, Message::decode(&raw, from)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direction_decides_the_layout() {
        let probe = Message::Probe(Probe {
            flags: 1,
            server: "sock".into(),
        });
        let raw = RawMessage::new(Opcode::Probe, 5, probe.payload());
        assert_eq!(Message::decode(&raw, Sender::Client).unwrap(), probe);
        // The same bytes as a reply have the wrong size.
        assert!(Message::decode(&raw, Sender::Server).is_err());
        let run = RawMessage::new(Opcode::Run, 0, vec![]);
        assert_eq!(Message::decode(&run, Sender::Client).unwrap(), Message::Run);
        let e = Message::decode(&run, Sender::Server).unwrap_err();
        assert!(
            e.to_string().contains("RUN is never sent by a server"),
            "{e}"
        );
        let bad = RawMessage::new(Opcode::Quit, 0, vec![1]);
        assert!(Message::decode(&bad, Sender::Server).is_err());
        let unknown = RawMessage {
            opcode: 40,
            tag: 0,
            payload: vec![],
        };
        assert!(matches!(
            Message::decode(&unknown, Sender::Server),
            Err(Error::UnknownOpcode(40))
        ));
    }

    #[test]
    fn conn_round_trip_over_a_socket_pair() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        for s in [&a, &b] {
            s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
                .unwrap();
        }
        let mut client = Conn::new(a, Sender::Client);
        let mut server = Conn::new(b, Sender::Server);
        let msgs = [
            Message::Job(Job {
                client_type: 1,
                text: "[j]\nrw=read\n".repeat(200),
            }),
            Message::Run,
        ];
        for m in &msgs {
            client.send(m, 3).unwrap();
        }
        for m in &msgs {
            assert_eq!(server.recv().unwrap(), (3, m.clone()));
        }
        server
            .send(
                &Message::Start(Start {
                    jobs: 1,
                    stat_outputs: 1,
                }),
                0,
            )
            .unwrap();
        assert!(matches!(client.recv().unwrap().1, Message::Start(_)));
        drop(server);
        assert!(matches!(client.recv(), Err(Error::Closed)));
    }
}
