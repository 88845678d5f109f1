//! The I/O sequence of one job thread: which file, direction, offset and length comes
//! next. Pure and deterministic for given seeds.
//!
//! Uniform random offsets reproduce fio 3.33 exactly (same seeds, same generators, same
//! scaling: `block = nblocks * (r / (max + 1))` for tausworthe, fio's LFSR for `lfsr`),
//! so `--norandommap` jobs issue fio's offsets in fio's order.

use crate::bitmap::BlockMap;
use crate::dist::{unit, Dist, Sampler};
use crate::rng::{slot, Lfsr, Taus258, Taus88};

mod lengths;
mod passes;
mod random;
mod sequential;
mod service;
mod strided;
mod zoned;

/// Data direction index: read, write, trim.
pub type Ddir = usize;

/// Block size policy of one direction.
#[derive(Clone, Debug, PartialEq)]
pub enum BsPolicy {
    Fixed(u64),
    /// Uniform in `[min, max]`, a multiple of `min` unless unaligned.
    Range {
        min: u64,
        max: u64,
        unaligned: bool,
    },
    /// (size, percent) pairs; a total below 100 % leaves the rest to the last size.
    Split(Vec<(u64, u32)>),
}

impl BsPolicy {
    pub fn min(&self) -> u64 {
        match self {
            BsPolicy::Fixed(b) => *b,
            BsPolicy::Range { min, .. } => *min,
            BsPolicy::Split(v) => v.iter().map(|e| e.0).min().unwrap_or(4096),
        }
    }
    pub fn max(&self) -> u64 {
        match self {
            BsPolicy::Fixed(b) => *b,
            BsPolicy::Range { max, .. } => *max,
            BsPolicy::Split(v) => v.iter().map(|e| e.0).max().unwrap_or(4096),
        }
    }
}

/// How the next file is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FileSelect {
    RoundRobin,
    Random,
    Sequential,
    /// fio's non-uniform file service (zipf, pareto, normal): a file that has nothing
    /// more to do starts over instead of being done.
    Dist(crate::fileservice::FileDist),
}

/// The zones of a `zonemode=zbd` job as the generator consults them (offsets absolute in
/// the file). The generator is generic over it: [`NoZones`] compiles to the plain path.
pub trait Zoned {
    /// Whether zones are in use (a constant, so the plain path has no test for it).
    const ON: bool;
    /// The direction of the next I/O (a mixed job writes first while nothing is written).
    fn ddir(&mut self, file: usize, ddir: Ddir) -> Ddir;
    /// Where sequential I/O of `ddir` continues, given where the last one ended.
    fn continue_at(&mut self, file: usize, ddir: Ddir, pos: u64) -> u64;
    /// Where the drawn I/O really goes, or `None` when the file has nothing more for it.
    fn adjust(&mut self, file: usize, ddir: Ddir, offset: u64, len: u64) -> Option<(u64, u64)>;
    /// A random workload started the file over (its random map was full): fio resets the
    /// file, its zone accounting included.
    fn restarted(&mut self, file: usize);
    /// Where a sequential pass over the file ends (relative to its region, `len` its
    /// length): zoneskip counts it from the zone the job went to last, as fio does.
    fn seq_end(&mut self, _file: usize, len: u64) -> u64 {
        len
    }
}

/// No zones: every hook is the identity.
pub struct NoZones;

impl Zoned for NoZones {
    const ON: bool = false;
    #[inline(always)]
    fn ddir(&mut self, _: usize, ddir: Ddir) -> Ddir {
        ddir
    }
    #[inline(always)]
    fn continue_at(&mut self, _: usize, _: Ddir, pos: u64) -> u64 {
        pos
    }
    #[inline(always)]
    fn adjust(&mut self, _: usize, _: Ddir, offset: u64, len: u64) -> Option<(u64, u64)> {
        Some((offset, len))
    }
    #[inline(always)]
    fn restarted(&mut self, _: usize) {}
}

/// The random number generator for offsets (`random_generator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandGen {
    Tausworthe,
    Tausworthe64,
    Lfsr,
}

/// `zonemode=strided`: do `size` bytes in each zone of `range` bytes, then skip `skip`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strided {
    pub size: u64,
    pub range: u64,
    pub skip: u64,
}

/// The region of one file the job works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// First byte (the `offset` option, plus `offset_increment` for clones).
    pub start: u64,
    /// Length of the region in bytes.
    pub len: u64,
}

/// Everything that determines a job's I/O sequence.
#[derive(Clone, Debug)]
pub struct Spec {
    /// Which directions the job does (read, write, trim).
    pub dirs: [bool; 3],
    /// Random (true) or sequential offsets.
    pub random: bool,
    /// Read share in percent for read/write mixes.
    pub rwmixread: u32,
    /// `rw=...:N`.
    pub rw_nr: u64,
    /// `rw=read:-N` (sequential I/O backwards): step back N bytes from the end of each I/O.
    pub rw_back: u64,
    /// With `:N` on random I/O: repeat the same offset (identical) instead of continuing
    /// sequentially.
    pub identical: bool,
    pub bs: [BsPolicy; 3],
    /// `bs_is_seq_rand`: the read block-size setting applies to sequential I/O and the write
    /// setting to random I/O, whatever the direction.
    pub bs_by_pattern: bool,
    /// Random offsets of each direction are multiples of this (fio's `ba[ddir]`: blockalign,
    /// by default the direction's smallest block size).
    pub align: [u64; 3],
    /// Smallest block size over the job's directions (fio's rw_min_bs; sizes the LFSR).
    pub rw_min_bs: u64,
    pub random_map: bool,
    pub files: Vec<Region>,
    pub select: FileSelect,
    /// Switch file every this many I/Os.
    pub select_nr: u64,
    /// `openfiles` below the number of files (0: no limit). As in fio, a file is opened
    /// when the file service picks it and there is room, and stays open until it is done;
    /// a pick of a closed file without room passes it by (fio's EBUSY), so the service
    /// keeps to the open files.
    pub open_limit: usize,
    /// Wrap around at the end of a region (time_based, or io_size beyond size) instead of
    /// ending the file.
    pub wrap: bool,
    /// zonemode=zbd: a file the zones have nothing more for starts another pass (fio goes
    /// on while a given io_size or the time is not used up) instead of ending.
    pub zone_eof_pass: bool,
    /// zonemode=zbd, several files, each region its whole file, and a job that goes on
    /// ([`Self::zone_eof_pass`]): sequential I/O at the end of the last file ends it while
    /// the others start over on their own (fio's behaviour; set by the zones' plan).
    pub zbd_last_file_ends: bool,
    /// fio's per-stream seeds (see `rng::fio_seeds`).
    pub seeds: [u64; slot::COUNT],
    pub gen: RandGen,
    /// `random_generator=lfsr`: a block seed the LFSR cannot start from (its register bits
    /// all ones) is moved into the LFSR's period ([`Lfsr::usable_seed`]), so every seed
    /// covers every block. Off (fio 3.33): fio's refusal, "fio: failed initializing LFSR"
    /// and no I/O for that file ([`Generator::lfsrs_lost`]).
    pub lfsr_usable_seed: bool,
    /// fio 3.33's `--debug=random` lines: each uniform offset draw and each block found
    /// busy in the random map are handed to this (off: nothing is traced; the fast path
    /// is not taken while it is on).
    pub trace: Option<RandTrace>,
    /// The offset generator alone is tausworthe64, the other streams keep `gen`'s width:
    /// the newest fio's automatic switch for files beyond 32 bits ([`taus32_exceeded`]).
    pub off64: bool,
    /// Offset distribution per direction.
    pub dist: [Dist; 3],
    /// The seed of each file's zipf, pareto or normal offset generator (fio derives it
    /// from the file's name; see flexio-run's planner). A file without one uses the
    /// block-offset seed.
    pub dist_seeds: Vec<u32>,
    /// Share of random I/Os in a random workload, per direction (the rest is sequential).
    pub pct_random: [u32; 3],
    pub strided: Option<Strided>,
    /// `random_sequence_stride`: a `sequence` distribution moves on by its length after
    /// each cycle.
    pub seq_stride: bool,
    /// `sprandom`: write offsets of the (one) file come from the preconditioning schedule.
    pub sprandom: Option<crate::sprandom::SprSpec>,
    /// Each file's size as fio knows it (its real_file_size: what the layout makes it, or
    /// an existing file's larger size); empty or short: the region's end. Holed sequential
    /// I/O measures its end against it.
    pub file_sizes: Vec<u64>,
    /// Where each file's region starts once the job has laid the file out, where that
    /// differs from [`Region::start`] (a percentage `offset` of a file the job creates:
    /// fio takes it of size 0 first, of the laid-out size after). fio starts the loops
    /// after the first there, and bounds a drawn block size by it in the first as well.
    /// Empty: no file differs.
    pub start_later: Vec<u64>,
    /// randrepeat: each pass over the files (loops, io_size beyond size) seeds the random
    /// streams again, so it repeats the first pass's sequence (fio's clear_io_state).
    pub repeatable: bool,
    /// time_based: a file whose random map is full starts over without a new pass.
    pub time_based: bool,
}

/// One I/O to issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextIo {
    pub file: usize,
    pub ddir: Ddir,
    pub offset: u64,
    pub len: u64,
    /// The file started over (time_based, or io_size beyond its size) with this I/O: fio
    /// drops its page cache again at that point (`invalidate`).
    pub wrapped: bool,
    /// Files were done (or started over under non-uniform file service), or a pass ended,
    /// before this I/O: fio closes them (and ends the pass) there;
    /// [`Generator::take_closed`] and [`Generator::take_pass_end`] say which.
    pub closed: bool,
}

impl NextIo {
    /// No I/O: a pass ended ([`Generator::pause_at_passes`]); `closed` is set, so the
    /// worker takes the closes and the pass's end, then asks again.
    pub const PASS_END: NextIo = NextIo {
        file: 0,
        ddir: 0,
        offset: 0,
        len: 0,
        wrapped: false,
        closed: true,
    };

    /// No I/O: files were closed ([`Generator::pause_at_closes`]); `closed` is set, so the
    /// worker takes the closes, then asks again.
    pub const CLOSES: NextIo = NextIo {
        file: 0,
        ddir: 0,
        offset: 1,
        len: 0,
        wrapped: false,
        closed: true,
    };

    /// Whether this is no I/O ([`Self::PASS_END`] or [`Self::CLOSES`]: every I/O is at
    /// least a byte long).
    #[inline]
    pub fn is_pause(&self) -> bool {
        self.len == 0
    }

    /// Whether this is [`Self::PASS_END`].
    #[inline]
    pub fn is_pass_end(&self) -> bool {
        self.len == 0 && self.offset == 0
    }
}

/// What fio 3.33's `--debug=random` logs of the offset generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandEvent {
    /// A raw draw of the offset generator (`off rand N`).
    Draw(u64),
    /// Block `b` (relative to the file's region or zone) was already done
    /// (`get_next_rand_offset: offset b busy`).
    Busy(u64),
}

/// Receives [`RandEvent`]s (the run crate formats them as debug lines).
pub type RandTrace = fn(RandEvent);

/// The files (their indices) of a random job with more blocks than the 32-bit tausworthe
/// generator draws from without repeats (fio: the random space over the job's smallest
/// block size above 2^32 - 1). Jobs of zipf, pareto or normal offsets are not checked, as in
/// fio.
pub fn taus32_exceeded(spec: &Spec) -> Vec<usize> {
    let sampled = |d: &Dist| {
        matches!(
            d,
            Dist::Zipf { .. } | Dist::Pareto { .. } | Dist::Normal { .. }
        )
    };
    if !spec.random || spec.dist.iter().any(sampled) {
        return Vec::new();
    }
    spec.files
        .iter()
        .enumerate()
        .filter(|(_, r)| exceeds_taus32(r.len, spec.rw_min_bs))
        .map(|(i, _)| i)
        .collect()
}

/// Whether `len` bytes hold more blocks of `min_bs` than tausworthe32 covers (2^32 - 1).
pub fn exceeds_taus32(len: u64, min_bs: u64) -> bool {
    len / min_bs.max(1) > u32::MAX as u64
}

/// Offset generator state (one per job, as fio's `random_state`).
#[derive(Clone, Debug)]
enum OffRng {
    T32(Taus88),
    T64(Taus258),
}

impl OffRng {
    #[inline(always)]
    fn below(&mut self, n: u64) -> u64 {
        match self {
            OffRng::T32(r) => r.below(n),
            OffRng::T64(r) => r.below(n),
        }
    }
    /// A raw draw and the scale of the generator (2^32 or 2^64) as f64, and the maximum.
    #[inline]
    fn raw(&mut self) -> (u64, f64, u64) {
        match self {
            OffRng::T32(r) => (r.next_u32() as u64, 4294967296.0, u32::MAX as u64),
            OffRng::T64(r) => (r.next_u64(), 18446744073709551616.0, u64::MAX),
        }
    }
    /// [`OffRng::below`] that also hands back the raw draw.
    fn below_raw(&mut self, n: u64) -> (u64, u64) {
        match self {
            OffRng::T32(r) => {
                let v = r.next_u32();
                (v as u64, Taus88::scale(n, v))
            }
            OffRng::T64(r) => {
                let v = r.next_u64();
                (v, Taus258::scale(n, v))
            }
        }
    }
    #[inline]
    fn unit(&mut self) -> f64 {
        match self {
            OffRng::T32(r) => unit(r.next_u32()),
            OffRng::T64(r) => r.next_u64() as f64 / 18446744073709551616.0,
        }
    }
}

#[derive(Clone)]
struct FileState {
    region: Region,
    /// Next sequential position per direction (relative to the region start).
    pos: [u64; 3],
    map: Option<BlockMap>,
    /// The random map was wanted but could not be allocated.
    map_lost: bool,
    /// Boxed, like the samplers: a job of 100,000 files keeps one `FileState` each, and
    /// these are there only for `random_generator=lfsr` or a non-uniform distribution.
    lfsr: Option<Box<Lfsr>>,
    /// The LFSR was wanted but refused the seed (fio 3.33's rule).
    lfsr_lost: bool,
    samplers: [Option<Box<Sampler>>; 3],
    /// Blocks a random offset is drawn from, per direction (without strided zones).
    nblocks: [u64; 3],
    done: bool,
    /// Where each direction's last I/O started (`rw_sequencer=identical` repeats it).
    last_start: [u64; 3],
    /// Strided zones: start of the current zone (relative to the region).
    zone_start: u64,
    /// trimwrite / randtrimwrite: where the file's latest write and latest trim started
    /// (`u64::MAX` before the first; fio's `last_start`). The next I/O of the file is a trim
    /// when the two are equal (its latest trim was written), else a write.
    tw_start: [u64; 2],
    /// randtrimwrite: the file's block just trimmed (offset, length), which its next write
    /// rewrites (fio writes where the file's latest trim started; sequential trimwrite gets
    /// there by advancing both positions).
    trimmed: Option<(u64, u64)>,
    /// zonemode=zbd: I/Os of the file since it last started ([`Generator::zone_eof`]).
    zoned_ios: u64,
    /// A new pass started all files over ([`Generator::restart_pass`]): the file's next I/O
    /// reports it (its cache is dropped again, as when fio opens it for the pass).
    wrap_due: bool,
}

impl FileState {
    /// Back to the file's start: positions, random map, LFSR, the current `:N` run and
    /// trimwrite's state (what every kind of new pass over the file resets).
    fn rewind(&mut self) {
        self.pos = [0; 3];
        if let Some(m) = &mut self.map {
            m.clear();
        }
        if let Some(l) = &mut self.lfsr {
            l.reset();
        }
        self.last_start = [0; 3];
        self.tw_start = [u64::MAX; 2];
        self.trimmed = None;
    }
}

/// Stateful generator for one job thread. A clone goes on from the same point (a replay
/// of the I/O it hands out from there).
#[derive(Clone)]
pub struct Generator {
    spec: Spec,
    spr: Option<crate::sprandom::Sprandom>,
    files: Vec<FileState>,
    off_rng: OffRng,
    /// Block-size streams per direction (64-bit with random_generator=tausworthe64).
    bs_rng: [OffRng; 3],
    mix_rng: Taus88,
    file_rng: OffRng,
    /// Non-uniform file service: fio's generator of file numbers.
    file_dist: Option<crate::fileservice::FileSampler>,
    /// The direction whose sampler each direction draws from: fio keeps one zipf, pareto
    /// or normal generator per file, which reads and writes share when they are alike.
    sampler_of: [usize; 3],
    /// How many of fio's ranges (the job's smallest block size) make one block of each
    /// direction, for the zipf, pareto and normal generators (1 when not more).
    range_scale: [u64; 3],
    seq_rand: [Taus88; 3],
    /// random_distribution=zoned / zoned_abs: fio's zone stream and each direction's
    /// zones ([`zoned`]).
    zone_rng: Taus88,
    zoned: [Option<Box<zoned::ZoneTable>>; 3],
    cur_file: usize,
    file_ios: u64,
    files_done: usize,
    /// `rw=randread:N`: I/Os left before the next random one (fio's per-job ddir_seq_nr:
    /// every N-th I/O of the job is random, the others go on from where their file's last
    /// I/O of their direction ended, or start where it started with `identical`).
    seq_left: u64,
    /// A sequential I/O of a random job was tried and found no room ([`Self::next_io`]
    /// then tries another file): the I/O that takes its place is left out of the random
    /// map even where it is a random one (fio's request keeps its BUSY_OK flag through
    /// the retry).
    busy_ok: bool,
    /// Strided zones: bytes of the job's I/O since its last zone switch (fio counts them
    /// for the job, over all files and directions).
    zone_bytes: u64,
    /// Under [`Spec::open_limit`]: which files are open, and how many.
    is_open: Vec<bool>,
    nr_open: usize,
    /// Files whose close waits for their requests in flight (fio's FIO_FILE_closing, on an
    /// engine that queues: [`Self::close_deferred`]); the service does not pick them, and
    /// under `openfiles` they still count open. Empty until the first.
    closing: Vec<bool>,
    nr_closing: usize,
    /// A file wrapped around since the last I/O handed out.
    wrapped: bool,
    /// Files done (or started over under non-uniform file service) since the worker last
    /// took them ([`Self::take_closed`]), in that order.
    closed: Vec<u32>,
    /// Closes or a pass's end wait for the worker, or files owe their next I/O a
    /// `wrapped` ([`Self::take_events`]): the one flag the hot path reads for all three.
    events: bool,
    /// Files whose `wrap_due` is set.
    wraps_due: usize,
    /// A pass ended ([`Self::restart_pass`]) since the worker last asked
    /// ([`Self::take_pass_end`]).
    pass_ended: bool,
    /// [`Self::next_io`] stops at a pass's end ([`Self::pause_at_passes`]).
    pause_pass: bool,
    /// [`Self::pause_at_closes`].
    pause_close: bool,
    /// Where the last attempt that found no I/O had put its request (fio's request keeps
    /// that offset: a sync after it logs it), until the worker takes it (u64::MAX: none;
    /// one word, beside the fields the hot path reads).
    failed_off: u64,
    /// log2 of each direction's smallest block size, when it is a power of two.
    bs_shift: [Option<u32>; 3],
    /// Directions that can take [`Generator::fast_random`]: log2 of their block size.
    fast: [Option<u32>; 3],
    /// rwmix: the current direction, issues allowed before the next draw, issues so far.
    rwmix_ddir: Ddir,
    rwmix_issues: u64,
    issues: [u64; 3],
    /// `issues` in all when the current pass began ([`Self::restart_pass`]).
    pass_start_issues: u64,
    /// rw=trimwrite or randtrimwrite: [`Generator::attempt_trimwrite`].
    trimwrite: bool,
    /// rw=randtrimwrite (random, writes and trims): [`Generator::attempt_randtrimwrite`].
    randtrimwrite: bool,
}

impl Generator {
    /// Files whose random map could not be allocated (they run without one, drawing
    /// offsets that may repeat: fio's softrandommap; without it the job must not run).
    pub fn maps_lost(&self) -> impl Iterator<Item = usize> + '_ {
        self.files
            .iter()
            .enumerate()
            .filter(|(_, f)| f.map_lost)
            .map(|(i, _)| i)
    }

    /// Whether a file's LFSR refused its seed (`random_generator=lfsr` under fio 3.33's
    /// rule: fio prints "fio: failed initializing LFSR" and the file gets no I/O).
    pub fn lfsrs_lost(&self) -> bool {
        self.files.iter().any(|f| f.lfsr_lost)
    }

    pub fn new(spec: Spec) -> Self {
        let files = spec
            .files
            .iter()
            .enumerate()
            .map(|(i, r)| Self::file_state(&spec, i, *r))
            .collect::<Vec<_>>();
        let files_done = files.iter().filter(|f| f.done).count();
        let spr = spec.sprandom.map(|s| {
            let blocks = spec
                .files
                .first()
                .map(|f| Self::nblocks(&spec, f.len, 1))
                .unwrap_or(0);
            crate::sprandom::Sprandom::new(s, blocks)
        });
        let (off_rng, bs_rng, mix_rng, file_rng, seq_rand, file_dist) = Self::streams(&spec);
        Generator {
            sampler_of: [0, 1, 2].map(|d| Self::sampler_of(&spec, d)),
            range_scale: [0, 1, 2].map(|d| (spec.align[d] / Self::range_size(&spec)).max(1)),
            off_rng,
            bs_rng,
            mix_rng,
            file_rng,
            seq_rand,
            file_dist,
            zone_rng: Taus88::new(spec.seeds[slot::ZONE] as u32),
            zoned: [0, 1, 2].map(|d| {
                if spec.random {
                    zoned::ZoneTable::new(&spec.dist[d])
                } else {
                    None
                }
            }),
            cur_file: 0,
            // Random file service draws a file for the very first I/O too.
            file_ios: if matches!(spec.select, FileSelect::Random | FileSelect::Dist(_)) {
                u64::MAX
            } else {
                0
            },
            files_done,
            seq_left: 0,
            zone_bytes: 0,
            busy_ok: false,
            is_open: vec![
                false;
                if spec.open_limit > 0 {
                    spec.files.len()
                } else {
                    0
                }
            ],
            nr_open: 0,
            closing: Vec::new(),
            nr_closing: 0,
            wrapped: false,
            closed: Vec::new(),
            events: false,
            wraps_due: 0,
            pass_ended: false,
            pause_pass: false,
            pause_close: false,
            failed_off: u64::MAX,
            bs_shift: [0, 1, 2].map(|d| {
                let m = spec.bs[d].min();
                m.is_power_of_two().then(|| m.trailing_zeros())
            }),
            fast: [0, 1, 2].map(|d| match spec.bs[d] {
                BsPolicy::Fixed(b)
                    if spec.random
                        && spec.pct_random[d] >= 100
                        && spec.rw_nr <= 1
                        && spec.strided.is_none()
                        && spec.start_later.is_empty()
                        && spec.dist[d] == Dist::Uniform
                        && spec.gen != RandGen::Lfsr
                        && spec.trace.is_none()
                        && !spec.bs_by_pattern
                        && b.is_power_of_two()
                        && spec.align[d] == b =>
                {
                    Some(b.trailing_zeros())
                }
                _ => None,
            }),
            rwmix_ddir: 0,
            rwmix_issues: 0,
            issues: [0; 3],
            pass_start_issues: 0,
            spr,
            trimwrite: spec.dirs[1] && spec.dirs[2] && !spec.dirs[0],
            randtrimwrite: spec.random && spec.dirs[1] && spec.dirs[2],
            files,
            spec,
        }
    }

    /// The job's random streams, freshly seeded (fio's td_fill_rand_seeds).
    #[allow(clippy::type_complexity)]
    fn streams(
        spec: &Spec,
    ) -> (
        OffRng,
        [OffRng; 3],
        Taus88,
        OffRng,
        [Taus88; 3],
        Option<crate::fileservice::FileSampler>,
    ) {
        let seeds = spec.seeds;
        let block_seed = seeds[slot::BLOCK];
        let off_rng = match spec.gen {
            RandGen::Tausworthe64 => OffRng::T64(Taus258::new(block_seed)),
            _ if spec.off64 => OffRng::T64(Taus258::new(block_seed)),
            _ => OffRng::T32(Taus88::new(block_seed as u32)),
        };
        let bs_rng = [0, 1, 2].map(|d| {
            // trimwrite: trims draw the same sizes as the writes they precede.
            let d = if d == 2 && spec.dirs[1] && spec.dirs[2] {
                1
            } else {
                d
            };
            let s = seeds[slot::BS + d];
            match spec.gen {
                RandGen::Tausworthe64 => OffRng::T64(Taus258::new(s)),
                _ => OffRng::T32(Taus88::new(s as u32)),
            }
        });
        let mix_rng = Taus88::new(seeds[slot::MIX] as u32);
        let file_rng = match spec.gen {
            RandGen::Tausworthe64 => OffRng::T64(Taus258::new(seeds[slot::FILE])),
            _ => OffRng::T32(Taus88::new(seeds[slot::FILE] as u32)),
        };
        let seq_rand = [0, 1, 2].map(|_| Taus88::new(seeds[slot::SEQ_RAND] as u32));
        let file_dist = match spec.select {
            FileSelect::Dist(d) => Some(crate::fileservice::FileSampler::new(
                d,
                spec.files.len(),
                seeds[slot::FILE],
            )),
            _ => None,
        };
        (off_rng, bs_rng, mix_rng, file_rng, seq_rand, file_dist)
    }

    /// Seed the random streams again, as fio does at the start of each pass over the
    /// files of a job with repeatable random numbers (randrepeat): the pass repeats the
    /// first one's offsets.
    fn reseed(&mut self) {
        let (off_rng, bs_rng, mix_rng, file_rng, seq_rand, file_dist) = Self::streams(&self.spec);
        self.off_rng = off_rng;
        self.bs_rng = bs_rng;
        self.mix_rng = mix_rng;
        self.file_rng = file_rng;
        self.seq_rand = seq_rand;
        self.file_dist = file_dist;
        self.zone_rng = Taus88::new(self.spec.seeds[slot::ZONE] as u32);
    }

    /// fio's range size for the zipf, pareto and normal generators: the smaller of the read
    /// and write block sizes, whichever directions the job does.
    fn range_size(spec: &Spec) -> u64 {
        spec.bs[0].min().min(spec.bs[1].min()).max(1)
    }

    /// The first direction whose sampler `ddir` shares: one with the same zipf, pareto or
    /// normal distribution (fio keeps one such generator per file, whatever the block
    /// sizes), or the same zoned distribution over the same blocks.
    fn sampler_of(spec: &Spec, ddir: usize) -> usize {
        let fio_gen = spec.dist[ddir].is_fio_gen();
        (0..ddir)
            .find(|&e| {
                spec.dist[e] == spec.dist[ddir]
                    && (fio_gen
                        || (spec.align[e] == spec.align[ddir]
                            && spec.bs[e].min() == spec.bs[ddir].min()))
            })
            .unwrap_or(ddir)
    }

    /// Blocks a random offset is chosen from in `len` bytes (fio's last_block).
    fn nblocks(spec: &Spec, len: u64, ddir: Ddir) -> u64 {
        let align = spec.align[ddir].max(1);
        let min_bs = spec.bs[ddir].min();
        let extra = min_bs.saturating_sub(align);
        len.saturating_sub(extra) / align
    }

    fn file_state(spec: &Spec, i: usize, r: Region) -> FileState {
        // Strided zones: the random map and LFSR cover one zone's range.
        let space = spec.strided.map(|z| z.range.min(r.len)).unwrap_or(r.len);
        // fio sizes the random map in units of the smallest block size of any direction.
        let map_blocks = space / spec.rw_min_bs.max(1);
        let uniform = spec.dist.iter().all(|d| *d == Dist::Uniform);
        let lfsr_blocks = space / spec.rw_min_bs.max(1);
        let want_map = spec.random
            && spec.random_map
            && uniform
            && spec.gen != RandGen::Lfsr
            && map_blocks > 0;
        let map = want_map.then(|| BlockMap::try_new(map_blocks)).flatten();
        let want_lfsr = spec.random && spec.gen == RandGen::Lfsr && lfsr_blocks > 0;
        let lfsr = want_lfsr
            .then(|| {
                let seed = spec.seeds[slot::BLOCK];
                let seed = if spec.lfsr_usable_seed {
                    Lfsr::usable_seed(lfsr_blocks, seed)
                } else {
                    seed
                };
                Lfsr::new(lfsr_blocks, seed, 0)
            })
            .flatten()
            .map(Box::new);
        FileState {
            region: r,
            pos: [0; 3],
            map_lost: want_map && map.is_none(),
            map,
            lfsr_lost: want_lfsr && lfsr.is_none(),
            lfsr,
            samplers: [0, 1, 2].map(|d| {
                (spec.random
                    && Self::sampler_of(spec, d) == d
                    && !matches!(
                        spec.dist[d],
                        Dist::Uniform | Dist::Sequence(_) | Dist::Zoned(_) | Dist::ZonedAbs(_)
                    ))
                .then(|| {
                    // fio's generators draw over the whole region, strided zones or
                    // not (its zone moves the offset, not the range).
                    let nranges = r.len.div_ceil(Self::range_size(spec));
                    let seed = spec
                        .dist_seeds
                        .get(i)
                        .copied()
                        .unwrap_or(spec.seeds[slot::BLOCK] as u32);
                    Box::new(Sampler::new(
                        &spec.dist[d],
                        Self::nblocks(spec, space, d).max(1),
                        nranges,
                        seed,
                    ))
                })
            }),
            nblocks: [0, 1, 2].map(|d| Self::nblocks(spec, space, d)),
            done: r.len == 0,
            last_start: [0; 3],
            zone_start: 0,
            tw_start: [u64::MAX; 2],
            trimmed: None,
            zoned_ios: 0,
            wrap_due: false,
        }
    }

    /// Start a new loop: sequential positions back to the start, random maps cleared.
    pub fn reset(&mut self) {
        if let Some(s) = &mut self.spr {
            s.reset();
        }
        for (i, f) in self.files.iter_mut().enumerate() {
            f.rewind();
            f.done = f.region.len == 0;
            f.zone_start = 0;
            if let Some(s) = self.spec.start_later.get(i) {
                f.region.start = *s;
            }
        }
        self.zone_bytes = 0;
        self.files_done = self.files.iter().filter(|f| f.done).count();
        self.all_closed();
        // fio closed the files as the loop ended: the next I/O picks a file afresh, round
        // robin and random service moving on as at a switch, sequential service going on
        // with the file after the last one (as at a new pass, [`Self::restart_pass`]).
        let n = self.files.len();
        if n > 1 {
            self.file_ios = self.spec.select_nr.max(1);
            self.seq_moves_on();
        } else {
            self.cur_file = 0;
            self.file_ios = 0;
        }
        self.closed.clear();
        for f in &mut self.files {
            f.wrap_due = false;
        }
        self.wraps_due = 0;
        self.events = false;
        self.pass_ended = false;
        self.rwmix_issues = 0;
        if self.spec.repeatable {
            self.reseed();
        }
    }

    /// Choose the direction of the next I/O, in file `fi` (the file [`Self::pick_file`] chose:
    /// as in fio, the file comes first).
    #[inline]
    pub fn next_ddir(&mut self, fi: usize) -> Ddir {
        let d = self.spec.dirs;
        match (d[0], d[1], d[2]) {
            (true, true, _) => {
                // fio's get_rw_ddir: a direction is drawn only once the current one has had
                // its share of issues since the last switch; a switch sets that share to
                // (issues of the old direction) * (percentage of the new one) / 100.
                let cur = self.rwmix_ddir;
                if self.issues[cur] >= self.rwmix_issues {
                    let new = if self.mix_rng.between(1, 100) <= self.spec.rwmixread as u64 {
                        0
                    } else {
                        1
                    };
                    if new != cur {
                        let pct = if new == 0 {
                            self.spec.rwmixread as u64
                        } else {
                            100 - self.spec.rwmixread as u64
                        };
                        self.rwmix_issues = self.issues[cur] * pct / 100;
                    }
                    self.rwmix_ddir = new;
                }
                self.rwmix_ddir
            }
            (true, false, _) => 0,
            (false, true, true) => {
                // trimwrite: each block is trimmed, then written, per file as in fio (files
                // served in turn each get their trim first). Sequential: a trim when the
                // file's latest write started where its latest trim did, else a write (a
                // trim larger than the writes is followed by several). Random: the write of
                // the block the file just trimmed, else a trim (a trim that draws the block
                // just written is still followed by its write, as in fio).
                let f = &self.files[fi];
                let trim = if self.randtrimwrite {
                    f.trimmed.is_none()
                } else {
                    f.tw_start[0] == f.tw_start[1]
                };
                if trim {
                    2
                } else {
                    1
                }
            }
            (false, true, false) => 1,
            _ => 2,
        }
    }

    /// The next I/O of direction `ddir`, or `None` when every file is done.
    pub fn next(&mut self, ddir: Ddir) -> Option<NextIo> {
        for _ in 0..(self.files.len() * 2 + 2) {
            let fi = self.pick_file()?;
            if let Some(io) = self.attempt(fi, ddir) {
                return Some(io);
            }
        }
        None
    }

    /// The next I/O, its direction included, or `None` when every file is done. As in fio,
    /// the file is chosen first, then the direction; when the file cannot produce an I/O it
    /// is done, and the next file gets a freshly drawn direction.
    #[inline]
    pub fn next_io(&mut self) -> Option<NextIo> {
        for _ in 0..(self.files.len() * 2 + 2) {
            let fi = self.pick_file()?;
            let ddir = self.next_ddir(fi);
            if let Some(io) = self.attempt(fi, ddir) {
                return Some(io);
            }
            if self.pause_pass && self.pass_ended {
                return Some(NextIo::PASS_END);
            }
            if self.pause_close && !self.closed.is_empty() {
                return Some(NextIo::CLOSES);
            }
        }
        None
    }

    /// The offset the last attempt that found no I/O had put its request at, once
    /// (an offset at or past the region's length stays relative to it, as in fio's
    /// get_next_offset).
    pub fn take_failed_offset(&mut self) -> Option<u64> {
        Some(std::mem::replace(&mut self.failed_off, u64::MAX)).filter(|o| *o != u64::MAX)
    }

    /// An attempt in file `fi` put its request at `off` (relative to the region) and found
    /// it does not fit: as in fio's get_next_offset, an offset at or past the region's
    /// length stays relative to it (the check comes before the file's offset is added),
    /// one within it is the file's.
    #[cold]
    pub(super) fn failed_at(&mut self, fi: usize, off: u64) {
        let r = self.files[fi].region;
        self.failed_off = if off >= r.len { off } else { r.start + off };
    }

    /// Let [`Self::next_io`] hand out [`NextIo::PASS_END`] where a pass ends, before the
    /// next pass's first I/O is drawn: the worker then asks for what the next pass starts
    /// with as fio's next loop does (fio 3.33's sync rule finds a sync due there, which
    /// goes to the next pass's first file).
    pub fn pause_at_passes(&mut self, on: bool) {
        self.pause_pass = on;
    }

    /// Let [`Self::next_io`] hand out [`NextIo::CLOSES`] where an attempt closed files,
    /// before the next file is picked: the worker closes them, or marks them closing where
    /// they have requests in flight ([`Self::close_deferred`]), so the pick passes over
    /// those as fio's does.
    pub fn pause_at_closes(&mut self, on: bool) {
        self.pause_close = on;
    }

    /// [`Self::next_io`] for a `zonemode=zbd` job: the zones adjust the direction, where
    /// sequential I/O continues and where each I/O goes.
    pub fn next_io_zoned<Z: Zoned>(&mut self, z: &mut Z) -> Option<NextIo> {
        for _ in 0..(self.files.len() * 2 + 2) {
            let fi = self.pick_file()?;
            let ddir = self.next_ddir(fi);
            let ddir = z.ddir(fi, ddir);
            if let Some(io) = self.attempt_zoned(fi, ddir, z) {
                return Some(io);
            }
        }
        None
    }

    /// [`Self::attempt`] with zones.
    pub fn attempt_zoned<Z: Zoned>(&mut self, fi: usize, ddir: Ddir, z: &mut Z) -> Option<NextIo> {
        // fio's setup_zbd_zone_mode: where a sequential writer continues.
        let f = &mut self.files[fi];
        let abs = f.region.start.wrapping_add(f.pos[ddir]);
        let at = z.continue_at(fi, ddir, abs);
        f.pos[ddir] = at.wrapping_sub(f.region.start);
        if self.randtrimwrite && ddir == 1 {
            // The write of the block just trimmed (the trim reset its zone): where the
            // zones put it. One the zones moved elsewhere (the open-zone limit) is
            // followed by another write of the trimmed block, as in fio.
            if let Some((trim_at, trim_len)) = self.files[fi].trimmed.take() {
                let (offset, len) = z.adjust(fi, 1, trim_at, trim_len)?;
                let f = &mut self.files[fi];
                if offset != trim_at {
                    f.trimmed = Some((trim_at, trim_len));
                }
                let io = self.write_trimmed(fi, offset, len);
                self.files[fi].zoned_ios += 1;
                return Some(io);
            }
        }
        let io = self.attempt_with(fi, ddir, z)?;
        if self.randtrimwrite && io.ddir == 2 {
            self.files[fi].trimmed = Some((io.offset, io.len));
        }
        if self.trimwrite {
            self.trimwrite_started(&io);
        }
        self.files[fi].zoned_ios += 1;
        Some(io)
    }

    /// The random offset generator's state (fio's `random_state`, which the verify state
    /// file records).
    pub fn offset_state(&self) -> crate::rng::TausState {
        match &self.off_rng {
            OffRng::T32(r) => crate::rng::TausState::T32(r.state()),
            OffRng::T64(r) => crate::rng::TausState::T64(r.state()),
        }
    }

    /// The number of files.
    pub fn nfiles(&self) -> usize {
        self.files.len()
    }

    /// A rate limit moved a mixed job to the other direction (fio's rate_ddir): the mix
    /// continues from there.
    pub fn set_mix_ddir(&mut self, ddir: Ddir) {
        if self.spec.dirs[0] && self.spec.dirs[1] && ddir < 2 {
            self.rwmix_ddir = ddir;
        }
    }

    /// An I/O of direction `ddir` in file `fi`; `None` if the file cannot produce one (it
    /// is then done, or wrapped).
    #[inline]
    pub fn attempt(&mut self, fi: usize, ddir: Ddir) -> Option<NextIo> {
        if self.trimwrite {
            return self.attempt_trimwrite(fi, ddir);
        }
        if let Some(sh) = self.fast[ddir] {
            if let Some(io) = self.fast_random(fi, ddir, sh) {
                return Some(io);
            }
        }
        self.attempt_with(fi, ddir, &mut NoZones)
    }

    /// The common random case in few instructions: uniform offsets from tausworthe, one
    /// fixed power-of-two block size aligned to itself, no zones or runs. Falls back to the
    /// general path (before drawing anything) when the map needs attention (full: wrap or
    /// done). Draws exactly what the general path would.
    #[inline]
    fn fast_random(&mut self, fi: usize, ddir: Ddir, sh: u32) -> Option<NextIo> {
        let f = &mut self.files[fi];
        let nb = f.nblocks[ddir];
        if nb == 0 {
            return None;
        }
        if let Some(map) = &f.map {
            if map.full() || map.len() != nb {
                return None;
            }
        }
        let mut b = self.off_rng.below(nb);
        if let Some(map) = &mut f.map {
            b = map.take(b)?;
        }
        let off = b << sh;
        let len = 1u64 << sh;
        f.pos[ddir] = off + len;
        let start = f.region.start;
        let (wrapped, closed) = self.take_events(fi);
        self.issues[ddir] += 1;
        Some(NextIo {
            file: fi,
            ddir,
            offset: start + off,
            len,
            wrapped,
            closed,
        })
    }

    /// randtrimwrite: the write of the block just trimmed, at `offset` (`len` bytes).
    fn write_trimmed(&mut self, fi: usize, offset: u64, len: u64) -> NextIo {
        let f = &mut self.files[fi];
        f.pos[1] = (offset + len).wrapping_sub(f.region.start);
        self.issues[1] += 1;
        let (_, closed) = self.take_events(fi);
        let io = NextIo {
            file: fi,
            ddir: 1,
            offset,
            len,
            wrapped: false,
            closed,
        };
        self.trimwrite_started(&io);
        io
    }

    /// trimwrite / randtrimwrite: sequential trims and writes each advance their own
    /// position; with randtrimwrite a trim takes a random block and the write after it
    /// rewrites that block. Either way the I/O's start is kept for [`Self::next_ddir`]. Kept
    /// out of line, so the common path keeps [`Self::attempt_with`] inlined.
    #[inline(never)]
    fn attempt_trimwrite(&mut self, fi: usize, ddir: Ddir) -> Option<NextIo> {
        if self.randtrimwrite && ddir == 1 {
            let f = &mut self.files[fi];
            if let Some((offset, len)) = f.trimmed.take() {
                return Some(self.write_trimmed(fi, offset, len));
            }
        }
        let io = self.attempt_with(fi, ddir, &mut NoZones)?;
        if self.randtrimwrite && io.ddir == 2 {
            self.files[fi].trimmed = Some((io.offset, io.len));
        }
        self.trimwrite_started(&io);
        Some(io)
    }

    /// trimwrite: a write or trim of `io.file` starts at `io.offset`.
    #[inline]
    fn trimwrite_started(&mut self, io: &NextIo) {
        if io.ddir >= 1 {
            self.files[io.file].tw_start[io.ddir - 1] = io.offset;
        }
    }

    #[inline(always)]
    fn attempt_with<Z: Zoned>(&mut self, fi: usize, ddir: Ddir, z: &mut Z) -> Option<NextIo> {
        if self.spec.strided.is_some() {
            self.strided_setup(fi, ddir);
        }
        {
            let got = if self.spec.random {
                // rw=randread:N: every N-th I/O of the job is a random one (fio's
                // ddir_seq_nr, counted over all files and directions); the others go on
                // from their file's last I/O of their direction.
                let hit = self.spec.rw_nr <= 1 || {
                    if self.seq_left > 0 {
                        self.seq_left -= 1;
                        false
                    } else {
                        self.seq_left = self.spec.rw_nr - 1;
                        true
                    }
                };
                if hit
                    && (self.spec.pct_random[ddir] >= 100
                        || self.seq_rand[ddir].between(1, 100) <= self.spec.pct_random[ddir] as u64)
                {
                    self.random_io(fi, ddir, false, z)
                } else if !hit && self.spec.identical {
                    self.busy_ok = true;
                    self.repeat_last(fi, ddir, z)
                } else {
                    self.busy_ok = true;
                    self.next_seq_in_random(fi, ddir, z)
                }
            } else {
                self.next_seq(fi, ddir, z)
            };
            if let Some((off, l)) = got {
                self.busy_ok = false;
                let f = &mut self.files[fi];
                if self.spec.rw_nr > 1 {
                    f.last_start[ddir] = off;
                }
                if self.spec.strided.is_some() {
                    self.zone_bytes += l;
                }
                let start = f.region.start;
                let (wrapped, closed) = self.take_events(fi);
                self.issues[ddir] += 1;
                return Some(NextIo {
                    file: fi,
                    ddir,
                    offset: start + off,
                    len: l,
                    wrapped,
                    closed,
                });
            }
        }
        None
    }

    /// Strided zones: the zone to work in now, as (start, random range) relative to the
    /// region; without zones the whole region.
    fn zone(&self, fi: usize) -> (u64, u64) {
        match self.spec.strided {
            Some(z) => (self.files[fi].zone_start, z.range),
            None => (0, self.files[fi].region.len),
        }
    }
}

#[cfg(test)]
mod tests;
