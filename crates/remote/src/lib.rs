//! fio 3.33's client/server wire protocol (version 97), as documented in
//! `fio-protocol.md`: framing with CRC-16 and fragmentation ([`frame`]), every message
//! layout with typed encode/decode ([`msg`], [`ts`], [`gs`], [`pack`], [`iolog`], [`vstate`],
//! [`message`]), address strings ([`addr`]) and the conversions between fio's
//! `thread_stat` / `group_run_stats` and flexio's results model ([`convert`]).
//!
//! Pure: no threads, no job running. Malformed input of any kind is an [`Error`], never a
//! panic.

pub mod addr;
pub mod bytes;
pub mod convert;
pub mod crc;
pub mod error;
pub mod frame;
pub mod gs;
pub mod iolog;
pub mod message;
pub mod msg;
pub mod pack;
pub mod ts;
pub mod vstate;

pub use error::{Error, Result};
pub use frame::{Decoder, Opcode, RawMessage, VERSION};
pub use message::{Conn, Message, Sender};
pub use msg::Payload;
