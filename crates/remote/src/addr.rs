//! fio's address strings for `--server=` and `--client=` (§1.2): `sock:/path`,
//! `[ip:|ip4:|ip6:]HOST[,PORT]`, `,PORT`, `:PORT`. The port separator is a comma.

use crate::frame::DEFAULT_PORT;
use std::fmt;
use std::path::PathBuf;

/// IP family of an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    V4,
    V6,
}

/// A parsed address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Addr {
    Unix(PathBuf),
    Ip {
        family: Family,
        /// None: any address (server) / not given.
        host: Option<String>,
        port: u16,
    },
}

/// Why an address string is not valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddrError(pub String);

impl fmt::Display for AddrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AddrError {}

fn port(s: &str, whole: &str) -> Result<u16, AddrError> {
    match s.trim().parse::<u32>() {
        Ok(p) if (1..=65535).contains(&p) => Ok(p as u16),
        _ => Err(AddrError(format!(
            "bad server port {s:?} in {whole:?} (a number from 1 to 65535 after the comma)"
        ))),
    }
}

impl Addr {
    /// Parse an address string; `None` (a bare `--server`) is IPv4, any address, 8765.
    pub fn parse(s: Option<&str>) -> Result<Addr, AddrError> {
        let Some(s) = s else {
            return Ok(Addr::Ip {
                family: Family::V4,
                host: None,
                port: DEFAULT_PORT,
            });
        };
        if let Some(path) = s.strip_prefix("sock:") {
            if path.is_empty() {
                return Err(AddrError(format!("{s:?}: sock: needs a socket path")));
            }
            return Ok(Addr::Unix(PathBuf::from(path)));
        }
        if let Some(p) = s.strip_prefix(':') {
            return Ok(Addr::Ip {
                family: Family::V4,
                host: None,
                port: port(p, s)?,
            });
        }
        let (hostpart, portpart) = match s.split_once(',') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        };
        let (family, host) = if let Some(h) = hostpart.strip_prefix("ip6:") {
            (Family::V6, h)
        } else if let Some(h) = hostpart
            .strip_prefix("ip4:")
            .or_else(|| hostpart.strip_prefix("ip:"))
        {
            (Family::V4, h)
        } else {
            (Family::V4, hostpart)
        };
        Ok(Addr::Ip {
            family,
            host: (!host.is_empty()).then(|| host.to_string()),
            port: match portpart {
                Some(p) => port(p, s)?,
                None => DEFAULT_PORT,
            },
        })
    }

    /// The name fio's client uses for the server before the probe reply: the host part
    /// (or the socket path).
    pub fn name(&self) -> String {
        match self {
            Addr::Unix(p) => p.display().to_string(),
            Addr::Ip { host, .. } => host.clone().unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(family: Family, host: Option<&str>, port: u16) -> Addr {
        Addr::Ip {
            family,
            host: host.map(str::to_string),
            port,
        }
    }

    #[test]
    fn fio_address_forms() {
        use Family::*;
        let ok = |s: &str| Addr::parse(Some(s)).unwrap();
        assert_eq!(Addr::parse(None).unwrap(), ip(V4, None, 8765));
        assert_eq!(ok("sock:/tmp/a,b"), Addr::Unix("/tmp/a,b".into()));
        assert_eq!(ok("ip:127.0.0.1,28765"), ip(V4, Some("127.0.0.1"), 28765));
        assert_eq!(ok("ip4:host"), ip(V4, Some("host"), 8765));
        assert_eq!(ok("ip6:::1,4444"), ip(V6, Some("::1"), 4444));
        assert_eq!(ok("host,4444"), ip(V4, Some("host"), 4444));
        assert_eq!(ok(",4444"), ip(V4, None, 4444));
        assert_eq!(ok(":4444"), ip(V4, None, 4444));
        assert_eq!(ok("ip:127.0.0.1,28765").name(), "127.0.0.1");
        for bad in ["h,0", "h,65536", "h,x", ":", "sock:"] {
            let e = Addr::parse(Some(bad)).unwrap_err();
            assert!(!e.to_string().is_empty(), "{bad}");
        }
        assert!(Addr::parse(Some("h,0"))
            .unwrap_err()
            .to_string()
            .contains("bad server port"));
    }
}
