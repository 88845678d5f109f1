//! `nbd`: I/O to a Network Block Device server (fio's nbd engine, which uses libnbd; flexio
//! speaks the protocol itself). `uri=` names the export as libnbd's URIs do:
//! `nbd://host[:port][/export]`, `nbd+unix:///[export]?socket=/path`, and with TLS
//! `nbds://...` and `nbds+unix://...` (cargo feature `tls`): NBD_OPT_STARTTLS during the
//! fixed newstyle handshake, then TLS for the rest of the connection. libnbd's query
//! parameters choose the certificates: `tls-certificates=DIR` (its `ca-cert.pem` is the CA;
//! `client-cert.pem` and `client-key.pem`, when there, are presented to the server; without
//! it libnbd's default directories, else the system's CAs), `tls-verify-peer=false|true`
//! (on by default over TCP, off over a Unix socket, as libnbd does) and `tls-hostname=`
//! (the name the certificate must carry; the URI's host by default). TLS with a pre-shared
//! key (`tls-psk-file`) is refused: rustls has no PSK. The export's size is the job's
//! target size; requests are pipelined up to the job's iodepth: `queue` sends a request,
//! `reap` reads the server's replies (simple replies, fixed newstyle handshake with
//! NBD_OPT_GO, falling back to NBD_OPT_EXPORT_NAME). Trims and syncs become NBD_CMD_TRIM
//! and NBD_CMD_FLUSH when the server offers them (EOPNOTSUPP otherwise).

use crate::api::{Caps, Completion, Engine, EngineConfig, EngineDef, IoReq, Op, Queued};
use flexio_job::engine_opts::parse;
use flexio_job::table::{Kind, OptDef};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;

flexio_job::engine_options! {
    /// nbd's options.
    pub struct NbdOpts; rows OPTIONS;
    /// The export's URI.
    uri: Option<String> = None,
        "uri", Kind::Str, "", "Name of NBD URI",
        |v, kb| parse::string(v, kb).map(Some);
}

const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
const REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
const REQ_MAGIC: u32 = 0x2560_9513;
const SIMPLE_REPLY: u32 = 0x6744_6698;
const OPT_EXPORT_NAME: u32 = 1;
#[cfg(feature = "tls")]
const OPT_STARTTLS: u32 = 5;
const OPT_GO: u32 = 7;
const REP_ACK: u32 = 1;
const REP_INFO: u32 = 3;
const REP_ERR_UNSUP: u32 = 0x8000_0001;
#[cfg(feature = "tls")]
const REP_ERR_POLICY: u32 = 0x8000_0002;
const REP_ERR_TLS_REQD: u32 = 0x8000_0005;
const FLAG_FIXED_NEWSTYLE: u16 = 1;
const FLAG_NO_ZEROES: u16 = 2;
const TFLAG_SEND_FLUSH: u16 = 1 << 2;
const TFLAG_SEND_TRIM: u16 = 1 << 5;
const CMD_READ: u16 = 0;
const CMD_WRITE: u16 = 1;
const CMD_DISC: u16 = 2;
const CMD_FLUSH: u16 = 3;
const CMD_TRIM: u16 = 4;
/// Reply bytes allowed outstanding before `queue` says busy (the server must never block
/// on a full socket while flexio blocks sending).
const MAX_PENDING_READ: usize = 1 << 20;

/// Where the export is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Tcp { host: String, port: u16 },
    Unix { path: String },
}

/// An `nbds` URI's TLS settings (libnbd's query parameters).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsParams {
    /// `tls-certificates=DIR`.
    pub certificates: Option<String>,
    /// `tls-verify-peer=`; `None`: libnbd's default (on over TCP, off over a Unix socket).
    pub verify_peer: Option<bool>,
    /// `tls-hostname=`: the name the server's certificate must carry.
    pub hostname: Option<String>,
}

/// A parsed NBD URI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uri {
    pub target: Target,
    pub export: String,
    /// `Some` for `nbds` URIs.
    pub tls: Option<TlsParams>,
}

impl Uri {
    /// Whether the server's certificate is checked.
    pub fn verifies(&self) -> bool {
        let tcp = matches!(self.target, Target::Tcp { .. });
        self.tls.as_ref().is_some_and(|t| t.verify_peer.unwrap_or(tcp))
    }

    /// The name the server's certificate must carry.
    pub fn server_name(&self) -> String {
        match (&self.tls, &self.target) {
            (Some(TlsParams { hostname: Some(h), .. }), _) => h.clone(),
            (_, Target::Tcp { host, .. }) => host.clone(),
            (_, Target::Unix { .. }) => "localhost".into(),
        }
    }
}

/// Parse an NBD URI into the target, the export name and (for `nbds`) the TLS settings.
pub fn parse_uri(uri: &str) -> Result<Uri, String> {
    let bad = || format!("nbd: cannot use URI '{uri}' (nbd[s]://host[:port][/export] or nbd[s]+unix:///[export]?socket=PATH)");
    let (scheme, rest) = uri.split_once("://").ok_or_else(bad)?;
    let (tls, unix) = match scheme {
        "nbd" => (false, false),
        "nbds" => (true, false),
        "nbd+unix" => (false, true),
        "nbds+unix" => (true, true),
        _ => return Err(bad()),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, q),
        None => (rest, ""),
    };
    let param = |name: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
            .map(str::to_string)
    };
    let tls = if tls {
        if !cfg!(feature = "tls") {
            return Err(format!("nbd: TLS (nbds://) is not supported by this flexio build: it was built without TLS (cargo feature `tls`): {uri}"));
        }
        if param("tls-psk-file").is_some() {
            return Err(format!("nbd: tls-psk-file (TLS with a pre-shared key) is not supported by flexio (rustls has no PSK); use certificates (tls-certificates=DIR): {uri}"));
        }
        let verify_peer = match param("tls-verify-peer").as_deref() {
            None => None,
            Some("true" | "1" | "yes" | "on") => Some(true),
            Some("false" | "0" | "no" | "off") => Some(false),
            Some(v) => return Err(format!("nbd: tls-verify-peer={v}: true or false: {uri}")),
        };
        Some(TlsParams {
            certificates: param("tls-certificates"),
            verify_peer,
            hostname: param("tls-hostname"),
        })
    } else {
        None
    };
    if unix {
        // An authority (libnbd allows a user name before '@') and the export after '/'.
        let path_part = rest.split_once('/').map_or("", |(_, p)| p);
        let socket = param("socket").ok_or_else(bad)?;
        return Ok(Uri {
            target: Target::Unix { path: socket },
            export: path_part.to_string(),
            tls,
        });
    }
    let (hostport, export) = match rest.split_once('/') {
        Some((h, e)) => (h, e.to_string()),
        None => (rest, String::new()),
    };
    // A user name (libnbd's tls-username for PSK) before '@' names no host.
    let hostport = hostport.rsplit_once('@').map_or(hostport, |(_, h)| h);
    let port_of = |p: &str| p.parse::<u16>().map_err(|_| bad());
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        // An IPv6 address in brackets, then an optional `:port`.
        let (h, after) = v6.split_once(']').ok_or_else(bad)?;
        let port = match after {
            "" => 10809,
            p => port_of(p.strip_prefix(':').ok_or_else(bad)?)?,
        };
        (h.to_string(), port)
    } else {
        match hostport.split_once(':') {
            // More than one colon: an IPv6 address without brackets, on the default port.
            Some((_, p)) if p.contains(':') => (hostport.to_string(), 10809),
            Some((h, p)) => (h.to_string(), port_of(p)?),
            None => (hostport.to_string(), 10809),
        }
    };
    if host.is_empty() {
        return Err(bad());
    }
    Ok(Uri { target: Target::Tcp { host, port }, export, tls })
}

enum Conn {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// After NBD_OPT_STARTTLS: TLS over the TCP or Unix connection.
    #[cfg(feature = "tls")]
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, Conn>>),
}

impl Read for Conn {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.read(b),
            Conn::Unix(s) => s.read(b),
            #[cfg(feature = "tls")]
            Conn::Tls(s) => s.read(b),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write(b),
            Conn::Unix(s) => s.write(b),
            #[cfg(feature = "tls")]
            Conn::Tls(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            #[cfg(feature = "tls")]
            Conn::Tls(s) => s.flush(),
            _ => Ok(()),
        }
    }
}

/// libnbd's default certificate directories: /etc/pki/libnbd for root, else
/// `$HOME/.pki/libnbd` and `$HOME/.config/pki/libnbd`; the first that exists.
#[cfg(feature = "tls")]
fn default_cert_dir() -> Option<std::path::PathBuf> {
    let dirs: Vec<std::path::PathBuf> = if rustix::process::geteuid().is_root() {
        vec!["/etc/pki/libnbd".into()]
    } else {
        let home = std::path::PathBuf::from(std::env::var_os("HOME")?);
        vec![home.join(".pki/libnbd"), home.join(".config/pki/libnbd")]
    };
    dirs.into_iter().find(|d| d.is_dir())
}

/// The TLS client of an `nbds` URI: the CA and client certificate of its certificate
/// directory (or libnbd's default one, or the system's CAs), or no verification.
#[cfg(feature = "tls")]
fn tls_client(uri: &Uri) -> io::Result<crate::tls::Client> {
    use crate::tls::{pem_certs, pem_key, Client, Trust};
    let fail = |m: String| io::Error::new(io::ErrorKind::InvalidInput, format!("nbd: {m}"));
    let t = uri.tls.clone().unwrap_or_default();
    let dir = match &t.certificates {
        Some(d) => {
            let d = std::path::PathBuf::from(d);
            if !d.is_dir() {
                return Err(fail(format!("tls-certificates={}: not a directory", d.display())));
            }
            Some(d)
        }
        None => default_cert_dir(),
    };
    let ca = dir.as_ref().map(|d| d.join("ca-cert.pem")).filter(|p| p.is_file());
    let trust = match (uri.verifies(), ca) {
        (false, _) => Trust::Insecure,
        (true, Some(ca)) => Trust::CaFile(ca),
        (true, None) => Trust::System,
    };
    let identity = match dir.map(|d| (d.join("client-cert.pem"), d.join("client-key.pem"))) {
        Some((c, k)) if c.is_file() && k.is_file() => {
            Some((pem_certs(&c).map_err(fail)?, pem_key(&k).map_err(fail)?))
        }
        _ => None,
    };
    Client::new(&trust, identity).map_err(fail)
}

/// NBD_OPT_STARTTLS, then the TLS handshake over `c`.
#[cfg(feature = "tls")]
fn start_tls(mut c: Conn, uri: &Uri) -> io::Result<Conn> {
    let client = tls_client(uri)?;
    let mut opt = Vec::with_capacity(16);
    opt.extend_from_slice(&IHAVEOPT.to_be_bytes());
    opt.extend_from_slice(&OPT_STARTTLS.to_be_bytes());
    opt.extend_from_slice(&0u32.to_be_bytes());
    c.write_all(&opt)?;
    let (rtype, _data) = option_reply(&mut c)?;
    match rtype {
        REP_ACK => {}
        REP_ERR_UNSUP | REP_ERR_POLICY => {
            return Err(proto(format!(
                "the server does not offer TLS (NBD_OPT_STARTTLS refused, error {rtype:#x}); use an nbd:// URI"
            )))
        }
        _ => return Err(proto(format!("NBD_OPT_STARTTLS failed (reply {rtype:#x})"))),
    }
    let name = uri.server_name();
    let t = client
        .connect(&name, c)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("nbd: {e}")))?;
    Ok(Conn::Tls(Box::new(t)))
}

/// One reply of the newstyle option haggling: its type and its data (at most 1 MiB kept).
fn option_reply(c: &mut Conn) -> io::Result<(u32, Vec<u8>)> {
    if be64(c)? != REPLY_MAGIC {
        return Err(proto("bad option reply"));
    }
    let _opt = be32(c)?;
    let rtype = be32(c)?;
    let len = be32(c)? as usize;
    let mut data = vec![0u8; len.min(1 << 20)];
    c.read_exact(&mut data)?;
    Ok((rtype, data))
}

fn be64(c: &mut Conn) -> io::Result<u64> {
    let mut b = [0u8; 8];
    c.read_exact(&mut b)?;
    Ok(u64::from_be_bytes(b))
}

fn be32(c: &mut Conn) -> io::Result<u32> {
    let mut b = [0u8; 4];
    c.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

fn be16(c: &mut Conn) -> io::Result<u16> {
    let mut b = [0u8; 2];
    c.read_exact(&mut b)?;
    Ok(u16::from_be_bytes(b))
}

fn proto(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("nbd: {}", msg.into()))
}

/// An open export: the connection, its size and transmission flags.
struct Export {
    conn: Conn,
    size: u64,
    flags: u16,
}

/// Connect and negotiate (fixed newstyle; STARTTLS first for `nbds`).
fn connect(uri: &str) -> io::Result<Export> {
    let parsed = parse_uri(uri).map_err(|m| io::Error::new(io::ErrorKind::InvalidInput, m))?;
    let (target, export) = (&parsed.target, &parsed.export);
    let mut c = match target {
        Target::Tcp { host, port } => {
            let s = TcpStream::connect((host.as_str(), *port))
                .map_err(|e| io::Error::new(e.kind(), format!("nbd: connect {host}:{port}: {e}")))?;
            let _ = s.set_nodelay(true);
            Conn::Tcp(s)
        }
        Target::Unix { path } => Conn::Unix(
            UnixStream::connect(path)
                .map_err(|e| io::Error::new(e.kind(), format!("nbd: connect {path}: {e}")))?,
        ),
    };
    if be64(&mut c)? != NBDMAGIC {
        return Err(proto("not an NBD server"));
    }
    if be64(&mut c)? != IHAVEOPT {
        return Err(proto("server speaks only the old-style handshake"));
    }
    let hflags = be16(&mut c)?;
    if hflags & FLAG_FIXED_NEWSTYLE == 0 {
        return Err(proto("server lacks the fixed newstyle handshake"));
    }
    let no_zeroes = hflags & FLAG_NO_ZEROES != 0;
    let cflags: u32 = 1 | if no_zeroes { 2 } else { 0 };
    c.write_all(&cflags.to_be_bytes())?;
    #[cfg(feature = "tls")]
    if parsed.tls.is_some() {
        c = start_tls(c, &parsed)?;
    }
    // NBD_OPT_GO: export name, no information requests.
    let mut opt = Vec::with_capacity(32 + export.len());
    opt.extend_from_slice(&IHAVEOPT.to_be_bytes());
    opt.extend_from_slice(&OPT_GO.to_be_bytes());
    opt.extend_from_slice(&((4 + export.len() + 2) as u32).to_be_bytes());
    opt.extend_from_slice(&(export.len() as u32).to_be_bytes());
    opt.extend_from_slice(export.as_bytes());
    opt.extend_from_slice(&0u16.to_be_bytes());
    c.write_all(&opt)?;
    let mut info: Option<(u64, u16)> = None;
    loop {
        let (rtype, data) = option_reply(&mut c)?;
        if rtype == REP_INFO && data.len() >= 12 && data[..2] == [0, 0] {
            let size = u64::from_be_bytes(data[2..10].try_into().unwrap_or([0; 8]));
            let flags = u16::from_be_bytes([data[10], data[11]]);
            info = Some((size, flags));
        } else if rtype == REP_ACK {
            let (size, flags) = info.ok_or_else(|| proto("server sent no export information"))?;
            return Ok(Export { conn: c, size, flags });
        } else if rtype & 0x8000_0000 != 0 {
            // NBD_OPT_GO unknown to an old server: the original option.
            if rtype == REP_ERR_UNSUP {
                let mut opt = Vec::new();
                opt.extend_from_slice(&IHAVEOPT.to_be_bytes());
                opt.extend_from_slice(&OPT_EXPORT_NAME.to_be_bytes());
                opt.extend_from_slice(&(export.len() as u32).to_be_bytes());
                opt.extend_from_slice(export.as_bytes());
                c.write_all(&opt)?;
                let size = be64(&mut c)?;
                let flags = be16(&mut c)?;
                if !no_zeroes {
                    let mut z = [0u8; 124];
                    c.read_exact(&mut z)?;
                }
                return Ok(Export { conn: c, size, flags });
            }
            let text = String::from_utf8_lossy(&data).into_owned();
            if rtype == REP_ERR_TLS_REQD {
                return Err(proto(format!(
                    "the server requires TLS for export '{export}': use an nbds:// URI{}{text}",
                    if text.is_empty() { "" } else { " — " }
                )));
            }
            return Err(proto(format!(
                "server refused export '{export}' (error {:#x}){}{text}",
                rtype,
                if text.is_empty() { "" } else { ": " }
            )));
        }
    }
}

/// A request in flight: what to do with its reply.
#[derive(Clone, Copy)]
struct Pending {
    read_buf: *mut u8,
    read_len: usize,
    len: usize,
}

pub struct Nbd {
    uri: Option<String>,
    export: Option<Export>,
    pending: Vec<Option<Pending>>,
    pending_read: usize,
    /// Request header, reused.
    hdr: [u8; 28],
}

// SAFETY: the raw buffer pointers in `pending` point into the job thread's I/O buffers,
// which only that thread (the engine's owner) touches.
unsafe impl Send for Nbd {}

impl Nbd {
    fn send(&mut self, cmd: u16, handle: u64, off: u64, len: u32, data: Option<&[u8]>) -> io::Result<()> {
        let Some(e) = self.export.as_mut() else {
            return Err(io::Error::from_raw_os_error(libc::ENOTCONN));
        };
        let h = &mut self.hdr;
        h[0..4].copy_from_slice(&REQ_MAGIC.to_be_bytes());
        h[4..6].copy_from_slice(&0u16.to_be_bytes());
        h[6..8].copy_from_slice(&cmd.to_be_bytes());
        h[8..16].copy_from_slice(&handle.to_be_bytes());
        h[16..24].copy_from_slice(&off.to_be_bytes());
        h[24..28].copy_from_slice(&len.to_be_bytes());
        e.conn.write_all(h)?;
        if let Some(d) = data {
            e.conn.write_all(d)?;
        }
        Ok(())
    }

    /// Read one reply: (handle, result).
    fn reply(&mut self) -> io::Result<Completion> {
        let Some(e) = self.export.as_mut() else {
            return Err(io::Error::from_raw_os_error(libc::ENOTCONN));
        };
        if be32(&mut e.conn)? != SIMPLE_REPLY {
            return Err(proto("bad reply magic"));
        }
        let err = be32(&mut e.conn)?;
        let handle = be64(&mut e.conn)?;
        // (A handle past usize on a 32-bit target was never sent either: not its low bits.)
        let p = usize::try_from(handle)
            .ok()
            .and_then(|idx| self.pending.get_mut(idx))
            .and_then(|p| p.take())
            .ok_or_else(|| proto("reply for a request never sent"))?;
        self.pending_read -= p.read_len;
        if err == 0 && p.read_len > 0 {
            // SAFETY: the buffer of a queued read stays valid and untouched by the core
            // until its completion is handed back, which happens after this call.
            let buf = unsafe { std::slice::from_raw_parts_mut(p.read_buf, p.read_len) };
            e.conn.read_exact(buf)?;
        }
        let res = if err == 0 { p.len as i64 } else { -(err as i64) };
        Ok(Completion { idx: handle as u32, res })
    }
}

impl EngineDef for Nbd {
    const NAME: &'static str = "nbd";
    const HELP: &'static str = "I/O to a Network Block Device export (uri=nbd://... or nbd+unix://...)";
    const OPTIONS: &'static [&'static [OptDef]] = &[OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        Nbd {
            uri: NbdOpts::from_values(&cfg.values).uri,
            export: None,
            pending: vec![None; cfg.iodepth.max(1) as usize],
            pending_read: 0,
            hdr: [0; 28],
        }
    }
    fn probe(cfg: &EngineConfig) -> Result<(), String> {
        match NbdOpts::from_values(&cfg.values).uri {
            None => Err("nbd: uri= is required (nbd://host[:port][/export] or nbd+unix:///?socket=PATH)".into()),
            Some(u) => parse_uri(&u).map(|_| ()),
        }
    }
    fn target_size(cfg: &EngineConfig) -> Result<Option<u64>, String> {
        let uri = NbdOpts::from_values(&cfg.values).uri.unwrap_or_default();
        let mut e = connect(&uri).map_err(|e| e.to_string())?;
        let size = e.size;
        disconnect(&mut e);
        Ok(Some(size))
    }
}

fn disconnect(e: &mut Export) {
    let mut h = [0u8; 28];
    h[0..4].copy_from_slice(&REQ_MAGIC.to_be_bytes());
    h[6..8].copy_from_slice(&CMD_DISC.to_be_bytes());
    let _ = e.conn.write_all(&h);
}

impl Engine for Nbd {
    fn caps(&self) -> Caps {
        Caps {
            diskless: true,
            no_fd: true,
            pipe: true,
            trim: true,
            no_extend: true,
            ..Caps::default()
        }
    }
    fn init(&mut self) -> io::Result<()> {
        let uri = self.uri.clone().unwrap_or_default();
        self.export = Some(connect(&uri)?);
        Ok(())
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        let idx = io.idx as usize;
        if idx >= self.pending.len() {
            self.pending.resize(idx + 1, None);
        }
        let flags = self.export.as_ref().map_or(0, |e| e.flags);
        let (cmd, read_len) = match io.op {
            Op::Read => (CMD_READ, io.len),
            Op::Write => (CMD_WRITE, 0),
            Op::Trim if flags & TFLAG_SEND_TRIM != 0 => (CMD_TRIM, 0),
            Op::Sync | Op::Datasync if flags & TFLAG_SEND_FLUSH != 0 => (CMD_FLUSH, 0),
            Op::Sync | Op::Datasync => return Queued::Completed(0),
            Op::Trim => return Queued::Completed(-(libc::EOPNOTSUPP as i64)),
            // The plan refuses sync_file_range for engines without Caps::sync_range.
            Op::SyncRange => return Queued::Completed(-(libc::EINVAL as i64)),
        };
        if read_len > 0 && self.pending_read > 0 && self.pending_read + read_len > MAX_PENDING_READ {
            return Queued::Busy;
        }
        // SAFETY: the core guarantees `buf` points to `len` bytes it owns, valid and
        // unmoved until this request completes; a write's data is only read here.
        let data = (cmd == CMD_WRITE).then(|| unsafe { std::slice::from_raw_parts(io.buf, io.len) });
        let (off, len) = if cmd == CMD_FLUSH { (0, 0) } else { (io.offset, io.len as u32) };
        if let Err(e) = self.send(cmd, idx as u64, off, len, data) {
            return Queued::Completed(-(e.raw_os_error().unwrap_or(libc::EIO) as i64));
        }
        self.pending[idx] = Some(Pending {
            read_buf: io.buf,
            read_len,
            len: if cmd == CMD_FLUSH { 0 } else { io.len },
        });
        self.pending_read += read_len;
        Queued::Queued
    }
    fn reap(&mut self, min: usize, _max: usize, out: &mut Vec<Completion>) -> io::Result<usize> {
        let outstanding = self.pending.iter().filter(|p| p.is_some()).count();
        let n = min.max(1).min(outstanding);
        for _ in 0..n {
            out.push(self.reply()?);
        }
        Ok(n)
    }
}

impl Drop for Nbd {
    fn drop(&mut self) {
        if let Some(e) = self.export.as_mut() {
            disconnect(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        let tp = |u: &str| {
            let p = parse_uri(u).unwrap();
            (p.target, p.export)
        };
        assert_eq!(
            tp("nbd://localhost"),
            (Target::Tcp { host: "localhost".into(), port: 10809 }, String::new())
        );
        assert_eq!(
            tp("nbd://127.0.0.1:1234/disk"),
            (Target::Tcp { host: "127.0.0.1".into(), port: 1234 }, "disk".into())
        );
        assert_eq!(
            tp("nbd+unix:///exp?socket=/tmp/s"),
            (Target::Unix { path: "/tmp/s".into() }, "exp".into())
        );
        assert!(parse_uri("nbd://h").unwrap().tls.is_none());
        // IPv6: in brackets with and without a port, and bare on the default port.
        let v6 = |port| Target::Tcp { host: "::1".into(), port };
        assert_eq!(tp("nbd://[::1]"), (v6(10809), String::new()));
        assert_eq!(tp("nbd://[::1]/e"), (v6(10809), "e".into()));
        assert_eq!(tp("nbd://[::1]:1234/e"), (v6(1234), "e".into()));
        assert_eq!(tp("nbd://::1"), (v6(10809), String::new()));
        assert!(parse_uri("nbd://[::1").is_err());
        assert!(parse_uri("nbd://[::1]x").is_err());
        assert!(parse_uri("nbd://[::1]:").is_err());
        assert!(parse_uri("nbd://h:99999").is_err());
        assert!(parse_uri("http://h").is_err());
        assert!(parse_uri("nbd+unix:///x").is_err());
        assert!(parse_uri("nbdx://h").is_err());
    }

    #[cfg(feature = "tls")]
    #[test]
    fn tls_uris() {
        let u = parse_uri("nbds://h.example:1234/disk?tls-certificates=/c").unwrap();
        assert_eq!(u.target, Target::Tcp { host: "h.example".into(), port: 1234 });
        assert_eq!(u.export, "disk");
        let t = u.tls.clone().unwrap();
        assert_eq!(t.certificates.as_deref(), Some("/c"));
        // Over TCP the peer is checked by default, against the URI's host.
        assert!(u.verifies());
        assert_eq!(u.server_name(), "h.example");
        let u = parse_uri("nbds+unix://alice@/exp?socket=/tmp/s&tls-certificates=certs").unwrap();
        assert_eq!(u.target, Target::Unix { path: "/tmp/s".into() });
        assert_eq!(u.export, "exp");
        // Over a Unix socket not, unless asked (libnbd's defaults).
        assert!(!u.verifies());
        let u = parse_uri("nbds+unix:///?socket=/s&tls-verify-peer=true&tls-hostname=srv").unwrap();
        assert!(u.verifies());
        assert_eq!(u.server_name(), "srv");
        assert_eq!(parse_uri("nbds+unix:///?socket=/s&tls-verify-peer=true").unwrap().server_name(), "localhost");
        let u = parse_uri("nbds://h?tls-verify-peer=false").unwrap();
        assert!(!u.verifies());
        assert!(parse_uri("nbds://h?tls-verify-peer=maybe").unwrap_err().contains("true or false"));
        assert!(parse_uri("nbds://h?tls-psk-file=/k").unwrap_err().contains("not supported by flexio"));
    }

    #[cfg(not(feature = "tls"))]
    #[test]
    fn tls_uris_need_the_feature() {
        let e = parse_uri("nbds://h").unwrap_err();
        assert!(e.contains("built without TLS"), "{e}");
    }
}
