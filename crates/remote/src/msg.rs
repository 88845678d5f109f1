//! The control and status messages (fio-protocol.md §4): everything except the thread
//! stats (`ts`), the options pack (`pack`), I/O logs (`iolog`) and verify state (`vstate`).

use crate::bytes::{cstr, truncate, Reader, Writer};
use crate::error::{Error, Result};
use crate::frame::Opcode;

/// A message body with one layout: its opcode, encoder and checked decoder.
pub trait Payload: Sized {
    const OPCODE: Opcode;
    fn encode(&self) -> Vec<u8>;
    fn decode(payload: &[u8]) -> Result<Self>;
}

pub(crate) fn exact(what: &'static str, p: &[u8], n: usize, want: &'static str) -> Result<()> {
    if p.len() != n {
        return Err(Error::Size {
            what,
            got: p.len(),
            want,
        });
    }
    Ok(())
}

/// `PROBE` request (C→S, 136 bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// Bit 0: the client can inflate zlib.
    pub flags: u64,
    /// The address the client connected to, as text (`sock` for a Unix socket).
    pub server: String,
}

/// Probe flag: zlib.
pub const PROBE_FLAG_ZLIB: u64 = 1;

impl Payload for Probe {
    const OPCODE: Opcode = Opcode::Probe;
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(136);
        w.u64(self.flags);
        w.str_fixed(&self.server, 128);
        w.buf
    }
    fn decode(p: &[u8]) -> Result<Self> {
        exact("PROBE request", p, 136, "136")?;
        let mut r = Reader::new(p, "PROBE request");
        Ok(Probe {
            flags: r.u64()?,
            server: r.str_fixed(128)?,
        })
    }
}

/// `PROBE` reply (S→C, 112 bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeReply {
    pub hostname: String,
    pub bigendian: u8,
    pub fio_version: String,
    /// 1 Linux, 2 AIX, 3 FreeBSD, 4 HP-UX, 5 OSX, 6 NetBSD, 7 OpenBSD, 8 Solaris,
    /// 9 Windows, 10 Android, 11 DragonFly.
    pub os: u8,
    /// 1 x86-64, 2 x86, 3 ppc, 4 ia64, 5 s390, 6 alpha, 7 sparc, 8 sparc64, 9 arm, 10 sh,
    /// 11 hppa, 12 mips, 13 aarch64, 14 generic.
    pub arch: u8,
    /// Pointer size in bytes.
    pub bpp: u8,
    pub cpus: u32,
    /// Bit 0: zlib is used on this connection.
    pub flags: u64,
}

impl Payload for ProbeReply {
    const OPCODE: Opcode = Opcode::Probe;
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(112);
        w.str_fixed(&self.hostname, 64);
        w.u8(self.bigendian);
        w.str_fixed(&self.fio_version, 32);
        w.u8(self.os);
        w.u8(self.arch);
        w.u8(self.bpp);
        w.u32(self.cpus);
        w.u64(self.flags);
        w.buf
    }
    fn decode(p: &[u8]) -> Result<Self> {
        exact("PROBE reply", p, 112, "112")?;
        let mut r = Reader::new(p, "PROBE reply");
        Ok(ProbeReply {
            hostname: r.str_fixed(64)?,
            bigendian: r.u8()?,
            fio_version: r.str_fixed(32)?,
            os: r.u8()?,
            arch: r.u8()?,
            bpp: r.u8()?,
            cpus: r.u32()?,
            flags: r.u64()?,
        })
    }
}

/// Client type of JOB / JOBLINE / LOAD_FILE: the command-line client.
pub const CLIENT_TYPE_CLI: u32 = 1;
/// ... and gfio.
pub const CLIENT_TYPE_GUI: u32 = 2;

/// `JOB` (C→S): a job file's text (§4.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub client_type: u32,
    /// The job text up to its first NUL.
    pub text: String,
}

impl Payload for Job {
    const OPCODE: Opcode = Opcode::Job;
    /// The text, its NUL and nothing else (fio's client adds 8 KiB of slack; the server
    /// parses up to the NUL either way).
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(self.text.len() + 9);
        w.u32(self.text.len() as u32 + 1);
        w.u32(self.client_type);
        w.bytes(self.text.as_bytes());
        w.u8(0);
        w.buf
    }
    fn decode(p: &[u8]) -> Result<Self> {
        let mut r = Reader::new(p, "JOB");
        let buf_len = r.u32()? as usize;
        let client_type = r.u32()?;
        let area = r.take(buf_len)?;
        let end = area.iter().position(|&c| c == 0).unwrap_or(area.len());
        let text = std::str::from_utf8(&area[..end]).map_err(|e| Error::Field {
            what: "JOB text",
            detail: format!("not UTF-8 at byte {}", e.valid_up_to()),
        })?;
        Ok(Job {
            client_type,
            text: text.to_string(),
        })
    }
}

/// `JOBLINE` (C→S): an argument vector, `argv[0]` included (§4.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobLine {
    pub client_type: u16,
    pub args: Vec<String>,
}

impl Payload for JobLine {
    const OPCODE: Opcode = Opcode::JobLine;
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u16(self.args.len() as u16);
        w.u16(self.client_type);
        for a in &self.args {
            let a = truncate(a, u16::MAX as usize - 1);
            w.u16(a.len() as u16 + 1);
            w.bytes(a.as_bytes());
            w.u8(0);
        }
        w.buf
    }
    fn decode(p: &[u8]) -> Result<Self> {
        let mut r = Reader::new(p, "JOBLINE");
        let lines = r.u16()?;
        let client_type = r.u16()?;
        let mut args = Vec::with_capacity(lines as usize);
        for i in 0..lines {
            let len = r.u16()? as usize;
            if len == 0 {
                return Err(Error::Field {
                    what: "JOBLINE entry",
                    detail: format!("argument {i} has length 0 (its NUL must be counted)"),
                });
            }
            let s = r.take(len)?;
            if s[len - 1] != 0 {
                return Err(Error::Field {
                    what: "JOBLINE entry",
                    detail: format!("argument {i} does not end in a NUL"),
                });
            }
            args.push(cstr(s));
        }
        Ok(JobLine { client_type, args })
    }
}

/// `TEXT` (S→C): log output of the server (§4.5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text {
    /// 1 debug, 2 info, 3 error.
    pub level: u32,
    pub log_sec: u64,
    pub log_usec: u64,
    pub text: String,
}

/// Log levels of TEXT.
pub const LOG_INFO: u32 = 2;
pub const LOG_ERR: u32 = 3;

impl Payload for Text {
    const OPCODE: Opcode = Opcode::Text;
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(24 + self.text.len());
        w.u32(self.level);
        w.u32(self.text.len() as u32);
        w.u64(self.log_sec);
        w.u64(self.log_usec);
        w.bytes(self.text.as_bytes());
        w.buf
    }
    fn decode(p: &[u8]) -> Result<Self> {
        let mut r = Reader::new(p, "TEXT");
        let level = r.u32()?;
        let len = r.u32()? as usize;
        let log_sec = r.u64()?;
        let log_usec = r.u64()?;
        let t = r.take(len)?;
        Ok(Text {
            level,
            log_sec,
            log_usec,
            text: String::from_utf8_lossy(t).into_owned(),
        })
    }
}

/// `START` (S→C): cumulative job and report counts (§4.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Start {
    pub jobs: u32,
    pub stat_outputs: u32,
}

impl Payload for Start {
    const OPCODE: Opcode = Opcode::Start;
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(8);
        w.u32(self.jobs);
        w.u32(self.stat_outputs);
        w.buf
    }
    fn decode(p: &[u8]) -> Result<Self> {
        exact("START", p, 8, "8")?;
        let mut r = Reader::new(p, "START");
        Ok(Start {
            jobs: r.u32()?,
            stat_outputs: r.u32()?,
        })
    }
}

/// `STOP` (S→C): the job process's exit status and terminating signal (§4.12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    pub error: u32,
    pub signal: u32,
}

impl Payload for Stop {
    const OPCODE: Opcode = Opcode::Stop;
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(8);
        w.u32(self.error);
        w.u32(self.signal);
        w.buf
    }
    fn decode(p: &[u8]) -> Result<Self> {
        exact("STOP", p, 8, "8")?;
        let mut r = Reader::new(p, "STOP");
        Ok(Stop {
            error: r.u32()?,
            signal: r.u32()?,
        })
    }
}

/// `ETA` (S→C): the live status (`jobs_eta`, §4.9).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Eta {
    pub nr_running: u32,
    pub nr_ramp: u32,
    pub nr_pending: u32,
    pub nr_setting_up: u32,
    /// Summed rate_min (bytes/s), rate (bytes/s) and the current bandwidth (KiB/s).
    pub m_rate: [u64; 3],
    pub t_rate: [u64; 3],
    pub rate: [u64; 3],
    pub m_iops: [u32; 3],
    pub t_iops: [u32; 3],
    pub iops: [u32; 3],
    pub elapsed_sec: u64,
    pub eta_sec: u64,
    pub is_pow2: u32,
    pub unit_base: u32,
    pub sig_figs: u32,
    pub files_open: u32,
    pub nr_threads: u32,
    /// Per-job state letters, run-length encoded (`r(1),W(1)`).
    pub run_str: String,
}

impl Payload for Eta {
    const OPCODE: Opcode = Opcode::Eta;
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(169 + self.run_str.len());
        w.u32s(&[
            self.nr_running,
            self.nr_ramp,
            self.nr_pending,
            self.nr_setting_up,
        ]);
        w.u64s(&self.m_rate);
        w.u64s(&self.t_rate);
        w.u64s(&self.rate);
        w.u32s(&self.m_iops);
        w.u32s(&self.t_iops);
        w.u32s(&self.iops);
        w.u32(0);
        w.u64(self.elapsed_sec);
        w.u64(self.eta_sec);
        w.u32s(&[
            self.is_pow2,
            self.unit_base,
            self.sig_figs,
            self.files_open,
            self.nr_threads,
            0,
        ]);
        w.bytes(self.run_str.as_bytes());
        w.u8(0);
        w.buf
    }
    /// Accepts the bare 168 bytes a server without jobs sends (empty run string).
    fn decode(p: &[u8]) -> Result<Self> {
        let mut r = Reader::new(p, "ETA");
        let [nr_running, nr_ramp, nr_pending, nr_setting_up] = r.u32s()?;
        let m_rate = r.u64s()?;
        let t_rate = r.u64s()?;
        let rate = r.u64s()?;
        let m_iops = r.u32s()?;
        let t_iops = r.u32s()?;
        let iops = r.u32s()?;
        r.skip(4)?;
        let elapsed_sec = r.u64()?;
        let eta_sec = r.u64()?;
        let [is_pow2, unit_base, sig_figs, files_open, nr_threads, _] = r.u32s()?;
        Ok(Eta {
            nr_running,
            nr_ramp,
            nr_pending,
            nr_setting_up,
            m_rate,
            t_rate,
            rate,
            m_iops,
            t_iops,
            iops,
            elapsed_sec,
            eta_sec,
            is_pow2,
            unit_base,
            sig_figs,
            files_open,
            nr_threads,
            run_str: cstr(r.rest()),
        })
    }
}

/// Block-device counters of `DU` (§4.13).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskCounters {
    /// [read, write]
    pub ios: [u64; 2],
    pub merges: [u64; 2],
    /// 512-byte units.
    pub sectors: [u64; 2],
    /// ms
    pub ticks: [u64; 2],
    pub io_ticks: u64,
    pub time_in_queue: u64,
}

/// `DU` (S→C, 256 bytes): one disk's utilisation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiskUtil {
    pub name: String,
    pub s: DiskCounters,
    /// Measured wall time (ms): util % = io_ticks / msec × 100.
    pub msec: u64,
    /// Sums over slave devices (md/RAID).
    pub agg: DiskCounters,
    pub slavecount: u32,
    /// Highest slave utilisation, percent.
    pub max_util: f64,
}

fn put_counters(w: &mut Writer, c: &DiskCounters) {
    w.u64s(&c.ios);
    w.u64s(&c.merges);
    w.u64s(&c.sectors);
    w.u64s(&c.ticks);
    w.u64(c.io_ticks);
    w.u64(c.time_in_queue);
}

fn get_counters(r: &mut Reader) -> Result<DiskCounters> {
    Ok(DiskCounters {
        ios: r.u64s()?,
        merges: r.u64s()?,
        sectors: r.u64s()?,
        ticks: r.u64s()?,
        io_ticks: r.u64()?,
        time_in_queue: r.u64()?,
    })
}

impl Payload for DiskUtil {
    const OPCODE: Opcode = Opcode::Du;
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(256);
        w.str_fixed(&self.name, 64);
        put_counters(&mut w, &self.s);
        w.u64(self.msec);
        put_counters(&mut w, &self.agg);
        w.u32(self.slavecount);
        w.u32(0);
        w.fp64(self.max_util);
        w.buf
    }
    fn decode(p: &[u8]) -> Result<Self> {
        exact("DU", p, 256, "256")?;
        let mut r = Reader::new(p, "DU");
        let name = r.str_fixed(64)?;
        let s = get_counters(&mut r)?;
        let msec = r.u64()?;
        let agg = get_counters(&mut r)?;
        let slavecount = r.u32()?;
        r.skip(4)?;
        Ok(DiskUtil {
            name,
            s,
            msec,
            agg,
            slavecount,
            max_util: r.fp64()?,
        })
    }
}

/// `LOAD_FILE` (C→S): a job file the server opens on its own filesystem (§4.19).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadFile {
    pub client_type: u16,
    pub path: String,
}

impl Payload for LoadFile {
    const OPCODE: Opcode = Opcode::LoadFile;
    fn encode(&self) -> Vec<u8> {
        let path = truncate(&self.path, u16::MAX as usize - 1);
        let mut w = Writer::with_capacity(path.len() + 5);
        w.u16(path.len() as u16);
        w.u16(self.client_type);
        w.bytes(path.as_bytes());
        w.u8(0);
        w.buf
    }
    /// fio's server relies on the NUL, not on name_len: so does this decoder, and it
    /// requires one within the payload.
    fn decode(p: &[u8]) -> Result<Self> {
        let mut r = Reader::new(p, "LOAD_FILE");
        let _name_len = r.u16()?;
        let client_type = r.u16()?;
        let rest = r.rest();
        if !rest.contains(&0) {
            return Err(Error::Field {
                what: "LOAD_FILE path",
                detail: "no terminating NUL".into(),
            });
        }
        Ok(LoadFile {
            client_type,
            path: cstr(rest),
        })
    }
}

/// `JOB_OPT` (S→C, 200 bytes): one explicitly set option (§4.22).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobOpt {
    pub global: bool,
    pub truncated: bool,
    /// 0 for global options, else the 0-based index of the stat report.
    pub groupid: u32,
    pub name: String,
    pub value: String,
}

impl JobOpt {
    /// An option, with `truncated` set when the name or value does not fit.
    pub fn new(global: bool, report: u32, name: &str, value: &str) -> JobOpt {
        JobOpt {
            global,
            truncated: name.len() > 63 || value.len() > 127,
            groupid: if global { 0 } else { report },
            name: truncate(name, 63).to_string(),
            value: truncate(value, 127).to_string(),
        }
    }
}

impl Payload for JobOpt {
    const OPCODE: Opcode = Opcode::JobOpt;
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::with_capacity(200);
        w.u16(self.global as u16);
        w.u16(self.truncated as u16);
        w.u32(self.groupid);
        w.str_fixed(&self.name, 64);
        w.str_fixed(&self.value, 128);
        w.buf
    }
    fn decode(p: &[u8]) -> Result<Self> {
        exact("JOB_OPT", p, 200, "200")?;
        let mut r = Reader::new(p, "JOB_OPT");
        Ok(JobOpt {
            global: r.u16()? != 0,
            truncated: r.u16()? != 0,
            groupid: r.u32()?,
            name: r.str_fixed(64)?,
            value: r.str_fixed(128)?,
        })
    }
}

/// `UPDATE_JOB` reply (S→C): 0, or 19 (ENODEV) for a bad thread number (§4.18).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UpdateJobReply {
    pub error: u32,
}

impl Payload for UpdateJobReply {
    const OPCODE: Opcode = Opcode::UpdateJob;
    fn encode(&self) -> Vec<u8> {
        self.error.to_le_bytes().to_vec()
    }
    fn decode(p: &[u8]) -> Result<Self> {
        exact("UPDATE_JOB reply", p, 4, "4")?;
        Ok(UpdateJobReply {
            error: Reader::new(p, "UPDATE_JOB reply").u32()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Payload + PartialEq + std::fmt::Debug>(v: T) -> Vec<u8> {
        let b = v.encode();
        assert_eq!(T::decode(&b).unwrap(), v);
        for cut in [0, b.len() / 2, b.len().saturating_sub(1)] {
            if cut < b.len() {
                assert!(
                    T::decode(&b[..cut]).is_err(),
                    "{:?} cut at {cut}",
                    T::OPCODE
                );
            }
        }
        b
    }

    #[test]
    fn jobline_matches_capture() {
        let b = round_trip(JobLine {
            client_type: 1,
            args: vec!["fio".into(), "--output-format=json".into()],
        });
        let mut want = vec![2, 0, 1, 0, 4, 0];
        want.extend_from_slice(b"fio\0");
        want.extend_from_slice(&[0x15, 0]);
        want.extend_from_slice(b"--output-format=json\0");
        assert_eq!(b, want);
        // A length that runs past the payload.
        let mut bad = want.clone();
        bad[4] = 40;
        assert!(JobLine::decode(&bad).is_err());
        bad[4] = 0;
        assert!(JobLine::decode(&bad).is_err());
    }

    #[test]
    fn fixed_layouts_round_trip() {
        let b = round_trip(Probe {
            flags: 1,
            server: "127.0.0.1".into(),
        });
        assert_eq!(b.len(), 136);
        let b = round_trip(ProbeReply {
            hostname: "h".into(),
            bigendian: 0,
            fio_version: "fio-3.33".into(),
            os: 1,
            arch: 1,
            bpp: 8,
            cpus: 2,
            flags: 1,
        });
        assert_eq!((b.len(), b[97], b[99], b[100]), (112, 1, 8, 2));
        round_trip(Start {
            jobs: 2,
            stat_outputs: 2,
        });
        round_trip(Stop {
            error: 1,
            signal: 9,
        });
        let b = round_trip(DiskUtil {
            name: "vda".into(),
            s: DiskCounters {
                ios: [1, 2],
                io_ticks: 5,
                ..Default::default()
            },
            msec: 10,
            max_util: 12.5,
            ..Default::default()
        });
        assert_eq!(b.len(), 256);
        assert_eq!(b[144], 10);
        let b = round_trip(JobOpt::new(false, 3, "bs", "4k"));
        assert_eq!(b.len(), 200);
        let long = JobOpt::new(true, 3, "filename", &"x".repeat(300));
        assert!(long.truncated && long.value.len() == 127 && long.groupid == 0);
        round_trip(UpdateJobReply { error: 19 });
        round_trip(Text {
            level: 2,
            log_sec: 1,
            log_usec: 2,
            text: "Starting 1 process\n".into(),
        });
        round_trip(LoadFile {
            client_type: 1,
            path: "/etc/job.fio".into(),
        });
        round_trip(Job {
            client_type: 1,
            text: "[a]\nrw=read\n".into(),
        });
    }

    #[test]
    fn eta_layout() {
        let e = Eta {
            nr_running: 1,
            rate: [100, 0, 0],
            iops: [25, 0, 0],
            elapsed_sec: 3,
            eta_sec: 2147483647,
            sig_figs: 4,
            nr_threads: 1,
            run_str: "R(1)".into(),
            ..Default::default()
        };
        let b = e.encode();
        assert_eq!(Eta::decode(&b).unwrap(), e);
        assert!(Eta::decode(&b[..167]).is_err());
        assert_eq!(b.len(), 168 + 5);
        assert_eq!(b[64], 100);
        assert_eq!(b[112], 25);
        assert_eq!(b[160], 1);
        // The bare 168 bytes of a server without jobs.
        let z = Eta::decode(&[0u8; 168]).unwrap();
        assert_eq!(z, Eta::default());
    }

    #[test]
    fn job_text_with_slack_and_bad_sizes() {
        let mut p = Job {
            client_type: 1,
            text: "[x]\n".into(),
        }
        .encode();
        // fio's client: buf_len with slack, garbage after the NUL.
        p[0] = 5 + 10;
        p.extend_from_slice(&[0xff; 10]);
        assert_eq!(Job::decode(&p).unwrap().text, "[x]\n");
        p[0] = 200;
        assert!(matches!(Job::decode(&p), Err(Error::Truncated { .. })));
        assert!(matches!(
            Start::decode(&[0; 9]),
            Err(Error::Size { got: 9, .. })
        ));
        assert!(LoadFile::decode(&[4, 0, 1, 0, b'a', b'b']).is_err());
    }
}
