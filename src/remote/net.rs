//! Sockets of both kinds behind one type: TCP (IPv4/IPv6) and Unix-domain streams.

use flexio_remote::addr::{Addr, Family};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::Duration;

/// A connected stream.
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// TLS over one of the others (`--tls-*`).
    #[cfg(feature = "tls")]
    Tls(TlsStream),
}

impl Stream {
    /// Whether the peer is on this host (a loopback address or a Unix socket).
    pub fn peer_is_local(&self) -> bool {
        match self {
            Stream::Tcp(s) => s.peer_addr().is_ok_and(|a| match a.ip() {
                std::net::IpAddr::V4(ip) => ip.is_loopback(),
                std::net::IpAddr::V6(ip) => {
                    ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v| v.is_loopback())
                }
            }),
            Stream::Unix(_) => true,
            #[cfg(feature = "tls")]
            Stream::Tls(t) => t.raw().peer_is_local(),
        }
    }

    /// The peer's address in messages.
    pub fn peer_name(&self) -> String {
        match self {
            Stream::Tcp(s) => s
                .peer_addr()
                .map(|a| a.ip().to_string())
                .unwrap_or_else(|_| "?".into()),
            Stream::Unix(_) => "a Unix socket".into(),
            #[cfg(feature = "tls")]
            Stream::Tls(t) => t.raw().peer_name(),
        }
    }

    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
            #[cfg(feature = "tls")]
            Stream::Tls(t) => Stream::Tls(t.try_clone()?),
        })
    }
    pub fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Unix(s) => s.set_read_timeout(t),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.raw().set_read_timeout(t),
        }
    }
    pub fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(t),
            Stream::Unix(s) => s.set_write_timeout(t),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.raw().set_write_timeout(t),
        }
    }
    /// Close both directions (wakes a reader blocked on a clone).
    pub fn shutdown(&self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
            Stream::Unix(s) => s.shutdown(std::net::Shutdown::Both),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => {
                s.shutdown();
                Ok(())
            }
        };
    }
}

// `&Stream` reads and writes, as `&TcpStream` does: a TLS session's clones share it.
impl Read for &Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => (&*s).read(buf),
            Stream::Unix(s) => (&*s).read(buf),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for &Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => (&*s).write(buf),
            Stream::Unix(s) => (&*s).write(buf),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => (&*s).flush(),
            Stream::Unix(s) => (&*s).flush(),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.flush(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (&*self).read(buf)
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&*self).write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        (&*self).flush()
    }
}

/// A listening socket.
pub enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener, PathBuf),
}

/// The host an address names, loopback when it names none (servers listen, and clients
/// connect, on this host only unless told otherwise).
pub fn host_or_loopback(family: Family, host: &Option<String>) -> &str {
    host.as_deref().unwrap_or(match family {
        Family::V4 => "127.0.0.1",
        Family::V6 => "::1",
    })
}

fn resolve(family: Family, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    let all: Vec<SocketAddr> = (host, port).to_socket_addrs()?.collect();
    let want: Vec<SocketAddr> = all
        .into_iter()
        .filter(|a| {
            matches!(
                (a, family),
                (SocketAddr::V4(_), Family::V4) | (SocketAddr::V6(_), Family::V6)
            )
        })
        .collect();
    if want.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "{host} has no {} address",
                if family == Family::V4 { "IPv4" } else { "IPv6" }
            ),
        ));
    }
    Ok(want)
}

impl Listener {
    /// Bind and listen (a stale Unix socket file nobody listens on is replaced).
    pub fn bind(addr: &Addr) -> io::Result<Listener> {
        match addr {
            Addr::Unix(p) => {
                if p.exists() && UnixStream::connect(p).is_err() {
                    let _ = std::fs::remove_file(p);
                }
                let l = UnixListener::bind(p)?;
                l.set_nonblocking(true)?;
                Ok(Listener::Unix(l, p.clone()))
            }
            Addr::Ip { family, host, port } => {
                let addrs = resolve(*family, host_or_loopback(*family, host), *port)?;
                let l = TcpListener::bind(&addrs[..])?;
                l.set_nonblocking(true)?;
                Ok(Listener::Tcp(l))
            }
        }
    }

    /// The next connection, `None` when none is waiting.
    pub fn accept(&self) -> io::Result<Option<Stream>> {
        let r = match self {
            Listener::Tcp(l) => l.accept().map(|(s, _)| {
                let _ = s.set_nonblocking(false);
                Stream::Tcp(s)
            }),
            Listener::Unix(l, _) => l.accept().map(|(s, _)| {
                let _ = s.set_nonblocking(false);
                Stream::Unix(s)
            }),
        };
        match r {
            Ok(s) => Ok(Some(s)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether only this host can connect (a loopback address or a Unix socket).
    pub fn local_only(&self) -> bool {
        match self {
            Listener::Tcp(l) => l.local_addr().is_ok_and(|a| a.ip().is_loopback()),
            Listener::Unix(..) => true,
        }
    }

    /// fio's banner text: `<addr>,<port>` or the socket path.
    pub fn describe(&self) -> String {
        match self {
            Listener::Tcp(l) => match l.local_addr() {
                Ok(a) => format!("{},{}", a.ip(), a.port()),
                Err(_) => "?".into(),
            },
            Listener::Unix(_, p) => p.display().to_string(),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix(_, p) = self {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Connect within `timeout`; also returns the text PROBE carries (the address connected
/// to, `sock` for a Unix socket).
pub fn connect(addr: &Addr, timeout: Duration) -> io::Result<(Stream, String)> {
    match addr {
        Addr::Unix(p) => Ok((Stream::Unix(UnixStream::connect(p)?), "sock".into())),
        Addr::Ip { family, host, port } => {
            let mut last = None;
            for a in resolve(*family, host_or_loopback(*family, host), *port)? {
                match TcpStream::connect_timeout(&a, timeout) {
                    Ok(s) => return Ok((Stream::Tcp(s), a.ip().to_string())),
                    Err(e) => last = Some(e),
                }
            }
            Err(last.unwrap_or_else(|| io::Error::other("no address to connect to")))
        }
    }
}

// ---- TLS over a stream (feature `tls`) ----
//
// A TLS connection is one `rustls::Connection` shared by the clones of a [`Stream`]: the
// fio-protocol code reads on one thread and writes from others. A reader never holds the
// connection's lock while it waits on the socket: it reads ciphertext from its own clone
// of the socket, then takes the lock only to decrypt, so a writer is never held up by a
// reader's wait (and a reader's socket timeout leaves the TLS state whole).

#[cfg(feature = "tls")]
pub use tls_stream::TlsStream;

#[cfg(feature = "tls")]
mod tls_stream {
    use super::Stream;
    use std::io::{self, Read, Write};
    use std::sync::{Arc, Mutex, MutexGuard};

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

    impl TlsStream {
        /// Complete the handshake on `sock`; the stream the session then runs on.
        pub fn handshake(mut sock: Stream, mut conn: rustls::Connection) -> io::Result<TlsStream> {
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

        /// Whether the peer proved a certificate (the verifier checked it).
        pub fn peer_has_certificate(&self) -> bool {
            lock(&self.state)
                .conn
                .peer_certificates()
                .is_some_and(|c| !c.is_empty())
        }
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
}
