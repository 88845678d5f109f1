//! TLS between flexio clients and servers (cargo feature `tls`): rustls with the ring
//! provider, certificates checked on both sides against a CA the user names.
//!
//! The stream itself, one rustls session shared by a [`Stream`]'s clones, is
//! `net::TlsStream`.

use super::net::Stream;
use super::secret::check_private;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::io;
use std::sync::Arc;

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

/// The server's handshake on an accepted connection; also whether the client proved a
/// certificate signed by the server's CA.
pub fn accept(sock: Stream, tls: &ServerTls) -> Result<(Stream, bool), String> {
    let conn =
        rustls::ServerConnection::new(tls.config.clone()).map_err(|e| format!("TLS: {e}"))?;
    let t =
        super::net::TlsStream::handshake(sock, conn.into()).map_err(|e| describe(&e, "client"))?;
    let verified = tls.verifies && t.peer_has_certificate();
    Ok((Stream::Tls(t), verified))
}

/// The client's handshake with the server named `host` (its certificate must name it).
pub fn connect(sock: Stream, tls: &ClientTls, host: &str) -> Result<Stream, String> {
    let name = ServerName::try_from(host.to_string())
        .map_err(|e| format!("TLS: {host} is not a name a certificate can carry: {e}"))?;
    let conn =
        rustls::ClientConnection::new(tls.config.clone(), name).map_err(|e| format!("TLS: {e}"))?;
    super::net::TlsStream::handshake(sock, conn.into())
        .map(Stream::Tls)
        .map_err(|e| describe(&e, "server"))
}
