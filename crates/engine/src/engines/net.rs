//! `net` and `netsplice`: the job's data goes through a socket (fio's network engines).
//!
//! The target is `hostname=` (or `filename=`) with `port=` and `protocol=` (tcp, tcpv6,
//! udp, udpv6, unix; for unix the name is the socket's path and there is no port). A
//! job with `listen` (TCP and unix) binds and waits for one connection before its clock
//! starts; otherwise it connects. For datagrams (UDP, and unix in fio's rules) the reader
//! binds and the writer sends; `listen` is for TCP only. `numjobs` clones use consecutive
//! ports. Reads receive, writes send; `pingpong` answers each request with the same
//! amount the other way (round-trip latency). UDP to a multicast group sets
//! `ttl`/`interface` on the sender and joins the group on the reader.
//!
//! The wire is fio's, so flexio and fio talk to each other: a UDP writer announces itself
//! with fio's 8-byte "link open" datagram and every sender ends with the 8-byte "link
//! close" message, which ends the reader's job; UDP payloads carry fio's 24-byte sequence
//! trailer. A TCP peer that closes also ends the reader.
//!
//! `netsplice` moves TCP data through a pipe with vmsplice(2)/splice(2) as fio's does.
//! Waits on the peer happen in 100 ms steps, so the job's runtime and a stop request end
//! them.

use crate::api::{Caps, Engine, EngineConfig, EngineDef, IoReq, Op, Queued, STOP_WAITS};
use flexio_job::engine_opts::parse;
use flexio_job::table::{Kind, OptDef};
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::fd::{AsFd, OwnedFd};
use rustix::net::{
    AddressFamily, RecvFlags, SendFlags, SocketAddrAny, SocketAddrUnix, SocketType,
};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    Tcp,
    TcpV6,
    Udp,
    UdpV6,
    Unix,
    /// AF_VSOCK stream sockets (fio 3.37+): `hostname` is the peer's context id.
    Vsock,
}

impl Proto {
    fn tcp(self) -> bool {
        matches!(self, Proto::Tcp | Proto::TcpV6)
    }
    /// Connection-oriented with listen/accept over addresses and ports (TCP, vsock).
    fn stream(self) -> bool {
        self.tcp() || self == Proto::Vsock
    }
    fn udp(self) -> bool {
        matches!(self, Proto::Udp | Proto::UdpV6)
    }
    fn v6(self) -> bool {
        matches!(self, Proto::TcpV6 | Proto::UdpV6)
    }
}

flexio_job::engine_options! {
    /// The network engines' options.
    pub struct NetOpts; rows OPTIONS;
    /// Peer host (sender) or multicast group (UDP reader); sets the job's target.
    hostname: Option<String> = None,
        "hostname", Kind::Str, "", "Hostname for net IO engine",
        |v, kb| parse::string(v, kb).map(Some);
    /// Port (0 = not set).
    port: u32 = 0,
        "port", Kind::Int { min: 1, max: 65535 }, "",
        "Port to use for TCP or UDP net connections",
        |v, kb| parse::int(v, kb, 1, 65535).map(|n| n as u32);
    /// Transport.
    protocol: Proto = Proto::Tcp,
        "protocol" | "proto", Kind::Choice(&[
            ("tcp", "Transmission Control Protocol"),
            ("tcpv6", "Transmission Control Protocol V6"),
            ("udp", "User Datagram Protocol"),
            ("udpv6", "User Datagram Protocol V6"),
            ("unix", "UNIX domain socket"),
            ("vsock", "VSOCK protocol"),
        ]), "tcp", "Network protocol to use",
        |v, _| parse::choice(v, &[
            ("tcp", Proto::Tcp),
            ("tcpv6", Proto::TcpV6),
            ("udp", Proto::Udp),
            ("udpv6", Proto::UdpV6),
            ("unix", Proto::Unix),
            ("vsock", Proto::Vsock),
        ]), newer [("vsock", "3.37")];
    /// TCP_NODELAY.
    nodelay: bool = false,
        "nodelay", Kind::Bool, "", "Use TCP_NODELAY on TCP connections", parse::boolean;
    /// Wait for the peer to connect.
    listen: bool = false,
        "listen", Kind::Flag, "", "Listen for incoming TCP connections", parse::flag;
    /// Answer every request the other way.
    pingpong: bool = false,
        "pingpong", Kind::Flag, "", "Ping-pong IO requests", parse::flag;
    /// Multicast interface address.
    interface: Option<String> = None,
        "interface", Kind::Str, "", "Network interface to use",
        |v, kb| parse::string(v, kb).map(Some);
    /// Multicast TTL.
    ttl: u32 = 1,
        "ttl", Kind::Int { min: 0, max: u32::MAX as i64 }, "1",
        "Time-to-live value for outgoing UDP multicast packets",
        |v, kb| parse::int(v, kb, 0, u32::MAX as i64).map(|n| n as u32);
    /// SO_SNDBUF / SO_RCVBUF.
    window_size: u32 = 0,
        "window_size", Kind::Int { min: 0, max: u32::MAX as i64 }, "",
        "Set socket buffer window size",
        |v, kb| parse::int(v, kb, 0, u32::MAX as i64).map(|n| n as u32);
    /// TCP_MAXSEG.
    mss: u32 = 0,
        "mss", Kind::Int { min: 0, max: u32::MAX as i64 }, "",
        "Set TCP maximum segment size",
        |v, kb| parse::int(v, kb, 0, u32::MAX as i64).map(|n| n as u32);
}

/// fio's link messages: magic, then the command.
const LINK_MAGIC: u32 = 0x6c69_6e6b;
const LINK_OPEN: u32 = 0x98;
const LINK_CLOSE: u32 = 0x89;
/// fio's UDP sequence trailer magic.
const UDP_SEQ_MAGIC: u64 = 0x6573_7571_6e55_6563;
/// Longest single wait before looking at the deadline and stop requests.
const WAIT_STEP: Duration = Duration::from_millis(100);

fn err(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg.into())
}

fn from_rx(e: rustix::io::Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

/// The option checks fio makes in its init, as one message.
fn check(o: &NetOpts, cfg: &EngineConfig) -> Result<(), String> {
    let p = o.protocol;
    if cfg.random {
        return Err("network IO can't be random".into());
    }
    if p == Proto::Unix && o.port != 0 {
        return Err("network IO port not valid with unix socket".into());
    }
    if p != Proto::Unix && o.port == 0 {
        return Err("network IO requires port for tcp or udp".into());
    }
    if p == Proto::Vsock {
        vsock_available()?;
        if let Some(h) = host_of(o, cfg).filter(|_| !listens(o, cfg)) {
            h.trim().parse::<u32>().map_err(|_| {
                format!("protocol=vsock: hostname '{h}' is not a context id (a number)")
            })?;
        }
    }
    if !p.stream() {
        if o.listen {
            return Err("listen only valid for TCP proto IO".into());
        }
        if cfg.reads && cfg.writes {
            return Err("datagram network connections must be read OR write".into());
        }
        if p == Proto::Unix && host_of(o, cfg).is_none() {
            return Err("UNIX sockets need host/filename".into());
        }
    }
    let listens = listens(o, cfg);
    if !listens && p != Proto::Unix && host_of(o, cfg).is_none() {
        let hint = if cfg.reads {
            " (did you forget to set 'listen'?)"
        } else {
            ""
        };
        return Err(format!("connect with no host to connect to{hint}"));
    }
    if listens && p != Proto::Unix && p != Proto::Vsock {
        if let Some(h) = host_of(o, cfg) {
            if !p.udp() || multicast(&h).is_none() {
                return Err("hostname not valid for non-multicast inbound network IO".into());
            }
            if p.v6() {
                return Err("IPv6 not supported for multicast network IO".into());
            }
        }
    }
    if let Some(i) = &o.interface {
        if i.parse::<Ipv4Addr>().is_err() {
            return Err("interface not valid interface IP".into());
        }
    }
    Ok(())
}

fn host_of(o: &NetOpts, cfg: &EngineConfig) -> Option<String> {
    o.hostname.clone().or_else(|| cfg.filename.clone())
}

/// Whether this system has AF_VSOCK sockets (the vsock transports are kernel modules).
fn vsock_available() -> Result<(), String> {
    rustix::net::socket(vsock::family(), SocketType::STREAM, None)
        .map(drop)
        .map_err(|e| {
            format!(
                "protocol=vsock: this system has no AF_VSOCK sockets ({}); the vsock transport modules are not loaded",
                from_rx(e)
            )
        })
}

/// vsock addresses (Linux); elsewhere every call fails and the family is one no socket has.
#[cfg(any(target_os = "linux", target_os = "android"))]
mod vsock {
    use rustix::fd::OwnedFd;
    use rustix::net::AddressFamily;
    use std::io;

    /// VMADDR_CID_ANY: bind to any context.
    pub const CID_ANY: u32 = libc::VMADDR_CID_ANY;

    pub fn family() -> AddressFamily {
        AddressFamily::from_raw(libc::AF_VSOCK as _)
    }

    /// `struct sockaddr_vm` for context `cid`, port `port`.
    fn sockaddr_vm(cid: u32, port: u32) -> libc::sockaddr_vm {
        // SAFETY: sockaddr_vm is plain old data; all zeros is a valid value.
        let mut a: libc::sockaddr_vm = unsafe { std::mem::zeroed() };
        a.svm_family = libc::AF_VSOCK as libc::sa_family_t;
        a.svm_cid = cid;
        a.svm_port = port;
        a
    }

    /// bind(2) or connect(2) of `fd` to a vsock address.
    pub fn addr_call(fd: &OwnedFd, cid: u32, port: u32, bind: bool) -> io::Result<()> {
        let a = sockaddr_vm(cid, port);
        let len = std::mem::size_of::<libc::sockaddr_vm>() as libc::socklen_t;
        let p = &a as *const libc::sockaddr_vm as *const libc::sockaddr;
        // SAFETY: `p` points to a valid sockaddr_vm of `len` bytes for the duration of the
        // call; `fd` is an open socket.
        let r = unsafe {
            if bind {
                libc::bind(std::os::fd::AsRawFd::as_raw_fd(fd), p, len)
            } else {
                libc::connect(std::os::fd::AsRawFd::as_raw_fd(fd), p, len)
            }
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod vsock {
    use rustix::fd::OwnedFd;
    use rustix::net::AddressFamily;
    use std::io;

    pub const CID_ANY: u32 = u32::MAX;

    pub fn family() -> AddressFamily {
        // AF_VSOCK is Linux's: no socket of this family exists here.
        AddressFamily::from_raw(u16::MAX as _)
    }

    pub fn addr_call(_: &OwnedFd, _: u32, _: u32, _: bool) -> io::Result<()> {
        Err(io::Error::from_raw_os_error(libc::EAFNOSUPPORT))
    }
}

/// Whether this side binds (TCP and vsock `listen`; for datagrams and unix sockets, the
/// reader).
fn listens(o: &NetOpts, cfg: &EngineConfig) -> bool {
    if o.protocol.stream() {
        o.listen
    } else {
        cfg.reads
    }
}

fn multicast(h: &str) -> Option<Ipv4Addr> {
    h.parse::<Ipv4Addr>().ok().filter(|a| a.is_multicast())
}

/// A network engine; `SPLICE` moves TCP data through a pipe (netsplice).
pub struct NetIo<const SPLICE: bool> {
    opts: NetOpts,
    host: Option<String>,
    reads: bool,
    listen: bool,
    port: u16,
    runtime: Duration,
    listener: Option<OwnedFd>,
    sock: Option<OwnedFd>,
    /// Datagram peer (sendto address).
    peer: Option<SocketAddrAny>,
    pipe: Option<(OwnedFd, OwnedFd)>,
    deadline: Option<Instant>,
    send_seq: u64,
    /// UDP receiver: the next sequence number expected, whether the sender's trailer is
    /// unusable (other block size), and the datagrams missing so far.
    recv_seq: u64,
    seq_off: bool,
    lost: u64,
    config_error: Option<String>,
}

/// `net`.
pub type Net = NetIo<false>;
/// `netsplice`.
pub type NetSplice = NetIo<true>;

impl<const SPLICE: bool> NetIo<SPLICE> {
    fn new(cfg: &EngineConfig) -> Self {
        let o = NetOpts::from_values(&cfg.values);
        NetIo {
            host: host_of(&o, cfg),
            reads: cfg.reads,
            listen: listens(&o, cfg),
            port: (o.port + cfg.subjob).min(65535) as u16,
            runtime: Duration::from_micros(cfg.runtime_us),
            config_error: check(&o, cfg).err(),
            opts: o,
            listener: None,
            sock: None,
            peer: None,
            pipe: None,
            deadline: None,
            send_seq: 0,
            recv_seq: 0,
            seq_off: false,
            lost: 0,
        }
    }

    fn domain(&self) -> AddressFamily {
        match self.opts.protocol {
            Proto::Unix => AddressFamily::UNIX,
            Proto::Vsock => vsock::family(),
            p if p.v6() => AddressFamily::INET6,
            _ => AddressFamily::INET,
        }
    }

    fn stype(&self) -> SocketType {
        if self.opts.protocol.udp() {
            SocketType::DGRAM
        } else {
            SocketType::STREAM
        }
    }

    /// The peer's address (connecting side) or the bound address (listening side).
    fn inet_addr(&self) -> io::Result<SocketAddr> {
        let v6 = self.opts.protocol.v6();
        if self.listen {
            let ip = match self.host.as_deref().and_then(multicast) {
                Some(g) => IpAddr::V4(g),
                None if v6 => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
                None => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            };
            return Ok(SocketAddr::new(ip, self.port));
        }
        let host = self.host.as_deref().unwrap_or("");
        (host, self.port)
            .to_socket_addrs()
            .map_err(|e| err(format!("getaddrinfo: {host}: {e}")))?
            .find(|a| a.is_ipv6() == v6)
            .ok_or_else(|| err(format!("getaddrinfo: no address of the right family for {host}")))
    }

    fn unix_addr(&self) -> io::Result<SocketAddrUnix> {
        SocketAddrUnix::new(self.host.as_deref().unwrap_or("")).map_err(from_rx)
    }

    /// window_size and mss, as fio sets them.
    fn tune(&self, fd: &OwnedFd) -> io::Result<()> {
        use rustix::net::sockopt;
        let w = self.opts.window_size as usize;
        if w > 0 {
            if self.listen || self.opts.pingpong {
                sockopt::set_socket_recv_buffer_size(fd, w).map_err(from_rx)?;
            }
            if !self.listen || self.opts.pingpong {
                sockopt::set_socket_send_buffer_size(fd, w).map_err(from_rx)?;
            }
        }
        if self.opts.mss > 0 && self.opts.protocol.tcp() {
            crate::sys::set_tcp_maxseg(fd.as_fd(), self.opts.mss)?;
        }
        Ok(())
    }

    fn nodelay(&self, fd: &OwnedFd) -> io::Result<()> {
        if self.opts.nodelay && self.opts.protocol.tcp() {
            rustix::net::sockopt::set_tcp_nodelay(fd, true).map_err(|e| {
                err(format!(
                    "cannot set TCP_NODELAY option on socket ({}), disable with 'nodelay=0'",
                    from_rx(e)
                ))
            })?;
        }
        Ok(())
    }

    fn bind_listener(&mut self) -> io::Result<()> {
        use rustix::net::sockopt;
        let fd = rustix::net::socket(self.domain(), self.stype(), None).map_err(from_rx)?;
        if self.opts.protocol == Proto::Unix {
            let path = self.host.clone().unwrap_or_default();
            let _ = std::fs::remove_file(&path);
            rustix::net::bind(&fd, &self.unix_addr()?).map_err(from_rx)?;
        } else if self.opts.protocol == Proto::Vsock {
            self.tune(&fd)?;
            vsock::addr_call(&fd, vsock::CID_ANY, self.port as u32, true)
                .map_err(|e| err(format!("bind vsock port {}: {e}", self.port)))?;
        } else {
            sockopt::set_socket_reuseaddr(&fd, true).map_err(from_rx)?;
            sockopt::set_socket_reuseport(&fd, true).map_err(from_rx)?;
            self.tune(&fd)?;
            if let Some(group) = self.host.as_deref().and_then(multicast) {
                let ifc = match &self.opts.interface {
                    Some(i) => i.parse().unwrap_or(Ipv4Addr::UNSPECIFIED),
                    None => Ipv4Addr::UNSPECIFIED,
                };
                sockopt::set_ip_add_membership(&fd, &group, &ifc).map_err(from_rx)?;
            }
            let addr = self.inet_addr()?;
            rustix::net::bind(&fd, &addr)
                .map_err(|e| err(format!("bind {addr}: {}", from_rx(e))))?;
        }
        if !self.opts.protocol.udp() {
            rustix::net::listen(&fd, 10).map_err(from_rx)?;
        }
        self.listener = Some(fd);
        Ok(())
    }

    /// Whether waiting must end (the job's runtime is over, or the run stops).
    fn must_stop(&self) -> bool {
        STOP_WAITS.load(Ordering::Relaxed) || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Wait until `fd` is ready for `ev`; false when the wait must end instead.
    fn wait(&self, fd: &OwnedFd, ev: PollFlags) -> io::Result<bool> {
        loop {
            if self.must_stop() {
                return Ok(false);
            }
            let mut p = [PollFd::new(fd, ev)];
            let t = Timespec::try_from(WAIT_STEP).unwrap_or(Timespec {
                tv_sec: 0,
                tv_nsec: 100_000_000,
            });
            match poll(&mut p, Some(&t)) {
                Ok(0) => continue,
                Ok(_) => return Ok(true),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(from_rx(e)),
            }
        }
    }

    fn accept(&mut self) -> io::Result<()> {
        let Some(l) = self.listener.take() else {
            return Ok(());
        };
        if !self.wait(&l, PollFlags::IN)? {
            self.listener = Some(l);
            return Err(err("no peer connected before the job was stopped"));
        }
        let fd = rustix::net::accept(&l).map_err(from_rx)?;
        self.nodelay(&fd)?;
        self.sock = Some(fd);
        self.listener = Some(l);
        Ok(())
    }

    fn connect(&mut self) -> io::Result<()> {
        use rustix::net::sockopt;
        let fd = rustix::net::socket(self.domain(), self.stype(), None).map_err(from_rx)?;
        self.nodelay(&fd)?;
        self.tune(&fd)?;
        match self.opts.protocol {
            Proto::Unix => {
                rustix::net::connect(&fd, &self.unix_addr()?).map_err(|e| {
                    err(format!("connect {}: {}", self.host.as_deref().unwrap_or(""), from_rx(e)))
                })?;
            }
            Proto::Vsock => {
                let h = self.host.as_deref().unwrap_or("").trim();
                let cid: u32 = h.parse().map_err(|_| {
                    err(format!("protocol=vsock: hostname '{h}' is not a context id"))
                })?;
                vsock::addr_call(&fd, cid, self.port as u32, false)
                    .map_err(|e| err(format!("connect vsock {cid}:{}: {e}", self.port)))?;
            }
            p => {
                let addr = self.inet_addr()?;
                if p.udp() {
                    if addr.ip().is_multicast() {
                        if let Some(i) = &self.opts.interface {
                            let ifc: Ipv4Addr = i.parse().unwrap_or(Ipv4Addr::UNSPECIFIED);
                            sockopt::set_ip_multicast_if(&fd, &ifc).map_err(from_rx)?;
                        }
                        sockopt::set_ip_multicast_ttl(&fd, self.opts.ttl).map_err(from_rx)?;
                    }
                    self.peer = Some(SocketAddrAny::from(addr));
                } else {
                    rustix::net::connect(&fd, &addr)
                        .map_err(|e| err(format!("connect {addr}: {}", from_rx(e))))?;
                }
            }
        }
        self.sock = Some(fd);
        Ok(())
    }

    fn link_msg(cmd: u32, big_endian: bool) -> [u8; 8] {
        let mut m = [0u8; 8];
        if big_endian {
            m[..4].copy_from_slice(&LINK_MAGIC.to_be_bytes());
            m[4..].copy_from_slice(&cmd.to_be_bytes());
        } else {
            m[..4].copy_from_slice(&LINK_MAGIC.to_le_bytes());
            m[4..].copy_from_slice(&cmd.to_le_bytes());
        }
        m
    }

    /// Send `buf` once (datagrams to the peer); Ok(0) never happens for a non-empty buffer.
    fn send_some(&self, fd: &OwnedFd, buf: &[u8], wait: bool) -> rustix::io::Result<usize> {
        let f = if wait {
            SendFlags::NOSIGNAL
        } else {
            SendFlags::DONTWAIT | SendFlags::NOSIGNAL
        };
        match &self.peer {
            Some(p) => rustix::net::sendto(fd, buf, f, p),
            None => rustix::net::send(fd, buf, f),
        }
    }

    /// One send of up to `len` bytes; bytes sent, 0 when the wait ended, or -errno.
    fn send(&mut self, buf: &mut [u8]) -> i64 {
        let Some(fd) = self.sock.as_ref() else {
            return -(libc::ENOTCONN as i64);
        };
        if self.opts.protocol.udp() && buf.len() >= 24 {
            // fio's sequence trailer: magic, sequence number, block size (little endian).
            let n = buf.len();
            buf[n - 24..n - 16].copy_from_slice(&UDP_SEQ_MAGIC.to_le_bytes());
            buf[n - 16..n - 8].copy_from_slice(&self.send_seq.to_le_bytes());
            buf[n - 8..].copy_from_slice(&(n as u64).to_le_bytes());
            self.send_seq += 1;
        }
        loop {
            if SPLICE && self.opts.protocol.tcp() {
                return self.splice_out(buf);
            }
            match self.send_some(fd, buf, false) {
                Ok(n) => return n as i64,
                Err(rustix::io::Errno::AGAIN) => match self.wait(fd, PollFlags::OUT) {
                    Ok(true) => continue,
                    Ok(false) => return 0,
                    Err(e) => return -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
                },
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return -(e.raw_os_error() as i64),
            }
        }
    }

    /// One receive; bytes received, 0 when the peer closed or the wait ended, or -errno.
    fn recv(&mut self, buf: &mut [u8]) -> i64 {
        let Some(fd) = self.sock.as_ref() else {
            return -(libc::ENOTCONN as i64);
        };
        loop {
            if SPLICE && self.opts.protocol.tcp() {
                match self.wait(fd, PollFlags::IN) {
                    Ok(true) => {}
                    Ok(false) => return 0,
                    Err(e) => return -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
                }
                return self.splice_in(buf);
            }
            let r = if self.opts.protocol.udp() && self.listen {
                rustix::net::recvfrom(fd, &mut *buf, RecvFlags::DONTWAIT).map(|(n, _, from)| {
                    if self.opts.pingpong {
                        self.peer = from;
                    }
                    n
                })
            } else {
                rustix::net::recv(fd, &mut *buf, RecvFlags::DONTWAIT).map(|(n, _)| n)
            };
            match r {
                Ok(n) => return n as i64,
                Err(rustix::io::Errno::AGAIN) => match self.wait(fd, PollFlags::IN) {
                    Ok(true) => continue,
                    Ok(false) => return 0,
                    Err(e) => return -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
                },
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return -(e.raw_os_error() as i64),
            }
        }
    }

    /// netsplice send: vmsplice the buffer into the pipe, splice the pipe to the socket.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn splice_out(&self, buf: &[u8]) -> i64 {
        let (Some((r, w)), Some(s)) = (self.pipe.as_ref(), self.sock.as_ref()) else {
            return -(libc::EINVAL as i64);
        };
        let n = match crate::sys::vmsplice_from(w, buf) {
            Ok(n) => n,
            Err(e) => return -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        };
        let mut done = 0;
        while done < n {
            match rustix::pipe::splice(r, None, s, None, n - done, rustix::pipe::SpliceFlags::empty()) {
                Ok(0) => break,
                Ok(k) => done += k,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) if done == 0 => return -(e.raw_os_error() as i64),
                Err(_) => break,
            }
        }
        done as i64
    }

    /// netsplice receive: splice the socket into the pipe, vmsplice it out to the buffer.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn splice_in(&self, buf: &mut [u8]) -> i64 {
        let (Some((r, w)), Some(s)) = (self.pipe.as_ref(), self.sock.as_ref()) else {
            return -(libc::EINVAL as i64);
        };
        let n = match rustix::pipe::splice(s, None, w, None, buf.len(), rustix::pipe::SpliceFlags::NONBLOCK) {
            Ok(n) => n,
            Err(rustix::io::Errno::AGAIN) => return -(libc::EAGAIN as i64),
            Err(e) => return -(e.raw_os_error() as i64),
        };
        match crate::sys::vmsplice_to(r, &mut buf[..n]) {
            Ok(k) => k as i64,
            Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        }
    }

    /// Elsewhere netsplice has no splice(2): every transfer fails with ENOSYS.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn splice_out(&self, _buf: &[u8]) -> i64 {
        -(libc::ENOSYS as i64)
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn splice_in(&self, _buf: &mut [u8]) -> i64 {
        -(libc::ENOSYS as i64)
    }

    /// fio's check of a received datagram's sequence trailer: gaps count as lost.
    fn check_seq(&mut self, buf: &[u8], n: usize) {
        if self.seq_off || n < 24 || n != buf.len() {
            return;
        }
        let word = |i: usize| u64::from_le_bytes(buf[i..i + 8].try_into().unwrap_or([0; 8]));
        if word(n - 24) != UDP_SEQ_MAGIC {
            return;
        }
        if word(n - 8) != n as u64 {
            self.seq_off = true;
            return;
        }
        let seq = word(n - 16);
        if seq > self.recv_seq {
            self.lost += seq - self.recv_seq;
        }
        self.recv_seq = seq + 1;
    }

    fn is_close_msg(buf: &[u8], n: i64) -> bool {
        n == 8 && buf[..8] == Self::link_msg(LINK_CLOSE, false)
    }

    fn transfer(&mut self, op: Op, buf: &mut [u8]) -> Queued {
        let n = match op {
            Op::Write => self.send(buf),
            Op::Read => {
                let n = self.recv(buf);
                if n == 0 || Self::is_close_msg(buf, n) {
                    // The peer closed, or the job must end.
                    return Queued::Finished;
                }
                if n > 0 && self.opts.protocol.udp() {
                    self.check_seq(buf, n as usize);
                }
                n
            }
            _ => return Queued::Completed(0),
        };
        if n == 0 {
            return Queued::Finished;
        }
        Queued::Completed(n)
    }
}

impl<const SPLICE: bool> NetIo<SPLICE> {
    fn caps_of() -> Caps {
        Caps {
            syncio: true,
            diskless: true,
            no_fd: true,
            pipe: true,
            bit_based: !SPLICE,
            ..Caps::default()
        }
    }
}

impl EngineDef for Net {
    const NAME: &'static str = "net";
    const HELP: &'static str = "Network I/O over TCP, UDP or unix sockets (sender or listener)";
    const OPTIONS: &'static [&'static [OptDef]] = &[OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        NetIo::new(cfg)
    }
    fn probe(cfg: &EngineConfig) -> Result<(), String> {
        check(&NetOpts::from_values(&cfg.values), cfg)
    }
}

impl EngineDef for NetSplice {
    const NAME: &'static str = "netsplice";
    const HELP: &'static str = "Network I/O through a pipe with splice(2) and vmsplice(2)";
    const OPTIONS: &'static [&'static [OptDef]] = &[OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        NetIo::new(cfg)
    }
    fn probe(cfg: &EngineConfig) -> Result<(), String> {
        check(&NetOpts::from_values(&cfg.values), cfg)
    }
}

impl<const SPLICE: bool> Engine for NetIo<SPLICE> {
    fn caps(&self) -> Caps {
        Self::caps_of()
    }
    fn init(&mut self) -> io::Result<()> {
        if let Some(m) = &self.config_error {
            return Err(err(m.clone()));
        }
        if SPLICE {
            let (r, w) = rustix::pipe::pipe().map_err(from_rx)?;
            self.pipe = Some((r, w));
        }
        if self.listen {
            self.bind_listener()?;
        }
        Ok(())
    }
    fn lost(&self) -> [u64; 3] {
        [self.lost, 0, 0]
    }
    fn init_notes(&self) -> Vec<String> {
        if self.listen && !self.opts.protocol.udp() {
            vec!["fio: waiting for connection".into()]
        } else {
            Vec::new()
        }
    }
    fn setup(&mut self, _paths: &[&std::path::Path]) -> io::Result<()> {
        if self.listen && !self.opts.protocol.udp() {
            self.accept()?;
        } else if self.listen {
            // UDP reader: the bound socket receives; the writer announces itself first.
            self.sock = self.listener.take();
            let mut m = [0u8; 8];
            loop {
                let n = self.recv(&mut m);
                if n <= 0 {
                    return Err(err("no UDP sender announced itself before the job was stopped"));
                }
                if n == 8 && m == Self::link_msg(LINK_OPEN, true) {
                    break;
                }
            }
        } else {
            self.connect()?;
            if self.opts.protocol.udp() {
                let m = Self::link_msg(LINK_OPEN, true);
                if let Some(fd) = self.sock.as_ref() {
                    self.send_some(fd, &m, true).map_err(from_rx)?;
                }
            }
        }
        if !self.runtime.is_zero() {
            self.deadline = Some(Instant::now() + self.runtime);
        }
        Ok(())
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        if io.len == 0 {
            return Queued::Completed(0);
        }
        // SAFETY: the core guarantees `buf` points to `len` bytes it owns, valid and not
        // otherwise referenced until this request completes (inside this call).
        let buf = unsafe { std::slice::from_raw_parts_mut(io.buf, io.len) };
        let r = self.transfer(io.op, buf);
        let Queued::Completed(n) = r else {
            return r;
        };
        if !self.opts.pingpong || n <= 0 {
            return r;
        }
        // Ping-pong: the same amount comes back (or goes back) before the request ends.
        let back = if io.op == Op::Write { Op::Read } else { Op::Write };
        let mut got = 0usize;
        while got < n as usize {
            match self.transfer(back, &mut buf[got..n as usize]) {
                Queued::Completed(k) if k > 0 => got += k as usize,
                Queued::Completed(k) => return Queued::Completed(k),
                other => return other,
            }
        }
        Queued::Completed(n)
    }
}

impl<const SPLICE: bool> Drop for NetIo<SPLICE> {
    fn drop(&mut self) {
        // fio's goodbye: the reader ends its job when it sees it.
        if let Some(fd) = self.sock.as_ref() {
            if !self.reads || self.opts.pingpong {
                let _ = self.send_some(fd, &Self::link_msg(LINK_CLOSE, false), true);
            }
        }
    }
}
