//! TLS between flexio clients and servers (cargo feature `tls`): rustls with the ring
//! provider, certificates checked on both sides against a CA the user names.
//!
//! A TLS connection is one `rustls::Connection` shared by the clones of a [`Stream`]: the
//! fio-protocol code reads on one thread and writes from others. A reader never holds the
//! connection's lock while it waits on the socket: it reads ciphertext from its own clone
//! of the socket, then takes the lock only to decrypt, so a writer is never held up by a
//! reader's wait (and a reader's socket timeout leaves the TLS state whole).

use super::auth::check_private;
use super::net::Stream;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex, MutexGuard};

/// A server's TLS: its certificate and key, and the CA of its clients' certificates.
#[derive(Clone)]
pub struct ServerTls {
    config: Arc<rustls::ServerConfig>,
    /// Whether clients' certificates are checked (`--tls-ca` given).
    verifies: bool,
}

/// A client's TLS: the CA of the server's certificate, and its own certificate if any.
#[derive(Clone)]
pub struct ClientTls {
    config: Arc<rustls::ClientConfig>,
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn certs(path: &str, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let v = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{what} {path}: {e}"))?;
    if v.is_empty() {
        return Err(format!("{what} {path}: no PEM certificate in it"));
    }
    Ok(v)
}

fn key(path: &str) -> Result<PrivateKeyDer<'static>, String> {
    check_private(std::path::Path::new(path), "--tls-key")?;
    PrivateKeyDer::from_pem_file(path).map_err(|e| format!("--tls-key {path}: {e}"))
}

fn roots(path: &str) -> Result<rustls::RootCertStore, String> {
    let mut r = rustls::RootCertStore::empty();
    for c in certs(path, "--tls-ca")? {
        r.add(c).map_err(|e| format!("--tls-ca {path}: {e}"))?;
    }
    Ok(r)
}

fn cert_and_key(
    sec: &flexio_job::cli::Security,
) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>, String> {
    match (&sec.tls_cert, &sec.tls_key) {
        (None, None) => Ok(None),
        (Some(c), Some(k)) => Ok(Some((certs(c, "--tls-cert")?, key(k)?))),
        _ => Err("--tls-cert and --tls-key go together".into()),
    }
}

impl ServerTls {
    /// The server's TLS from its switches; `None` without `--tls-cert`. `has_token`: the
    /// server also has a token, which may stand in for a client certificate.
    pub fn load(
        sec: &flexio_job::cli::Security,
        has_token: bool,
    ) -> Result<Option<ServerTls>, String> {
        let Some((chain, key)) = cert_and_key(sec)? else {
            if sec.tls_ca.is_some() {
                return Err("--tls-ca on a server checks clients' certificates; it needs the server's own --tls-cert and --tls-key".into());
            }
            return Ok(None);
        };
        if sec.tls_ca.is_none() && !has_token {
            return Err("a TLS server must authenticate its clients: give --tls-ca (the CA of the clients' certificates) or --auth-token-file".into());
        }
        let builder = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?;
        let builder = match &sec.tls_ca {
            Some(ca) => {
                let v = rustls::server::WebPkiClientVerifier::builder_with_provider(
                    Arc::new(roots(ca)?),
                    provider(),
                );
                // With a token as well, a client without a certificate may prove the token.
                let v = if has_token {
                    v.allow_unauthenticated()
                } else {
                    v
                };
                builder.with_client_cert_verifier(
                    v.build().map_err(|e| format!("--tls-ca {ca}: {e}"))?,
                )
            }
            None => builder.with_no_client_auth(),
        };
        let config = builder
            .with_single_cert(chain, key)
            .map_err(|e| format!("--tls-cert/--tls-key: {e}"))?;
        Ok(Some(ServerTls {
            config: Arc::new(config),
            verifies: sec.tls_ca.is_some(),
        }))
    }
}

impl ServerTls {
    /// Whether clients' certificates are checked (`--tls-ca` given).
    pub fn verifies_clients(&self) -> bool {
        self.verifies
    }
}

impl ClientTls {
    /// The client's TLS from its switches; `None` without `--tls-ca`.
    pub fn load(sec: &flexio_job::cli::Security) -> Result<Option<ClientTls>, String> {
        let mine = cert_and_key(sec)?;
        let Some(ca) = &sec.tls_ca else {
            if mine.is_some() {
                return Err(
                    "a TLS client needs --tls-ca, the CA that signed the server's certificate"
                        .into(),
                );
            }
            return Ok(None);
        };
        let builder = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots(ca)?);
        let config = match mine {
            Some((chain, key)) => builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("--tls-cert/--tls-key: {e}"))?,
            None => builder.with_no_client_auth(),
        };
        Ok(Some(ClientTls {
            config: Arc::new(config),
        }))
    }
}

/// A TLS error in words, with what to check.
pub fn describe(e: &io::Error, peer: &str) -> String {
    use rustls::AlertDescription as A;
    let Some(t) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) else {
        return match e.kind() {
            io::ErrorKind::UnexpectedEof => format!("TLS: the {peer} closed the connection"),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                format!("TLS: the {peer} stopped answering (timed out)")
            }
            _ => format!("TLS: {e}"),
        };
    };
    let hint = match t {
        rustls::Error::InvalidCertificate(_) => {
            format!(" (is the {peer}'s certificate signed by our --tls-ca, and does it name this host?)")
        }
        rustls::Error::NoCertificatesPresented => {
            format!(" (the {peer} needs --tls-cert and --tls-key)")
        }
        rustls::Error::AlertReceived(A::CertificateRequired) => {
            " (this side needs --tls-cert and --tls-key)".into()
        }
        rustls::Error::AlertReceived(
            A::BadCertificate | A::UnknownCA | A::CertificateUnknown | A::DecryptError,
        ) => {
            format!(" (the {peer} refused our certificate: is it signed by the {peer}'s --tls-ca?)")
        }
        _ => String::new(),
    };
    format!("TLS: {t}{hint}")
}

struct State {
    conn: rustls::Connection,
    /// Ciphertext read but not yet taken by rustls.
    pending: Vec<u8>,
    /// The socket reached its end (given to rustls once).
    eof: bool,
    eof_fed: bool,
}

/// One TLS connection; its clones share the session.
pub struct TlsStream {
    sock: Box<Stream>,
    state: Arc<Mutex<State>>,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn invalid(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

fn handshake(mut sock: Stream, mut conn: rustls::Connection) -> io::Result<TlsStream> {
    while conn.is_handshaking() {
        conn.complete_io(&mut sock)?;
    }
    Ok(TlsStream {
        sock: Box::new(sock),
        state: Arc::new(Mutex::new(State {
            conn,
            pending: Vec::new(),
            eof: false,
            eof_fed: false,
        })),
    })
}

/// The server's handshake on an accepted connection; also whether the client proved a
/// certificate signed by the server's CA.
pub fn accept(sock: Stream, tls: &ServerTls) -> Result<(Stream, bool), String> {
    let conn =
        rustls::ServerConnection::new(tls.config.clone()).map_err(|e| format!("TLS: {e}"))?;
    let t = handshake(sock, conn.into()).map_err(|e| describe(&e, "client"))?;
    let verified = tls.verifies
        && lock(&t.state)
            .conn
            .peer_certificates()
            .is_some_and(|c| !c.is_empty());
    Ok((Stream::Tls(t), verified))
}

/// The client's handshake with the server named `host` (its certificate must name it).
pub fn connect(sock: Stream, tls: &ClientTls, host: &str) -> Result<Stream, String> {
    let name = ServerName::try_from(host.to_string())
        .map_err(|e| format!("TLS: {host} is not a name a certificate can carry: {e}"))?;
    let conn =
        rustls::ClientConnection::new(tls.config.clone(), name).map_err(|e| format!("TLS: {e}"))?;
    handshake(sock, conn.into())
        .map(Stream::Tls)
        .map_err(|e| describe(&e, "server"))
}

impl TlsStream {
    pub fn raw(&self) -> &Stream {
        &self.sock
    }

    pub fn try_clone(&self) -> io::Result<TlsStream> {
        Ok(TlsStream {
            sock: Box::new(self.sock.try_clone()?),
            state: self.state.clone(),
        })
    }

    /// Send close_notify if no writer holds the session, then close the socket (wakes a
    /// reader blocked on a clone).
    pub fn shutdown(&self) {
        if let Ok(mut st) = self.state.try_lock() {
            st.conn.send_close_notify();
            let mut s = &*self.sock;
            while st.conn.wants_write() {
                if st.conn.write_tls(&mut s).is_err() {
                    break;
                }
            }
        }
        self.sock.shutdown();
    }

    /// Give rustls the ciphertext read so far (or the end of the socket), then send what
    /// it wants to send (alerts, key updates).
    fn feed(&self, st: &mut State) -> io::Result<()> {
        if st.pending.is_empty() {
            if st.eof && !st.eof_fed {
                st.eof_fed = true;
                st.conn.read_tls(&mut &[][..])?;
                st.conn.process_new_packets().map_err(invalid)?;
            }
        } else {
            let mut rest = &st.pending[..];
            while !rest.is_empty() {
                match st.conn.read_tls(&mut rest) {
                    Ok(_) => {}
                    // The plaintext buffer is full: the reader takes it first.
                    Err(e) if e.kind() == io::ErrorKind::Other => break,
                    Err(e) => return Err(e),
                }
                if let Err(e) = st.conn.process_new_packets() {
                    // Send the alert that says why, then fail.
                    let mut s = &*self.sock;
                    let _ = st.conn.write_tls(&mut s);
                    return Err(invalid(e));
                }
            }
            let used = st.pending.len() - rest.len();
            st.pending.drain(..used);
        }
        let mut s = &*self.sock;
        while st.conn.wants_write() {
            st.conn.write_tls(&mut s)?;
        }
        Ok(())
    }
}

impl TlsStream {
    /// Plaintext from the peer (clones read and write the one session).
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            {
                let mut st = lock(&self.state);
                match st.conn.reader().read(buf) {
                    Ok(n) => return Ok(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
                if st.eof_fed && st.pending.is_empty() {
                    return Ok(0);
                }
                if !st.pending.is_empty() || st.eof {
                    let before = st.pending.len();
                    self.feed(&mut st)?;
                    if st.pending.len() < before || st.eof_fed {
                        continue;
                    }
                }
            }
            // Wait for ciphertext without the lock (a socket timeout returns here).
            let mut tmp = [0u8; 16 * 1024];
            let n = (&*self.sock).read(&mut tmp)?;
            let mut st = lock(&self.state);
            if n == 0 {
                st.eof = true;
            } else {
                st.pending.extend_from_slice(&tmp[..n]);
            }
        }
    }

    /// Plaintext to the peer, encrypted and sent before this returns.
    pub fn write(&self, buf: &[u8]) -> io::Result<usize> {
        let mut st = lock(&self.state);
        let n = st.conn.writer().write(buf)?;
        let mut s = &*self.sock;
        while st.conn.wants_write() {
            st.conn.write_tls(&mut s)?;
        }
        Ok(n)
    }
    pub fn flush(&self) -> io::Result<()> {
        let mut st = lock(&self.state);
        let mut s = &*self.sock;
        while st.conn.wants_write() {
            st.conn.write_tls(&mut s)?;
        }
        Ok(())
    }
}
