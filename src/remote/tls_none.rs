//! A build without TLS (cargo feature `tls` off, as in the small static builds): the
//! `--tls-*` switches say so, and nothing else changes.

use super::net::Stream;

/// Never made: this build has no TLS.
#[derive(Clone)]
pub enum ServerTls {}
/// Never made: this build has no TLS.
#[derive(Clone)]
pub enum ClientTls {}

fn refuse(sec: &flexio_job::cli::Security) -> Result<(), String> {
    if sec.tls_cert.is_some() || sec.tls_key.is_some() || sec.tls_ca.is_some() {
        return Err(
            "--tls-cert, --tls-key and --tls-ca: this flexio was built without TLS (cargo feature `tls`); use --auth-token-file".into(),
        );
    }
    Ok(())
}

impl ServerTls {
    pub fn load(
        sec: &flexio_job::cli::Security,
        _has_token: bool,
    ) -> Result<Option<ServerTls>, String> {
        refuse(sec).map(|_| None)
    }
    pub fn verifies_clients(&self) -> bool {
        match *self {}
    }
}

impl ClientTls {
    pub fn load(sec: &flexio_job::cli::Security) -> Result<Option<ClientTls>, String> {
        refuse(sec).map(|_| None)
    }
}

pub fn accept(_: Stream, t: &ServerTls) -> Result<(Stream, bool), String> {
    match *t {}
}

pub fn connect(_: Stream, t: &ClientTls, _host: &str) -> Result<Stream, String> {
    match *t {}
}

pub fn describe(e: &std::io::Error, _peer: &str) -> String {
    format!("TLS: {e}")
}
