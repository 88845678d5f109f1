//! Authentication between flexio clients and servers, on the server's one port.
//!
//! A flexio client that authenticates opens with a hello that a fio client never sends
//! (fio's first bytes are a PROBE header, whose first byte is 0), then proves it knows the
//! pre-shared token without sending it:
//!
//! ```text
//! C→S  "FLXHELO1" method(1 = token) nonce_c[32]
//! S→C  "FLXHELO1" 0 nonce_s[32] HMAC-SHA256(token, "flexio-server" nonce_c nonce_s)
//!    or "FLXHELO1" 1 len:u16 reason          (refused: the server has no token)
//! C→S  HMAC-SHA256(token, "flexio-client" nonce_c nonce_s)
//! S→C  status(0 ok, 1 refused) len:u16 text
//! ```
//!
//! Each side checks the other's proof (in constant time), so a wrong token is refused on
//! both sides with a clear message; fresh nonces make a recorded exchange useless. After it
//! the fio protocol follows unchanged. The token authenticates the connection; it does not
//! encrypt it (docs/multi-host.md says what that means).
//!
//! With TLS (`--tls-*`, [`super::tls`]) the hello asks for it, and everything after the
//! handshake is encrypted:
//!
//! ```text
//! C→S  "FLXHELO1" method(2 = TLS)
//! S→C  "FLXHELO1" 0                           (or 1 len:u16 reason: no TLS here)
//!      the TLS handshake (client certificates checked against the server's --tls-ca)
//! S→C  status(0 ok: the certificate authenticated the client,
//!             2: prove the token (the exchange above, inside TLS), 1 refused) len:u16 text
//! ```

use super::net::Stream;
use super::secret::check_private;
use super::tls::{self, ClientTls, ServerTls};
use hmac::{KeyInit, Mac};
use std::io::{Read, Write};
use std::path::Path;

/// What a flexio client sends first.
pub const HELLO: &[u8; 8] = b"FLXHELO1";
const METHOD_TOKEN: u8 = 1;
const METHOD_TLS: u8 = 2;
const NONCE: usize = 32;
const MAC: usize = 32;
/// Longest reason text either side reads.
const MAX_TEXT: usize = 1024;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// A pre-shared token, read from a file only its owner can read.
#[derive(Clone)]
pub struct Token(Vec<u8>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

/// How a server authenticates flexio clients.
#[derive(Clone, Default)]
pub struct ServerAuth {
    pub token: Option<Token>,
    pub tls: Option<ServerTls>,
}

/// How a client authenticates itself and the server.
#[derive(Clone, Default)]
pub struct ClientAuth {
    pub token: Option<Token>,
    pub tls: Option<ClientTls>,
}

impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientAuth")
            .field("token", &self.token)
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

fn token_of(sec: &flexio_job::cli::Security) -> Result<Option<Token>, String> {
    sec.token_file.as_deref().map(Token::load).transpose()
}

impl ServerAuth {
    /// From `--auth-token-file` and `--tls-cert/--tls-key/--tls-ca`.
    pub fn load(sec: &flexio_job::cli::Security) -> Result<ServerAuth, String> {
        let token = token_of(sec).map_err(|e| format!("--server: {e}"))?;
        let tls = ServerTls::load(sec, token.is_some()).map_err(|e| format!("--server: {e}"))?;
        Ok(ServerAuth { token, tls })
    }
}

impl ClientAuth {
    /// From `--auth-token-file` and `--tls-cert/--tls-key/--tls-ca`.
    pub fn load(sec: &flexio_job::cli::Security) -> Result<ClientAuth, String> {
        let token = token_of(sec).map_err(|e| format!("--client: {e}"))?;
        let tls = ClientTls::load(sec).map_err(|e| format!("--client: {e}"))?;
        Ok(ClientAuth { token, tls })
    }

    pub fn any(&self) -> bool {
        self.token.is_some() || self.tls.is_some()
    }
}

impl Token {
    /// A token from its bytes (tests and fuzzing; users give a file).
    #[doc(hidden)]
    pub fn from_bytes(b: Vec<u8>) -> Token {
        Token(b)
    }

    /// `--auth-token-file`: the file's contents without surrounding white space, at
    /// least 16 bytes.
    pub fn load(path: &str) -> Result<Token, String> {
        let p = Path::new(path);
        check_private(p, "--auth-token-file")?;
        let raw = std::fs::read(p).map_err(|e| format!("--auth-token-file {path}: {e}"))?;
        let t = raw.trim_ascii();
        if t.len() < 16 {
            return Err(format!(
                "--auth-token-file {path}: the token is {} bytes; use at least 16 (e.g. `head -c 32 /dev/urandom | base64 > {path}`)",
                t.len()
            ));
        }
        Ok(Token(t.to_vec()))
    }

    fn mac(&self, label: &[u8], nc: &[u8], ns: &[u8]) -> HmacSha256 {
        // HMAC takes a key of any length.
        let mut m = <HmacSha256 as KeyInit>::new_from_slice(&self.0).expect("any key length");
        m.update(label);
        m.update(nc);
        m.update(ns);
        m
    }
}

fn nonce() -> std::io::Result<[u8; NONCE]> {
    let mut n = [0u8; NONCE];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut n)?;
    Ok(n)
}

fn read_text(r: &mut impl Read) -> std::io::Result<String> {
    let mut l = [0u8; 2];
    r.read_exact(&mut l)?;
    let n = (u16::from_be_bytes(l) as usize).min(MAX_TEXT);
    let mut t = vec![0u8; n];
    r.read_exact(&mut t)?;
    Ok(String::from_utf8_lossy(&t).into_owned())
}

fn put_text(out: &mut Vec<u8>, s: &str) {
    let b = &s.as_bytes()[..s.len().min(MAX_TEXT)];
    out.extend_from_slice(&(b.len() as u16).to_be_bytes());
    out.extend_from_slice(b);
}

fn server_io(e: std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => "authentication: the client left without proving it knows the token (it did not accept this server's proof: a wrong token?)".to_string(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            "authentication: the client stopped answering (timed out)".to_string()
        }
        _ => format!("authentication: {e}"),
    }
}

/// Refuse a hello with `why` (sent to the client); returns `why`.
fn refuse_hello<S: Read + Write>(s: &mut S, why: String) -> String {
    let mut out = HELLO.to_vec();
    out.push(1);
    put_text(&mut out, &why);
    let _ = s.write_all(&out).and_then(|_| s.flush());
    why
}

fn status<S: Write>(s: &mut S, code: u8, text: &str) -> std::io::Result<()> {
    let mut out = vec![code];
    put_text(&mut out, text);
    s.write_all(&out).and_then(|_| s.flush())
}

/// The server's side after it read [`HELLO`]: the method, then the token exchange or the
/// TLS handshake. Returns the stream the fio protocol continues on; `Err` is the reason,
/// already sent to the client where it can still read it.
pub fn serve(mut s: Stream, a: &ServerAuth) -> Result<Stream, String> {
    let mut m = [0u8; 1];
    s.read_exact(&mut m).map_err(server_io)?;
    match m[0] {
        METHOD_TLS => {
            let Some(cfg) = &a.tls else {
                return Err(refuse_hello(&mut s, "this server has no TLS (it was started without --tls-cert and --tls-key)".into()));
            };
            let mut ok = HELLO.to_vec();
            ok.push(0);
            s.write_all(&ok).and_then(|_| s.flush()).map_err(server_io)?;
            let (mut t, verified) = tls::accept(s, cfg)?;
            let io = |e: std::io::Error| tls::describe(&e, "client");
            if verified {
                status(&mut t, 0, "ok").map_err(io)?;
                return Ok(t);
            }
            let Some(token) = &a.token else {
                let why = "this server needs a client certificate signed by its --tls-ca (--tls-cert and --tls-key)";
                let _ = status(&mut t, 1, why);
                return Err(why.into());
            };
            status(&mut t, 2, "prove the token").map_err(io)?;
            let mut h = [0u8; 9];
            t.read_exact(&mut h).map_err(io)?;
            if &h[..8] != HELLO || h[8] != METHOD_TOKEN {
                return Err("authentication: the client sent no token after TLS".into());
            }
            serve_token(&mut t, Some(token))?;
            Ok(t)
        }
        METHOD_TOKEN if a.tls.is_some() => {
            Err(refuse_hello(&mut s, "this server takes TLS connections only: connect with --tls-ca (the CA of the server's certificate)".into()))
        }
        METHOD_TOKEN => {
            serve_token(&mut s, a.token.as_ref())?;
            Ok(s)
        }
        m => {
            Err(refuse_hello(&mut s, format!("unknown authentication method {m}")))
        }
    }
}

/// The token exchange, server side, after the method byte: `token` is the server's
/// (`None`: it has none, and says so).
pub fn serve_token<S: Read + Write>(s: &mut S, token: Option<&Token>) -> Result<(), String> {
    let io = server_io;
    let mut nc = [0u8; NONCE];
    s.read_exact(&mut nc).map_err(io)?;
    let Some(token) = token else {
        return Err(refuse_hello(
            s,
            "this server has no --auth-token-file; connect without one (from loopback, or if it allows fio clients) or start it with one".into(),
        ));
    };
    let ns = nonce().map_err(io)?;
    let mut out = HELLO.to_vec();
    out.push(0);
    out.extend_from_slice(&ns);
    out.extend_from_slice(
        &token
            .mac(b"flexio-server", &nc, &ns)
            .finalize()
            .into_bytes(),
    );
    s.write_all(&out).and_then(|_| s.flush()).map_err(io)?;
    let mut proof = [0u8; MAC];
    s.read_exact(&mut proof).map_err(io)?;
    let ok = token
        .mac(b"flexio-client", &nc, &ns)
        .verify_slice(&proof)
        .is_ok();
    let mut out = vec![u8::from(!ok)];
    let why = if ok {
        "ok"
    } else {
        "wrong token: the client's --auth-token-file differs from the server's"
    };
    put_text(&mut out, why);
    let _ = s.write_all(&out).and_then(|_| s.flush());
    if ok {
        Ok(())
    } else {
        Err(why.into())
    }
}

/// The client's side, first thing on a new connection to the server `host` (the name its
/// certificate must carry): TLS and then the token where the server asks for it, or the
/// token alone. Returns the stream the fio protocol continues on.
pub fn client(mut s: Stream, a: &ClientAuth, host: &str) -> Result<Stream, String> {
    let Some(cfg) = &a.tls else {
        if let Some(t) = &a.token {
            client_token(&mut s, t)?;
        }
        return Ok(s);
    };
    let io = |e: std::io::Error| {
        match e.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            "TLS: the server closed the connection (a flexio server older than TLS, or not a flexio server?)".to_string()
        }
        _ => format!("TLS: {e}"),
    }
    };
    let mut out = HELLO.to_vec();
    out.push(METHOD_TLS);
    s.write_all(&out).and_then(|_| s.flush()).map_err(io)?;
    let mut head = [0u8; 9];
    s.read_exact(&mut head).map_err(io)?;
    if &head[..8] != HELLO {
        return Err("TLS: the server did not answer the flexio hello (a fio server, or a flexio server older than TLS?)".into());
    }
    if head[8] != 0 {
        let why = read_text(&mut s).map_err(io)?;
        return Err(format!("the server refused: {why}"));
    }
    let mut t = tls::connect(s, cfg, host)?;
    let tio = |e: std::io::Error| tls::describe(&e, "server");
    let mut st = [0u8; 1];
    t.read_exact(&mut st).map_err(tio)?;
    let why = read_text(&mut t).map_err(tio)?;
    match (st[0], &a.token) {
        (0, _) => Ok(t),
        (2, Some(tok)) => {
            client_token(&mut t, tok)?;
            Ok(t)
        }
        (2, None) => Err("the server wants a client certificate signed by its CA (--tls-cert and --tls-key) or its token (--auth-token-file)".into()),
        _ => Err(format!("the server refused: {why}")),
    }
}

/// The token exchange, client side.
fn client_token<S: Read + Write>(s: &mut S, token: &Token) -> Result<(), String> {
    let io = |e: std::io::Error| {
        match e.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            "authentication: the server closed the connection (a flexio server older than authentication, or not a flexio server?)".to_string()
        }
        _ => format!("authentication: {e}"),
    }
    };
    let nc = nonce().map_err(io)?;
    let mut out = HELLO.to_vec();
    out.push(METHOD_TOKEN);
    out.extend_from_slice(&nc);
    s.write_all(&out).and_then(|_| s.flush()).map_err(io)?;
    let mut head = [0u8; 9];
    s.read_exact(&mut head).map_err(io)?;
    if &head[..8] != HELLO {
        return Err("authentication: the server did not answer the flexio hello (a fio server, or a flexio server older than authentication?)".into());
    }
    if head[8] != 0 {
        let why = read_text(s).map_err(io)?;
        return Err(format!("the server refused: {why}"));
    }
    let mut ns = [0u8; NONCE];
    s.read_exact(&mut ns).map_err(io)?;
    let mut proof = [0u8; MAC];
    s.read_exact(&mut proof).map_err(io)?;
    if token
        .mac(b"flexio-server", &nc, &ns)
        .verify_slice(&proof)
        .is_err()
    {
        return Err(
            "wrong token: the server's --auth-token-file differs from ours (or it is not the server we meant)"
                .into(),
        );
    }
    let mine = token
        .mac(b"flexio-client", &nc, &ns)
        .finalize()
        .into_bytes();
    s.write_all(&mine).and_then(|_| s.flush()).map_err(io)?;
    let mut st = [0u8; 1];
    s.read_exact(&mut st).map_err(io)?;
    let why = read_text(s).map_err(io)?;
    if st[0] == 0 {
        Ok(())
    } else {
        Err(format!("the server refused: {why}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;

    fn pair(
        server_token: Option<&'static [u8]>,
        ctok: &'static [u8],
    ) -> (Result<(), String>, Result<(), String>) {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        let srv = std::thread::spawn(move || {
            let mut h = [0u8; 8];
            a.read_exact(&mut h).unwrap();
            assert_eq!(&h, HELLO);
            let mut m = [0u8; 1];
            a.read_exact(&mut m).unwrap();
            assert_eq!(m[0], METHOD_TOKEN);
            serve_token(&mut a, server_token.map(|t| Token(t.to_vec())).as_ref())
        });
        let c = client_token(&mut b, &Token(ctok.to_vec()));
        // A client that gives up closes the connection.
        drop(b);
        (srv.join().unwrap(), c)
    }

    #[test]
    fn the_right_token_passes_and_a_wrong_one_is_refused_on_both_sides() {
        let (s, c) = pair(Some(b"0123456789abcdef"), b"0123456789abcdef");
        assert_eq!((s, c), (Ok(()), Ok(())));
        let (s, c) = pair(Some(b"0123456789abcdef"), b"0123456789abcdeX");
        assert!(s.unwrap_err().contains("wrong token"));
        assert!(c.unwrap_err().contains("wrong token"));
        let (s, c) = pair(None, b"0123456789abcdef");
        assert!(s.unwrap_err().contains("no --auth-token-file"));
        assert!(c.unwrap_err().contains("the server refused"));
    }

    #[test]
    fn token_files_must_be_private_and_long_enough() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("t");
        std::fs::write(&f, "0123456789abcdef\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = Token::load(f.to_str().unwrap()).unwrap_err();
        assert!(e.contains("chmod 600"), "{e}");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(Token::load(f.to_str().unwrap()).is_ok());
        std::fs::write(&f, "short\n").unwrap();
        assert!(Token::load(f.to_str().unwrap())
            .unwrap_err()
            .contains("at least 16"));
    }
}
