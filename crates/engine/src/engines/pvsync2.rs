//! `pvsync2`: preadv2(2)/pwritev2(2) with RWF_HIPRI / RWF_NOWAIT / RWF_UNCACHED. The
//! system calls are Linux's, so the registry builds this engine on Linux only.

use crate::api::{Caps, Engine, EngineConfig, EngineDef, IoReq, Op, Queued};
use crate::from_rustix;
use crate::sync::{buf, do_sync, do_trim, fd, wbuf, SYNC_CAPS};
use flexio_job::engine_opts::parse;
use flexio_job::table::Kind;
use rustix::io::{IoSlice, IoSliceMut, ReadWriteFlags};

/// `RWF_UNCACHED` (called RWF_DONTCACHE by the kernel since 6.14).
const RWF_UNCACHED: u32 = 0x80;

flexio_job::engine_options! {
    /// pvsync2's options (fio's pvsync2 option table).
    pub struct Pvsync2Opts; rows OPTIONS;
    /// RWF_HIPRI: polled completions.
    hipri: bool = false,
        "hipri", Kind::Flag, "0", "Set RWF_HIPRI for pwritev2/preadv2", parse::flag;
    /// Share of requests with RWF_HIPRI (percent).
    hipri_percentage: u32 = 100,
        "hipri_percentage", Kind::Int { min: 0, max: 100 }, "100",
        "Probabilistically set RWF_HIPRI for pwritev2/preadv2",
        |v, kb| parse::int(v, kb, 0, 100).map(|n| n as u32);
    /// RWF_UNCACHED on buffered reads and writes.
    uncached: bool = false,
        "uncached", Kind::Int { min: 0, max: 1 }, "0", "Use RWF_UNCACHED for buffered read/writes",
        |v, kb| parse::int(v, kb, 0, 1).map(|n| n == 1);
    /// RWF_NOWAIT.
    nowait: bool = false,
        "nowait", Kind::Bool, "0", "Set RWF_NOWAIT for pwritev2/preadv2", parse::boolean;
}

/// `pvsync2`: preadv2(2)/pwritev2(2) with RWF_HIPRI / RWF_NOWAIT / RWF_UNCACHED.
pub struct Pvsync2 {
    base: ReadWriteFlags,
    hipri_pct: u32,
    rng: u32,
    /// RWF_ATOMIC on writes (`atomic`).
    atomic: ReadWriteFlags,
}

impl EngineDef for Pvsync2 {
    const NAME: &'static str = "pvsync2";
    const HELP: &'static str = "Basic preadv2(2) or pwritev2(2) I/O with RWF flags";
    const OPTIONS: &'static [&'static [flexio_job::table::OptDef]] = &[OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        let mut e = Pvsync2::new(&Pvsync2Opts::from_values(&cfg.values), cfg.seed);
        if cfg.atomic {
            e.atomic = ReadWriteFlags::from_bits_retain(crate::platform::RWF_ATOMIC);
        }
        e
    }
}

impl Pvsync2 {
    pub fn new(o: &Pvsync2Opts, seed: u32) -> Self {
        let mut base = ReadWriteFlags::empty();
        if o.nowait {
            base |= ReadWriteFlags::NOWAIT;
        }
        if o.uncached {
            base |= ReadWriteFlags::from_bits_retain(RWF_UNCACHED);
        }
        Pvsync2 {
            base,
            hipri_pct: if o.hipri { o.hipri_percentage } else { 0 },
            rng: seed | 1,
            atomic: ReadWriteFlags::empty(),
        }
    }

    #[inline]
    fn flags(&mut self) -> ReadWriteFlags {
        if self.hipri_pct == 0 {
            return self.base;
        }
        if self.hipri_pct >= 100 {
            return self.base | ReadWriteFlags::HIPRI;
        }
        // xorshift32 for the per-I/O coin.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 17;
        self.rng ^= self.rng << 5;
        if self.rng % 100 < self.hipri_pct {
            self.base | ReadWriteFlags::HIPRI
        } else {
            self.base
        }
    }
}

impl Engine for Pvsync2 {
    fn caps(&self) -> Caps {
        Caps {
            atomic_writes: true,
            ..SYNC_CAPS
        }
    }
    #[inline]
    fn queue(&mut self, io: &IoReq) -> Queued {
        let flags = self.flags();
        Queued::Completed(match io.op {
            Op::Read => from_rustix(rustix::io::preadv2(
                fd(io),
                &mut [IoSliceMut::new(buf(io))],
                io.offset,
                flags,
            )),
            Op::Write => from_rustix(rustix::io::pwritev2(
                fd(io),
                &[IoSlice::new(wbuf(io))],
                io.offset,
                flags | self.atomic,
            )),
            Op::Sync | Op::Datasync | Op::SyncRange => do_sync(io),
            Op::Trim => do_trim(io),
        })
    }
}
