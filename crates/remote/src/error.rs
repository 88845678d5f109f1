//! Errors of the wire protocol. Every malformed input ends in one of these, never in a panic.

use std::fmt;

/// What went wrong while reading or checking a frame or a message.
#[derive(Debug)]
pub enum Error {
    /// The socket failed.
    Io(std::io::Error),
    /// A read did not complete within the socket's timeout.
    Timeout { waiting_for: &'static str },
    /// The peer closed the connection cleanly between two messages.
    Closed,
    /// The input ended inside a frame or a structure.
    Truncated {
        what: &'static str,
        need: usize,
        have: usize,
    },
    /// The header's own CRC-16 does not match its bytes.
    HeaderCrc { got: u16, want: u16 },
    /// A frame's payload CRC-16 does not match its bytes.
    PayloadCrc { opcode: u16, got: u16, want: u16 },
    /// The peer speaks another protocol version (fio accepts only its own exact value).
    Version { got: u16, want: u16 },
    /// A frame announces more than 1024 payload bytes.
    FragmentTooLarge { len: u32 },
    /// A reassembled message would exceed the limit (fio's 2048 MiB, or a smaller one set
    /// on the decoder).
    MessageTooLarge { len: u64, limit: u64 },
    /// A continuation frame carries another opcode than the first frame of its message.
    OpcodeChanged { first: u16, then: u16 },
    /// Opcode 0 or above 22.
    UnknownOpcode(u16),
    /// A payload has the wrong size for its opcode.
    Size {
        what: &'static str,
        got: usize,
        want: &'static str,
    },
    /// A field holds a value the layout does not allow (a count beyond its array, an
    /// offset outside the payload, text that is not UTF-8 where text is required).
    Field { what: &'static str, detail: String },
}

/// The fio release behind a protocol version, for messages (fio-protocol.md §8).
pub fn fio_release_of(version: u16) -> Option<&'static str> {
    Some(match version {
        97 => "fio 3.32/3.33",
        99 => "fio 3.34",
        100 => "fio 3.35",
        101 => "fio 3.36",
        103 => "fio 3.37",
        107 => "fio 3.38/3.39",
        111 => "fio 3.40",
        113 => "fio 3.41",
        120 => "fio 3.42",
        121 => "fio after 3.42",
        _ => return None,
    })
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "connection error: {e}"),
            Error::Timeout { waiting_for } => {
                write!(f, "timed out waiting for {waiting_for} from the peer")
            }
            Error::Closed => write!(f, "the peer closed the connection"),
            Error::Truncated { what, need, have } => write!(
                f,
                "truncated {what}: needs {need} bytes, only {have} arrived"
            ),
            Error::HeaderCrc { got, want } => write!(
                f,
                "bad CRC-16 on a command header (got {got:#06x}, computed {want:#06x})"
            ),
            Error::PayloadCrc { opcode, got, want } => write!(
                f,
                "bad CRC-16 on the payload of opcode {opcode} (got {got:#06x}, computed {want:#06x})"
            ),
            Error::Version { got, want } => {
                let name = |v: u16| match fio_release_of(v) {
                    Some(r) => format!("{v} ({r})"),
                    None => v.to_string(),
                };
                write!(
                    f,
                    "client/server protocol version mismatch: the peer speaks version {}, \
                     flexio speaks version {}; both sides must use the same version",
                    name(*got),
                    name(*want)
                )
            }
            Error::FragmentTooLarge { len } => {
                write!(f, "frame payload of {len} bytes exceeds the 1024-byte limit")
            }
            Error::MessageTooLarge { len, limit } => {
                write!(f, "message of {len} bytes exceeds the limit of {limit} bytes")
            }
            Error::OpcodeChanged { first, then } => write!(
                f,
                "a fragmented message changed opcode from {first} to {then}"
            ),
            Error::UnknownOpcode(op) => write!(f, "unknown opcode {op}"),
            Error::Size { what, got, want } => {
                write!(f, "{what} payload has {got} bytes, expected {want}")
            }
            Error::Field { what, detail } => write!(f, "bad {what}: {detail}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_mismatch_names_both_versions() {
        let m = Error::Version { got: 120, want: 97 }.to_string();
        assert!(m.contains("120 (fio 3.42)"), "{m}");
        assert!(m.contains("97 (fio 3.32/3.33)"), "{m}");
        // Each version is named once, with its release once.
        assert_eq!(m.matches("3.33").count(), 1, "{m}");
        assert_eq!(m.matches("fio 3.42").count(), 1, "{m}");
        assert!(
            m.ends_with(
                "the peer speaks version 120 (fio 3.42), flexio speaks version 97 \
                 (fio 3.32/3.33); both sides must use the same version"
            ),
            "{m}"
        );
        let m = Error::Version { got: 5, want: 97 }.to_string();
        assert!(m.contains("version 5,"), "{m}");
    }
}
