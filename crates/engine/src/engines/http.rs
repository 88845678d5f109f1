//! `http`: objects over HTTP (fio's http engine, which uses libcurl; flexio speaks HTTP/1.1
//! itself). Each request is one object named `<filename>_<offset>_<length>` on
//! `http_host`: a write PUTs it, a read GETs it (a missing object reads as zeros, as in
//! fio), a trim DELETEs it. `http_mode=webdav` sends plain requests (with basic
//! authentication when `http_user`/`http_pass` are set); `http_mode=s3` signs each request
//! with AWS Signature Version 4 (`http_s3_keyid`, `http_s3_key`, `http_s3_region`), as
//! fio does; `http_mode=swift` sends `http_swift_auth_token` as `X-Auth-Token` (and basic
//! authentication as webdav does), with each upload's MD5 as its `Etag`. Connections are
//! kept alive when the server allows. `https=on` speaks TLS (cargo feature `tls`, rustls),
//! checking the server's certificate against the system's CAs as fio's libcurl does (or a
//! bundle named by `SSL_CERT_FILE`, `CURL_CA_BUNDLE` or `SSL_CERT_DIR`; `crate::tls`);
//! `https=insecure` checks neither the certificate nor the name. S3 requests may carry
//! server-side encryption with a
//! customer key (`http_s3_sse_customer_key`/`_algorithm`: the key base64-encoded and its
//! MD5), a storage class for uploads (`http_s3_storage_class`) and a session token
//! (`http_s3_security_token`, fio 3.41), all signed. `http_object_mode=range` (fio 3.41)
//! reads one object per file, named by the file, with `Range:` requests.

use crate::api::{Caps, Engine, EngineConfig, EngineDef, IoReq, Op, Queued};
use crate::sha256::{hex, hmac_sha256, sha256};
use flexio_job::engine_opts::parse;
use flexio_job::table::{Kind, OptDef};
use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// Request flavour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Webdav,
    S3,
    Swift,
}

flexio_job::engine_options! {
    /// The http engine's options (fio's, in fio's order).
    pub struct HttpOpts; rows OPTIONS;
    /// off / on / insecure (TLS needs the cargo feature `tls`).
    https: u8 = 0,
        "https", Kind::Choice(&[
            ("off", "No HTTPS"),
            ("on", "Enable HTTPS"),
            ("insecure", "Enable HTTPS, disable peer verification"),
        ]), "off", "Enable https",
        |v, _| parse::choice(v, &[("off", 0u8), ("on", 1), ("insecure", 2)]);
    /// Host (and port): the server, or the S3 bucket's host.
    http_host: String = "localhost".to_string(),
        "http_host", Kind::Str, "localhost", "Hostname (S3 bucket)", parse::string;
    http_user: Option<String> = None,
        "http_user", Kind::Str, "", "HTTP user name",
        |v, kb| parse::string(v, kb).map(Some);
    http_pass: Option<String> = None,
        "http_pass", Kind::Str, "", "HTTP password",
        |v, kb| parse::string(v, kb).map(Some);
    http_s3_key: String = String::new(),
        "http_s3_key", Kind::Str, "", "S3 secret key", parse::string;
    http_s3_keyid: String = String::new(),
        "http_s3_keyid", Kind::Str, "", "S3 key id", parse::string;
    http_swift_auth_token: String = String::new(),
        "http_swift_auth_token", Kind::Str, "", "OpenStack Swift auth token", parse::string;
    http_s3_region: String = "us-east-1".to_string(),
        "http_s3_region", Kind::Str, "us-east-1", "S3 region", parse::string;
    http_mode: Mode = Mode::Webdav,
        "http_mode", Kind::Choice(&[
            ("webdav", "WebDAV server"),
            ("s3", "S3 storage backend"),
            ("swift", "OpenStack Swift storage"),
        ]), "webdav", "Whether to use WebDAV, Swift, or S3",
        |v, _| parse::choice(v, &[("webdav", Mode::Webdav), ("s3", Mode::S3), ("swift", Mode::Swift)]);
    /// 1: one line per request on stderr; 2: also the response headers.
    http_verbose: u32 = 0,
        "http_verbose", Kind::Int { min: 0, max: i32::MAX as i64 }, "0",
        "increase http engine verbosity",
        |v, kb| parse::int(v, kb, 0, i32::MAX as i64).map(|n| n as u32);
    /// SSE-C: the customer's key (sent base64-encoded, with its MD5).
    http_s3_sse_customer_key: Option<String> = None,
        "http_s3_sse_customer_key", Kind::Str, "", "S3 SSE Customer Key",
        |v, kb| parse::string(v, kb).map(Some);
    /// SSE-C: the algorithm.
    http_s3_sse_customer_algorithm: String = "AES256".to_string(),
        "http_s3_sse_customer_algorithm", Kind::Str, "AES256",
        "S3 SSE Customer Algorithm", parse::string;
    /// The storage class of uploaded objects (sent when set; S3's default is STANDARD).
    http_s3_storage_class: Option<String> = None,
        "http_s3_storage_class", Kind::Str, "STANDARD", "S3 Storage class",
        |v, kb| parse::string(v, kb).map(Some);
    /// A session token (temporary credentials; fio 3.41+).
    http_s3_security_token: Option<String> = None,
        "http_s3_security_token", Kind::Str, "", "S3 security token",
        |v, kb| parse::string(v, kb).map(Some), since "3.41";
    /// One object per request (`block`) or per file, read by ranges (`range`; fio 3.41+).
    http_object_mode: ObjectMode = ObjectMode::Block,
        "http_object_mode", Kind::Choice(&[
            ("block", "One object per block (the file name, offset and length name it)"),
            ("range", "One object per file, accessed by byte ranges"),
        ]), "block", "How to map I/O to objects",
        |v, _| parse::choice(v, &[("block", ObjectMode::Block), ("range", ObjectMode::Range)]),
        since "3.41";
}

/// What a build without TLS says to `https=on|insecure`.
#[cfg(not(feature = "tls"))]
const NO_TLS: &str = "http: https is not supported by this flexio build: it was built without TLS (cargo feature `tls`); use https=off";

/// `http_object_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectMode {
    Block,
    Range,
}

/// A connection: plain TCP or TLS over it.
enum Stream {
    Plain(TcpStream),
    #[cfg(feature = "tls")]
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Read for Stream {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(b),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.read(b),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(b),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// The TLS client of `https=on` (the system's CAs) or `https=insecure`.
#[cfg(feature = "tls")]
fn tls_client(https: u8) -> Result<crate::tls::Client, String> {
    let trust = if https == 2 {
        crate::tls::Trust::Insecure
    } else {
        crate::tls::Trust::System
    };
    crate::tls::Client::new(&trust, None).map_err(|e| format!("http: https: {e}"))
}

pub struct Http {
    opts: HttpOpts,
    /// The job's first file name (objects are named after it).
    file: String,
    conn: Option<BufReader<Stream>>,
    /// https: the TLS client, made at the first connection.
    #[cfg(feature = "tls")]
    tls: Option<crate::tls::Client>,
    /// Reused request, path and signing buffers.
    req: Vec<u8>,
    path: String,
    scratch: String,
    line: String,
}

/// AWS's URI encoding (unreserved characters and '/' kept).
fn uri_encode(s: &str, out: &mut String) {
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'~' | b'.' | b'/') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
}

fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in data.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                s.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// (YYYYMMDD, YYYYMMDDTHHMMSSZ) for the current UTC time.
fn amz_dates() -> (String, String) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    let short = format!("{y:04}{m:02}{d:02}");
    let iso = format!(
        "{short}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    );
    (short, iso)
}

/// The x-amz- headers of an S3 request beside the date and payload hash, sorted by name
/// as SigV4's canonical request wants them: server-side encryption with the customer's key,
/// the storage class of uploads, the session token.
fn s3_headers(o: &HttpOpts, method: &str, dsha: &str, iso: &str) -> Vec<(&'static str, String)> {
    let mut h: Vec<(&'static str, String)> = vec![
        ("x-amz-content-sha256", dsha.to_string()),
        ("x-amz-date", iso.to_string()),
    ];
    if let Some(t) = &o.http_s3_security_token {
        h.push(("x-amz-security-token", t.clone()));
    }
    if let Some(key) = &o.http_s3_sse_customer_key {
        use md5::Digest;
        h.push((
            "x-amz-server-side-encryption-customer-algorithm",
            o.http_s3_sse_customer_algorithm.clone(),
        ));
        h.push((
            "x-amz-server-side-encryption-customer-key",
            base64(key.as_bytes()),
        ));
        h.push((
            "x-amz-server-side-encryption-customer-key-md5",
            base64(&md5::Md5::digest(key.as_bytes())),
        ));
    }
    if let Some(c) = o.http_s3_storage_class.as_ref().filter(|_| method == "PUT") {
        h.push(("x-amz-storage-class", c.clone()));
    }
    h.sort_by(|a, b| a.0.cmp(b.0));
    h
}

impl Http {
    fn connect(&mut self) -> io::Result<()> {
        if self.conn.is_none() {
            let host = &self.opts.http_host;
            let port = if self.opts.https != 0 { 443 } else { 80 };
            let addr = if host.contains(':') && !host.ends_with(']') {
                host.clone()
            } else {
                format!("{host}:{port}")
            };
            let s = TcpStream::connect(&addr)
                .map_err(|e| io::Error::new(e.kind(), format!("http: connect {addr}: {e}")))?;
            let _ = s.set_nodelay(true);
            let s = self.secure(s)?;
            self.conn = Some(BufReader::with_capacity(64 << 10, s));
        }
        Ok(())
    }

    /// The connection as the job asks: TLS over `s` with https, else `s` itself.
    fn secure(&mut self, s: TcpStream) -> io::Result<Stream> {
        if self.opts.https == 0 {
            return Ok(Stream::Plain(s));
        }
        #[cfg(feature = "tls")]
        {
            if self.tls.is_none() {
                let c = tls_client(self.opts.https)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                self.tls = Some(c);
            }
            let Some(c) = &self.tls else {
                return Err(io::Error::from_raw_os_error(libc::EINVAL));
            };
            let name = crate::tls::host_of(&self.opts.http_host);
            c.connect(name, s)
                .map(|t| Stream::Tls(Box::new(t)))
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("http: {e}")))
        }
        #[cfg(not(feature = "tls"))]
        {
            drop(s);
            Err(io::Error::new(io::ErrorKind::Unsupported, NO_TLS))
        }
    }

    /// The request head (and S3 or basic authentication headers) into `self.req`; `range`:
    /// the bytes a read asks for (`http_object_mode=range`).
    fn head(&mut self, method: &str, body: &[u8], range: Option<(u64, usize)>) {
        self.req.clear();
        let o = &self.opts;
        let _ = write!(
            self.req,
            "{method} {} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n",
            self.path,
            o.http_host,
            body.len()
        );
        if let Some((off, len)) = range {
            let _ = write!(
                self.req,
                "Range: bytes={off}-{}\r\n",
                off + len.max(1) as u64 - 1
            );
        }
        if o.http_mode == Mode::S3 {
            let (short, iso) = amz_dates();
            let dsha = hex(&sha256(body));
            let headers = s3_headers(o, method, &dsha, &iso);
            self.scratch.clear();
            let _ = write!(self.scratch, "{method}\n{}\n\nhost:{}\n", self.path, o.http_host);
            for (k, v) in &headers {
                let _ = writeln!(self.scratch, "{k}:{v}");
            }
            let mut signed = String::from("host");
            for (k, _) in &headers {
                signed.push(';');
                signed.push_str(k);
            }
            let _ = write!(self.scratch, "\n{signed}\n{dsha}");
            let csha = hex(&sha256(self.scratch.as_bytes()));
            let scope = format!("{short}/{}/s3/aws4_request", o.http_s3_region);
            let sts = format!("AWS4-HMAC-SHA256\n{iso}\n{scope}\n{csha}");
            let mut k = hmac_sha256(format!("AWS4{}", o.http_s3_key).as_bytes(), short.as_bytes());
            k = hmac_sha256(&k, o.http_s3_region.as_bytes());
            k = hmac_sha256(&k, b"s3");
            k = hmac_sha256(&k, b"aws4_request");
            let sig = hex(&hmac_sha256(&k, sts.as_bytes()));
            for (k, v) in &headers {
                let _ = write!(self.req, "{k}: {v}\r\n");
            }
            let _ = write!(
                self.req,
                "Authorization: AWS4-HMAC-SHA256 Credential={}/{scope},SignedHeaders={signed},Signature={sig}\r\n",
                o.http_s3_keyid
            );
        } else {
            if let (Some(u), Some(p)) = (&o.http_user, &o.http_pass) {
                let _ = write!(self.req, "Authorization: Basic {}\r\n", base64(format!("{u}:{p}").as_bytes()));
            }
            if o.http_mode == Mode::Swift {
                // Swift: the token, and an upload's MD5 (which the server checks) as fio sends
                // them.
                if !o.http_swift_auth_token.is_empty() {
                    let _ = write!(self.req, "X-Auth-Token: {}\r\n", o.http_swift_auth_token);
                }
                if method == "PUT" {
                    use md5::Digest;
                    let _ = write!(self.req, "Etag: {}\r\n", hex(&md5::Md5::digest(body)));
                }
            }
        }
        self.req.extend_from_slice(b"\r\n");
    }

    /// Send one request and read the response; the body goes to `into` (up to its length).
    /// Returns (status, body bytes stored).
    fn exchange(
        &mut self,
        method: &str,
        body: &[u8],
        into: Option<&mut [u8]>,
        range: Option<(u64, usize)>,
    ) -> io::Result<(u32, usize)> {
        self.head(method, body, range);
        for attempt in 0..2 {
            self.connect()?;
            let c = self.conn.as_mut().map(|c| c.get_mut());
            let sent = match c {
                Some(s) => s.write_all(&self.req).and_then(|_| s.write_all(body)),
                None => Err(io::Error::from_raw_os_error(libc::ENOTCONN)),
            };
            match sent.and_then(|_| self.response(into.is_some())) {
                Ok((status, keep, len)) => {
                    let stored = match into {
                        Some(buf) => self.body(len, Some(buf))?,
                        None => self.body(len, None)?,
                    };
                    if !keep {
                        self.conn = None;
                    }
                    return Ok((status, stored));
                }
                // A kept-alive connection the server closed: once more on a new one.
                Err(_) if attempt == 0 => self.conn = None,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::from_raw_os_error(libc::EIO))
    }

    /// Status line and headers: (status, keep-alive, body length: Some(n), None = to close,
    /// or u64::MAX for chunked).
    fn response(&mut self, _reading: bool) -> io::Result<(u32, bool, Option<u64>)> {
        let c = self.conn.as_mut().ok_or_else(|| io::Error::from_raw_os_error(libc::ENOTCONN))?;
        self.line.clear();
        if c.read_line(&mut self.line)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "http: connection closed"));
        }
        let mut parts = self.line.split_whitespace();
        let version = parts.next().unwrap_or("");
        let status: u32 = parts.next().and_then(|s| s.parse().ok()).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, format!("http: bad status line '{}'", self.line.trim()))
        })?;
        let mut keep = version == "HTTP/1.1";
        let mut len: Option<u64> = None;
        if self.opts.http_verbose > 0 {
            eprintln!("http: {} -> {}", String::from_utf8_lossy(self.req.split(|b| *b == b'\r').next().unwrap_or(&[])), self.line.trim());
        }
        loop {
            self.line.clear();
            if c.read_line(&mut self.line)? == 0 {
                break;
            }
            let l = self.line.trim_end();
            if l.is_empty() {
                break;
            }
            if self.opts.http_verbose > 1 {
                eprintln!("http: < {l}");
            }
            if let Some((k, v)) = l.split_once(':') {
                let v = v.trim();
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.parse().ok();
                } else if k.eq_ignore_ascii_case("connection") {
                    keep = v.eq_ignore_ascii_case("keep-alive") || (keep && !v.eq_ignore_ascii_case("close"));
                } else if k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked") {
                    len = Some(u64::MAX);
                }
            }
        }
        if len.is_none() && status != 204 && status != 304 && (100..200).contains(&status).eq(&false) {
            keep = false;
        }
        Ok((status, keep, len))
    }

    /// Read the body, storing up to `into`'s length; returns bytes stored.
    fn body(&mut self, len: Option<u64>, mut into: Option<&mut [u8]>) -> io::Result<usize> {
        let c = self.conn.as_mut().ok_or_else(|| io::Error::from_raw_os_error(libc::ENOTCONN))?;
        let mut stored = 0usize;
        let mut sink = [0u8; 4096];
        let mut take = |c: &mut BufReader<Stream>, n: u64, stored: &mut usize| -> io::Result<()> {
            let mut left = n;
            while left > 0 {
                let room = into.as_ref().map_or(0, |b| b.len() - *stored);
                let r = if room > 0 {
                    let b = into.as_mut().map(|b| &mut b[*stored..]).unwrap_or(&mut sink[..]);
                    let k = (left.min(b.len() as u64)) as usize;
                    let got = c.read(&mut b[..k])?;
                    *stored += got;
                    got
                } else {
                    let k = left.min(sink.len() as u64) as usize;
                    c.read(&mut sink[..k])?
                };
                if r == 0 {
                    if n == u64::MAX - 1 {
                        return Ok(());
                    }
                    return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "http: short body"));
                }
                left -= r as u64;
            }
            Ok(())
        };
        match len {
            Some(u64::MAX) => loop {
                self.line.clear();
                c.read_line(&mut self.line)?;
                let n = u64::from_str_radix(self.line.trim().split(';').next().unwrap_or(""), 16)
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "http: bad chunk"))?;
                if n == 0 {
                    loop {
                        self.line.clear();
                        if c.read_line(&mut self.line)? == 0 || self.line.trim().is_empty() {
                            break;
                        }
                    }
                    break;
                }
                take(c, n, &mut stored)?;
                self.line.clear();
                c.read_line(&mut self.line)?;
            },
            Some(n) => take(c, n, &mut stored)?,
            None => take(c, u64::MAX - 1, &mut stored)?,
        }
        Ok(stored)
    }

    fn object_path(&mut self, offset: u64, len: usize) {
        self.path.clear();
        let name = match self.opts.http_object_mode {
            ObjectMode::Block => format!("{}_{offset}_{len}", self.file),
            ObjectMode::Range => self.file.clone(),
        };
        if !name.starts_with('/') {
            self.path.push('/');
        }
        uri_encode(&name, &mut self.path);
    }
}

impl EngineDef for Http {
    const NAME: &'static str = "http";
    const HELP: &'static str = "Objects over HTTP(S): WebDAV, S3 or Swift (one object per request)";
    const OPTIONS: &'static [&'static [OptDef]] = &[OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        Http {
            opts: HttpOpts::from_values(&cfg.values),
            // fio's default file name, $jobname.$jobnum.$filenum.
            file: cfg
                .filename
                .clone()
                .unwrap_or_else(|| format!("{}.{}.0", cfg.job_name, cfg.subjob)),
            conn: None,
            #[cfg(feature = "tls")]
            tls: None,
            req: Vec::with_capacity(1024),
            path: String::with_capacity(256),
            scratch: String::with_capacity(512),
            line: String::with_capacity(256),
        }
    }
    fn probe(cfg: &EngineConfig) -> Result<(), String> {
        let o = HttpOpts::from_values(&cfg.values);
        if o.https != 0 {
            // The CAs are read now, so that a missing or unreadable bundle stops the run
            // before it starts; the handshake comes with the first connection.
            #[cfg(feature = "tls")]
            tls_client(o.https)?;
            #[cfg(not(feature = "tls"))]
            return Err(NO_TLS.into());
        }
        if o.http_object_mode == ObjectMode::Range && (cfg.writes || !cfg.reads) {
            return Err("http: http_object_mode=range reads byte ranges of one object per file; writes and trims need http_object_mode=block".into());
        }
        Ok(())
    }
}

impl Engine for Http {
    fn caps(&self) -> Caps {
        Caps {
            syncio: true,
            diskless: true,
            no_fd: true,
            pipe: true,
            trim: true,
            ..Caps::default()
        }
    }
    fn init(&mut self) -> io::Result<()> {
        self.connect()
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        self.object_path(io.offset, io.len);
        let r = match io.op {
            Op::Write => {
                // SAFETY: `buf` points to `len` bytes the core owns and does not touch until
                // this request completes (inside this call); only read here.
                let body = unsafe { std::slice::from_raw_parts(io.buf, io.len) };
                self.exchange("PUT", body, None, None).map(|(s, _)| (s == 100 || (200..=204).contains(&s), s))
            }
            Op::Read => {
                // SAFETY: as above; written by the response body.
                let buf = unsafe { std::slice::from_raw_parts_mut(io.buf, io.len) };
                let range = (self.opts.http_object_mode == ObjectMode::Range)
                    .then_some((io.offset, io.len));
                match self.exchange("GET", &[], Some(&mut *buf), range) {
                    Ok((404, _)) => {
                        // A missing object reads as zeros (fio).
                        buf.fill(0);
                        Ok((true, 404))
                    }
                    Ok((s, _)) => Ok((s == 200 || (s == 206 && range.is_some()), s)),
                    Err(e) => Err(e),
                }
            }
            Op::Trim => self
                .exchange("DELETE", &[], None, None)
                .map(|(s, _)| (matches!(s, 200 | 202 | 204 | 404), s)),
            Op::Sync | Op::Datasync => return Queued::Completed(0),
            // The plan refuses sync_file_range for engines without Caps::sync_range.
            Op::SyncRange => return Queued::Completed(-(libc::EINVAL as i64)),
        };
        match r {
            Ok((true, _)) => Queued::Completed(io.len as i64),
            Ok((false, status)) => {
                eprintln!("fio: {} failed with HTTP status code {status}", match io.op {
                    Op::Write => "DDIR_WRITE",
                    Op::Read => "DDIR_READ",
                    _ => "DDIR_TRIM",
                });
                Queued::Completed(-(libc::EIO as i64))
            }
            Err(e) => Queued::Completed(-(e.raw_os_error().unwrap_or(libc::EIO) as i64)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_and_dates() {
        let mut s = String::new();
        uri_encode("/bucket/my obj_0_4096", &mut s);
        assert_eq!(s, "/bucket/my%20obj_0_4096");
        assert_eq!(base64(b"user:pass"), "dXNlcjpwYXNz");
        assert_eq!(base64(b"ab"), "YWI=");
        let (short, iso) = amz_dates();
        assert_eq!(short.len(), 8);
        assert!(iso.starts_with(&short) && iso.ends_with('Z') && iso.len() == 16);
    }

    fn cfg(opts: &[(&str, &str)]) -> EngineConfig {
        let mut o = flexio_job::JobOptions::default();
        for (k, v) in opts {
            let row = OPTIONS.iter().find(|r| r.name == *k).unwrap();
            (row.set)(&mut o, Some(v)).unwrap();
        }
        EngineConfig {
            values: o.engine.clone(),
            job_name: "h".into(),
            writes: true,
            ..EngineConfig::default()
        }
    }

    #[cfg(not(feature = "tls"))]
    #[test]
    fn https_needs_the_tls_feature() {
        for v in ["on", "insecure"] {
            let e = Http::probe(&cfg(&[("https", v)])).unwrap_err();
            assert!(e.contains("built without TLS"), "{e}");
        }
        assert!(Http::probe(&cfg(&[("http_mode", "swift")])).is_ok());
    }

    #[cfg(feature = "tls")]
    #[test]
    fn https_and_swift_are_accepted() {
        // https=insecure needs no CA; swift is a mode like the others.
        assert!(Http::probe(&cfg(&[("https", "insecure")])).is_ok());
        assert!(Http::probe(&cfg(&[("http_mode", "swift")])).is_ok());
        let mut h = Http::build(&cfg(&[
            ("http_mode", "swift"),
            ("http_swift_auth_token", "tok"),
        ]));
        h.path = "/b/o_0_3".into();
        h.head("PUT", b"abc", None);
        let head = String::from_utf8(h.req.clone()).unwrap();
        assert!(head.contains("X-Auth-Token: tok\r\n"), "{head}");
        // MD5("abc").
        assert!(head.contains("Etag: 900150983cd24fb0d6963f7d28e17f72\r\n"), "{head}");
        h.head("GET", b"", None);
        let head = String::from_utf8(h.req.clone()).unwrap();
        assert!(head.contains("X-Auth-Token: tok") && !head.contains("Etag"), "{head}");
    }

    #[test]
    fn s3_headers_are_sorted_and_complete() {
        let o = HttpOpts {
            http_s3_sse_customer_key: Some("0123456789abcdef0123456789abcdef".into()),
            http_s3_security_token: Some("tok".into()),
            http_s3_storage_class: Some("STANDARD".into()),
            ..HttpOpts::default()
        };
        let h = s3_headers(&o, "PUT", "d", "t");
        let names: Vec<&str> = h.iter().map(|x| x.0).collect();
        assert_eq!(
            names,
            [
                "x-amz-content-sha256",
                "x-amz-date",
                "x-amz-security-token",
                "x-amz-server-side-encryption-customer-algorithm",
                "x-amz-server-side-encryption-customer-key",
                "x-amz-server-side-encryption-customer-key-md5",
                "x-amz-storage-class",
            ]
        );
        assert_eq!(h[3].1, "AES256");
        assert_eq!(h[4].1, "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=");
        // MD5("0123456789abcdef0123456789abcdef") = 8516ac99..., base64.
        assert_eq!(h[5].1, "hRasmdxgYDKV3nvbahU1MA==");
        assert_eq!(h[6].1, "STANDARD");
        let g = s3_headers(&HttpOpts::default(), "GET", "d", "t");
        assert_eq!(g.len(), 2, "no storage class on reads, nothing unset");
    }
}
