//! TLS for the engines that talk to servers (cargo feature `tls`): the http engine's
//! `https=on` / `https=insecure` and the nbd engine's `nbds://` exports. rustls with the
//! ring provider, as flexio's client/server TLS.
//!
//! Whom to trust: a CA file the engine names (nbd's `tls-certificates=DIR/ca-cert.pem`), or
//! the system's CAs as libcurl (fio's http engine) and GnuTLS (libnbd) find them, with the
//! variables OpenSSL and curl let a user name others by: the PEM bundle `SSL_CERT_FILE` (or
//! else `CURL_CA_BUNDLE`) names, the PEM files in `SSL_CERT_DIR`, or else the distribution's
//! bundle (`/etc/ssl/certs/ca-certificates.crt` and its
//! equivalents). `Trust::Insecure` checks nothing (fio's `https=insecure`; libnbd's
//! `tls-verify-peer=false`), though the handshake's signatures are still checked against the
//! certificate the server sent.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, StreamOwned};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Whose certificates the client accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trust {
    /// The system's CAs (see the module's documentation).
    System,
    /// The CAs in this PEM file.
    CaFile(PathBuf),
    /// Any certificate, any name.
    Insecure,
}

/// A client's TLS settings, ready for connections.
#[derive(Clone)]
pub struct Client {
    config: Arc<ClientConfig>,
    /// Where the trusted CAs came from (for error messages), or "no verification".
    pub trust_from: String,
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The distributions' CA bundles, as libcurl and OpenSSL look for them.
const BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/ssl/cert.pem",
    "/usr/local/share/certs/ca-root-nss.crt",
];

/// The certificates of a PEM file (none: an error naming the file).
pub fn pem_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let v = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if v.is_empty() {
        return Err(format!("{}: no PEM certificate in it", path.display()));
    }
    Ok(v)
}

/// A PEM private key.
pub fn pem_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn add_file(roots: &mut RootCertStore, path: &Path) -> Result<usize, String> {
    let (ok, _) = roots.add_parsable_certificates(pem_certs(path)?);
    Ok(ok)
}

/// The system's trusted CAs and where they came from.
pub fn system_roots() -> Result<(RootCertStore, String), String> {
    let mut roots = RootCertStore::empty();
    for var in ["SSL_CERT_FILE", "CURL_CA_BUNDLE"] {
        if let Some(p) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            let p = PathBuf::from(p);
            if add_file(&mut roots, &p).map_err(|e| format!("{var}: {e}"))? == 0 {
                return Err(format!("{var}: {}: no usable CA certificate", p.display()));
            }
            return Ok((roots, format!("{var}={}", p.display())));
        }
    }
    let dir = std::env::var_os("SSL_CERT_DIR").filter(|v| !v.is_empty());
    if let Some(d) = &dir {
        let d = PathBuf::from(d);
        let n = add_dir(&mut roots, &d);
        if n == 0 {
            return Err(format!(
                "SSL_CERT_DIR: {}: no usable CA certificate",
                d.display()
            ));
        }
        return Ok((roots, format!("SSL_CERT_DIR={}", d.display())));
    }
    for b in BUNDLES {
        let p = Path::new(b);
        if p.is_file() && add_file(&mut roots, p).unwrap_or(0) > 0 {
            return Ok((roots, format!("the system's CAs ({b})")));
        }
    }
    if add_dir(&mut roots, Path::new("/etc/ssl/certs")) > 0 {
        return Ok((roots, "the system's CAs (/etc/ssl/certs)".into()));
    }
    Err("no system CA certificates found (give a CA bundle through SSL_CERT_FILE)".into())
}

/// Every certificate of the PEM files in `dir`; how many were usable.
fn add_dir(roots: &mut RootCertStore, dir: &Path) -> usize {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut n = 0;
    for e in rd.flatten() {
        let p = e.path();
        if p.is_file() {
            n += add_file(roots, &p).unwrap_or(0);
        }
    }
    n
}

/// Accepts any server certificate (`https=insecure`); the handshake's signatures are still
/// checked, with the certificate the server sent.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

impl Client {
    /// The settings for `trust`, with a client certificate and key when given.
    pub fn new(
        trust: &Trust,
        identity: Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>,
    ) -> Result<Client, String> {
        let builder = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?;
        let (builder, trust_from) = match trust {
            Trust::Insecure => (
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider()))),
                "no verification".to_string(),
            ),
            Trust::System => {
                let (roots, from) = system_roots()?;
                (builder.with_root_certificates(roots), from)
            }
            Trust::CaFile(p) => {
                let mut roots = RootCertStore::empty();
                for c in pem_certs(p)? {
                    roots.add(c).map_err(|e| format!("{}: {e}", p.display()))?;
                }
                (
                    builder.with_root_certificates(roots),
                    p.display().to_string(),
                )
            }
        };
        let config = match identity {
            Some((chain, key)) => builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("client certificate: {e}"))?,
            None => builder.with_no_client_auth(),
        };
        Ok(Client {
            config: Arc::new(config),
            trust_from,
        })
    }

    /// The handshake over `sock` with the server called `name` (a host name or an IP
    /// address its certificate must carry), done before this returns so that a refused
    /// certificate is reported where the connection is made.
    pub fn connect<S: Read + Write>(
        &self,
        name: &str,
        mut sock: S,
    ) -> Result<StreamOwned<ClientConnection, S>, String> {
        let server_name = ServerName::try_from(name.to_string())
            .map_err(|e| format!("TLS: {name} is not a name a certificate can carry: {e}"))?;
        let mut conn = ClientConnection::new(self.config.clone(), server_name)
            .map_err(|e| format!("TLS: {e}"))?;
        while conn.is_handshaking() {
            conn.complete_io(&mut sock)
                .map_err(|e| self.describe(&e, name))?;
        }
        Ok(StreamOwned::new(conn, sock))
    }

    /// A TLS error in words, with what to check.
    pub fn describe(&self, e: &io::Error, name: &str) -> String {
        use rustls::{AlertDescription as A, CertificateError as C};
        let Some(t) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) else {
            return match e.kind() {
                io::ErrorKind::UnexpectedEof => {
                    format!("TLS handshake with {name}: the server closed the connection")
                }
                _ => format!("TLS handshake with {name}: {e}"),
            };
        };
        let why = match t {
            rustls::Error::InvalidCertificate(C::UnknownIssuer) => format!(
                "the server's certificate is not signed by a trusted CA (trusted: {})",
                self.trust_from
            ),
            rustls::Error::InvalidCertificate(C::NotValidForName)
            | rustls::Error::InvalidCertificate(C::NotValidForNameContext { .. }) => {
                format!("the server's certificate does not name {name}")
            }
            rustls::Error::InvalidCertificate(C::Expired)
            | rustls::Error::InvalidCertificate(C::ExpiredContext { .. }) => {
                "the server's certificate has expired".into()
            }
            rustls::Error::AlertReceived(A::CertificateRequired) => {
                "the server wants a client certificate".into()
            }
            rustls::Error::AlertReceived(A::BadCertificate | A::UnknownCA) => {
                "the server refused our client certificate".into()
            }
            _ => String::new(),
        };
        if why.is_empty() {
            format!("TLS handshake with {name}: {t}")
        } else {
            format!("TLS handshake with {name}: {why} ({t})")
        }
    }
}

/// The host part of `host[:port]`, `[v6]:port` or a bare IPv6 address.
pub fn host_of(hostport: &str) -> &str {
    if let Some(rest) = hostport.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match hostport.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') && p.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => hostport,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_of_host_port_forms() {
        assert_eq!(host_of("example.com"), "example.com");
        assert_eq!(host_of("example.com:8443"), "example.com");
        assert_eq!(host_of("127.0.0.1:443"), "127.0.0.1");
        assert_eq!(host_of("[::1]:8443"), "::1");
        assert_eq!(host_of("[::1]"), "::1");
        assert_eq!(host_of("::1"), "::1");
    }

    #[test]
    fn missing_and_empty_ca_files_are_named() {
        let d = tempfile::tempdir().unwrap();
        let e = Client::new(&Trust::CaFile(d.path().join("none.pem")), None)
            .err()
            .unwrap();
        assert!(e.contains("none.pem"), "{e}");
        let p = d.path().join("empty.pem");
        std::fs::write(&p, "not a certificate\n").unwrap();
        let e = Client::new(&Trust::CaFile(p), None).err().unwrap();
        assert!(e.contains("no PEM certificate"), "{e}");
        // Insecure needs no CA at all.
        let c = Client::new(&Trust::Insecure, None).unwrap();
        assert_eq!(c.trust_from, "no verification");
    }
}
