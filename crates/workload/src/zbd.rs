//! `zonemode=zbd`: the zones of one file (or zoned block device) and the decisions fio
//! takes with them, pure (no system calls: a reset of a real device's zone is handed back
//! to the caller as an action).
//!
//! What this reproduces (fio 3.33's behaviour, observed with `write_iolog`):
//!
//! * Every zone has a write pointer. A regular file is cut into `zonesize` zones, all
//!   empty when the run starts (fio's emulation); a zoned device reports its own zones.
//! * Writes go to the write pointer of the zone their offset falls in; a zone that cannot
//!   take the smallest write block any more is reset first (counted as a zone reset).
//!   With `zone_reset_threshold`/`zone_reset_frequency`, once the data in the job's range
//!   reaches the threshold, every `1/frequency`-th write resets its zone.
//! * With `max_open_zones` (and `job_max_open_zones`), only that many zones are written at
//!   a time: a write to another zone is moved to one of the open zones (chosen from the
//!   drawn offset), and a full zone is closed when the write that fills it completes.
//! * Reads stay below the write pointer (moved into the zone's written part, or to the
//!   next zone with data) unless `read_beyond_wp`.
//! * A mixed read/write job writes first while nothing is written yet.
//! * With `verify`, a writing job resets every zone of its range that holds data when a
//!   loop begins (so that no reset in the middle of the writes loses data the read-back
//!   expects), and a full zone is never opened for writing.
//! * With `zoneskip`, a sequential job moves on after a zone's worth of I/O (or at the
//!   zone's end, or, reading, at its write pointer): its next zone is `zonesize + zoneskip`
//!   after the start of the previous one, from the start again past the end.
//!
//! fio keeps the open zones in a fixed array and picks from it by index, stale entries
//! included; [`ZoneSet`] keeps the same array so the picks are the same.

/// fio's limit on the open zones it tracks.
pub const MAX_OPEN_ZONES: usize = 4096;

/// A zone's condition as a zoned device reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    NotWp,
    Empty,
    ImpOpen,
    ExpOpen,
    Closed,
    ReadOnly,
    Full,
    Offline,
}

/// One zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zone {
    pub start: u64,
    pub capacity: u64,
    pub wp: u64,
    /// Sequential-write zone (conventional zones have none).
    pub has_wp: bool,
    pub cond: Cond,
    open: bool,
    reset_zone: bool,
}

impl Zone {
    /// A zone as a device reports it.
    pub fn new(start: u64, capacity: u64, wp: u64, has_wp: bool, cond: Cond) -> Zone {
        Zone {
            start,
            capacity,
            wp,
            has_wp,
            cond,
            open: false,
            reset_zone: false,
        }
    }
    fn cap_end(&self) -> u64 {
        self.start + self.capacity
    }
}

/// The zoned model of the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// A regular file (or a device that is not zoned): zones are emulated.
    Emulated,
    HostAware,
    HostManaged,
}

/// The zones of one file, shared by every job thread that uses the file.
#[derive(Clone, Debug)]
pub struct ZoneSet {
    pub model: Model,
    pub zone_size: u64,
    /// `nr` zones and a sentinel whose start is the end of the last one.
    zones: Vec<Zone>,
    nr: u32,
    /// The limit on open zones (0: none, and then nothing is tracked).
    pub max_open: u32,
    /// fio's open-zone array: the first `num_open` entries are open, the rest are stale.
    open: Vec<u32>,
    num_open: u32,
    /// Bytes written below the write pointers, all zones / write-pointer zones.
    swd: u64,
    wp_swd: u64,
    /// Writes until the next threshold reset.
    write_cnt: u32,
    /// The open-zone limit was set (by the first job that uses the file).
    limit_set: bool,
    /// Tells this table's zones apart in [`JobZones::pending`].
    id: u64,
}

// A pointer-sized counter: 32-bit targets without 64-bit atomics (mipsel, powerpc) build it.
static NEXT_SET_ID: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);

/// Why [`ZoneSet::emulated`] refuses a file (fio's messages, after the file name).
#[derive(Clone, Debug, PartialEq)]
pub enum SetupError {
    NoZoneSize,
    TooSmallZone,
    CapacityTooLarge { cap: u64, size: u64 },
    FileTooSmall { file: u64, zone: u64 },
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::NoZoneSize => write!(
                f,
                "Specifying the zone size is mandatory for regular file/block device with --zonemode=zbd"
            ),
            SetupError::TooSmallZone => {
                write!(f, "zone size must be at least 512 bytes for --zonemode=zbd")
            }
            SetupError::CapacityTooLarge { cap, size } => write!(
                f,
                "job parameter zonecapacity {cap} is larger than zone size {size}"
            ),
            SetupError::FileTooSmall { file, zone } => write!(
                f,
                "file/device size {file} is smaller than zone size {zone}"
            ),
        }
    }
}

/// What one job thread brings to the zones of its files.
#[derive(Clone, Copy, Debug, Default)]
pub struct JobParams {
    pub verify: bool,
    pub read_beyond_wp: bool,
    /// zone_reset_threshold and zone_reset_frequency (0: no threshold resets).
    pub reset_threshold: f64,
    pub reset_frequency: f64,
    pub job_max_open: u32,
    /// Smallest block size per direction.
    pub min_bs: [u64; 3],
    /// Random offsets (fio's td_random).
    pub random: bool,
    /// Reads and writes (fio's td_rw).
    pub mixed: bool,
    /// The job writes (fio's td_write).
    pub writes: bool,
    /// zoneskip: bytes skipped after each zone by a sequential job (0: none).
    pub zone_skip: u64,
}

/// A job thread's view of one file: the part it works on, in whole zones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub offset: u64,
    pub io_size: u64,
    pub min_zone: u32,
    pub max_zone: u32,
}

/// A job thread's own zone state (over all its files, as fio keeps it per thread).
#[derive(Clone, Debug, Default)]
pub struct JobZones {
    pub params: JobParams,
    /// Zones this thread opened.
    pub num_open: u32,
    /// Zone resets this thread did.
    pub resets: u64,
    /// zoneskip: bytes drawn since the job last moved to another zone (over all its files,
    /// as fio counts them per thread).
    pub zone_bytes: u64,
    /// Writes in flight that fill their zone: (table, zone, offset). Their completion closes the
    /// zone; where fio waits for the requests in flight, the closes happen then.
    pending: Vec<(u64, u32, u64)>,
}

impl JobZones {
    pub fn new(params: JobParams) -> JobZones {
        JobZones {
            params,
            ..Default::default()
        }
    }
}

/// What the caller must do before the I/O a decision was taken for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Actions {
    /// Wait for the requests in flight first (fio quiesces before a reset, and before
    /// looking for a new zone when the open-zone limit is reached).
    pub quiesce: bool,
    /// Reset this zone of a real device (start, length) after quiescing.
    pub reset: Option<(u64, u64)>,
}

/// The outcome of [`ZoneSet::adjust`].
#[derive(Clone, Debug, PartialEq)]
pub enum Adjust {
    /// The I/O, possibly moved and shortened.
    Go {
        offset: u64,
        len: u64,
        actions: Actions,
    },
    /// The file has nothing more for this I/O (fio's io_u_eof).
    Eof { actions: Actions },
    /// The job fails: errno, fio's function text, and a line fio logs (if any).
    Fail {
        errno: i32,
        func: &'static str,
        log: Option<String>,
        actions: Actions,
    },
}

const EINVAL: i32 = 22;
const EIO: i32 = 5;

impl ZoneSet {
    /// fio's emulation on a regular file of `file_size` bytes: zones of `zone_size`, all
    /// empty, each of `capacity` (0: the zone size).
    pub fn emulated(file_size: u64, zone_size: u64, capacity: u64) -> Result<ZoneSet, SetupError> {
        if zone_size == 0 {
            return Err(SetupError::NoZoneSize);
        }
        if zone_size < 512 {
            return Err(SetupError::TooSmallZone);
        }
        let cap = if capacity == 0 { zone_size } else { capacity };
        if cap > zone_size {
            return Err(SetupError::CapacityTooLarge {
                cap: capacity,
                size: zone_size,
            });
        }
        if file_size < zone_size {
            return Err(SetupError::FileTooSmall {
                file: file_size,
                zone: zone_size,
            });
        }
        let nr = file_size.div_ceil(zone_size);
        let mut zones: Vec<Zone> = (0..nr)
            .map(|i| Zone::new(i * zone_size, cap, i * zone_size, true, Cond::Empty))
            .collect();
        zones.push(Zone::new(
            nr * zone_size,
            0,
            nr * zone_size,
            false,
            Cond::NotWp,
        ));
        Ok(Self::with_zones(Model::Emulated, zone_size, zones))
    }

    /// The zones a device reported (the last one's end as the sentinel is added here).
    pub fn reported(model: Model, zone_size: u64, mut zones: Vec<Zone>) -> ZoneSet {
        let end = zones.last().map_or(0, |z| z.start + zone_size);
        zones.push(Zone::new(end, 0, end, false, Cond::NotWp));
        for z in &mut zones {
            if matches!(z.cond, Cond::NotWp | Cond::Full) {
                z.wp = z.start + z.capacity;
            }
        }
        Self::with_zones(model, zone_size, zones)
    }

    fn with_zones(model: Model, zone_size: u64, zones: Vec<Zone>) -> ZoneSet {
        let nr = (zones.len() - 1) as u32;
        ZoneSet {
            model,
            zone_size,
            zones,
            nr,
            max_open: 0,
            open: vec![0; MAX_OPEN_ZONES],
            num_open: 0,
            swd: 0,
            wp_swd: 0,
            write_cnt: u32::MAX,
            limit_set: false,
            id: NEXT_SET_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed) as u64,
        }
    }

    pub fn nr_zones(&self) -> u32 {
        self.nr
    }

    pub fn zone(&self, i: u32) -> &Zone {
        &self.zones[i as usize]
    }

    /// The zone `offset` falls in (the sentinel for offsets past the last zone).
    pub fn zone_idx(&self, offset: u64) -> u32 {
        ((offset / self.zone_size).min(self.nr as u64)) as u32
    }

    /// fio's zbd_verify_sizes for one job's region `[offset, offset + io_size)`: a job that
    /// is not a sequential read starts at a zone start and ends at a zone end (rounded,
    /// with fio's messages). `Err` when nothing of a zone is left.
    pub fn fit_range(
        &self,
        mut offset: u64,
        mut io_size: u64,
        seq_read: bool,
        notes: &mut Vec<String>,
    ) -> Result<Range, String> {
        if io_size > 0 && !seq_read {
            let z = &self.zones[self.zone_idx(offset) as usize];
            if offset != z.start {
                let new_offset = self.zones[self.zone_idx(offset) as usize + 1].start;
                if new_offset >= offset + io_size {
                    notes.push(format!("rounded up offset from {offset} to {new_offset}"));
                    return Err("io_size must be at least one zone".into());
                }
                notes.push(format!("rounded up offset from {offset} to {new_offset}"));
                io_size -= new_offset - offset;
                offset = new_offset;
            }
            let new_end = self.zones[self.zone_idx(offset + io_size) as usize].start;
            if offset + io_size != new_end {
                if new_end <= offset {
                    return Err("io_size must be at least one zone".into());
                }
                notes.push(format!(
                    "rounded down io_size from {io_size} to {}",
                    new_end - offset
                ));
                io_size = new_end - offset;
            }
        }
        Ok(Range {
            offset,
            io_size,
            min_zone: self.zone_idx(offset),
            max_zone: self.zone_idx(offset + io_size),
        })
    }

    /// Set the limit on open zones (fio's zbd_set_max_open_zones for files and devices
    /// without a limit of their own).
    pub fn set_max_open(&mut self, n: u32) {
        self.max_open = n;
        self.limit_set = true;
    }

    /// Whether a job has set the open-zone limit.
    pub fn limit_set(&self) -> bool {
        self.limit_set
    }

    /// fio's zbd_file_reset, when a job opens the file (each loop): the data below the
    /// write pointers of the job's range is counted again and the threshold countdown
    /// starts over.
    pub fn file_reset(&mut self, p: &JobParams, r: &Range) {
        if !p.writes {
            return;
        }
        let (mut swd, mut wp_swd) = (0, 0);
        for z in &self.zones[r.min_zone as usize..r.max_zone as usize] {
            let d = z.wp - z.start;
            if z.has_wp {
                wp_swd += d;
            }
            swd += d;
        }
        self.swd = swd;
        self.wp_swd = wp_swd;
        self.reset_write_cnt(p);
    }

    fn reset_write_cnt(&mut self, p: &JobParams) {
        self.write_cnt = if p.reset_frequency > 0.0 {
            (1.0 / p.reset_frequency).min(u32::MAX as f64) as u32
        } else {
            u32::MAX
        };
    }

    /// Count down to the next threshold reset; true when it is due.
    fn dec_write_cnt(&mut self, p: &JobParams) -> bool {
        let mut left = 0;
        if self.write_cnt > 0 {
            self.write_cnt -= 1;
            left = self.write_cnt;
        }
        if left == 0 {
            self.reset_write_cnt(p);
        }
        left == 0
    }

    /// Whether the job writes to zones with a write pointer in `r` and has data there to
    /// read: fio turns a mixed job's first reads into writes until something is written.
    pub fn adjust_ddir(&self, p: &JobParams, ddir: usize) -> usize {
        if ddir != 0 || !p.mixed || self.swd > 0 || p.read_beyond_wp {
            ddir
        } else {
            1
        }
    }

    /// fio's setup_zbd_zone_mode for zones smaller in capacity than in size: a sequential
    /// writer at a zone's capacity end goes on at the zone's end. Returns the position to
    /// continue from (`last_pos`, absolute).
    pub fn skip_capacity_gap(&self, p: &JobParams, ddir: usize, last_pos: u64) -> u64 {
        if p.random || ddir != 1 {
            return last_pos;
        }
        let i = self.zone_idx(last_pos) as usize;
        if i >= self.nr as usize {
            // Past the last zone: the job's end, not a gap.
            return last_pos;
        }
        let z = &self.zones[i];
        if z.capacity < self.zone_size && last_pos >= z.cap_end() {
            self.zones[i + 1].start
        } else {
            last_pos
        }
    }

    fn full(&self, i: usize, required: u64) -> bool {
        let z = &self.zones[i];
        z.has_wp && z.wp + required > z.cap_end()
    }

    fn is_open(&self, zone: u32) -> bool {
        self.open[..self.num_open as usize].contains(&zone)
    }

    /// fio's zbd_open_zone: whether zone `i` may be written (opened now if need be).
    fn open_zone(&mut self, job: &mut JobZones, i: u32) -> bool {
        let p = job.params;
        let min_bs = p.min_bs[1];
        let z = self.zones[i as usize];
        if z.cond == Cond::Offline {
            return false;
        }
        if p.verify && self.full(i as usize, min_bs) {
            return false;
        }
        if self.max_open == 0 {
            return true;
        }
        if self.is_open(i) {
            // Open, and about to be full by writes in flight: treated as full.
            return z.wp < z.cap_end();
        }
        if p.job_max_open > 0 && job.num_open >= p.job_max_open {
            return false;
        }
        if self.num_open >= self.max_open {
            return false;
        }
        self.open[self.num_open as usize] = i;
        self.num_open += 1;
        job.num_open += 1;
        self.zones[i as usize].open = true;
        true
    }

    /// fio's zbd_close_zone.
    fn close_zone(&mut self, job: &mut JobZones, i: u32) {
        let n = self.num_open as usize;
        let Some(k) = self.open[..n].iter().position(|z| *z == i) else {
            return;
        };
        // memmove of everything after it, stale entries included.
        self.open.copy_within(k + 1.., k);
        self.num_open -= 1;
        job.num_open = job.num_open.saturating_sub(1);
        self.zones[i as usize].open = false;
    }

    /// The open zone the drawn offset points at (fio's pick_random_zone_idx).
    fn pick(&self, r: &Range, offset: u64) -> usize {
        if r.io_size == 0 {
            return 0;
        }
        ((offset - r.offset) as u128 * self.num_open as u128 / r.io_size as u128) as usize
    }

    /// fio's zbd_convert_to_open_zone: the zone a write that may not go to its own zone
    /// goes to instead (its start is the new offset); `None` when there is none.
    fn convert_to_open(
        &mut self,
        job: &mut JobZones,
        r: &Range,
        offset: u64,
        acts: &mut Actions,
    ) -> Option<u32> {
        let p = job.params;
        let min_bs = p.min_bs[1];
        let limited = self.max_open > 0 || p.job_max_open > 0;
        let mut zi: u32 = if limited {
            let k = self.pick(r, offset).min(MAX_OPEN_ZONES - 1);
            self.open[k]
        } else {
            self.zone_idx(offset)
        };
        zi = zi.clamp(r.min_zone, r.max_zone.saturating_sub(1));
        let mut examine = false;
        loop {
            let z = self.zones[zi as usize];
            if z.has_wp {
                if z.cond != Cond::Offline && !limited {
                    examine = true;
                    break;
                }
                if self.num_open == 0 {
                    break;
                }
            }
            // A candidate among the open zones of the job's range, from the pick on.
            let n = self.num_open as usize;
            let start = self.pick(r, offset);
            let mut found = None;
            let mut k = start;
            for _ in 0..n {
                if k >= n {
                    k = 0;
                }
                let cand = self.open[k];
                if r.min_zone <= cand && cand < r.max_zone {
                    found = Some(cand);
                    break;
                }
                k += 1;
            }
            let cand = found?;
            if cand == zi {
                examine = true;
                break;
            }
            zi = cand;
        }
        if examine {
            let z = &self.zones[zi as usize];
            if z.wp + min_bs <= z.cap_end() {
                return Some(zi);
            }
        }
        // Open another zone.
        let wait_close = self.num_open == r.max_zone - r.min_zone
            || (self.max_open > 0 && self.num_open == self.max_open)
            || (p.job_max_open > 0 && job.num_open == p.job_max_open);
        if wait_close {
            acts.quiesce = true;
            self.quiesce(job);
        }
        let tries = r.io_size / self.zone_size;
        for _ in 0..tries {
            zi += 1;
            if zi >= r.max_zone || self.zones[zi as usize].start - r.offset >= r.io_size {
                zi = r.min_zone;
            }
            let z = self.zones[zi as usize];
            if !z.has_wp || z.open {
                continue;
            }
            if self.open_zone(job, zi) {
                return Some(zi);
            }
        }
        // Or an open zone the write still fits in.
        for k in 0..self.num_open as usize {
            let cand = self.open[k];
            if cand < r.min_zone || cand >= r.max_zone {
                continue;
            }
            let z = &self.zones[cand as usize];
            if z.wp + min_bs <= z.cap_end() {
                return Some(cand);
            }
        }
        None
    }

    /// fio's zbd_find_zone: a zone after `zb` (and, for random I/O, before it, nearest
    /// first) with at least `min_bytes` written.
    fn find_zone(&self, p: &JobParams, r: &Range, zb: u32, min_bytes: u64) -> Option<u32> {
        let mut z1 = zb as i64 + 1;
        let mut z2 = zb as i64 - 1;
        let zl = r.max_zone as i64;
        let zf = r.min_zone as i64;
        while z1 < zl || z2 >= zf {
            if z1 < zl && self.zones[z1 as usize].cond != Cond::Offline {
                let z = &self.zones[z1 as usize];
                if z.start + min_bytes <= z.wp {
                    return Some(z1 as u32);
                }
            } else if !p.random {
                break;
            }
            if p.random && z2 >= zf && self.zones[z2 as usize].cond != Cond::Offline {
                let z = &self.zones[z2 as usize];
                if z.start + min_bytes <= z.wp {
                    return Some(z2 as u32);
                }
            }
            z1 += 1;
            z2 -= 1;
        }
        None
    }

    /// Reset zone `i` (fio's zbd_reset_zone): counted when it had data.
    fn reset_zone(&mut self, job: &mut JobZones, i: u32, acts: &mut Actions) {
        let z = self.zones[i as usize];
        let data = z.wp - z.start;
        if data == 0 {
            return;
        }
        if self.model != Model::Emulated {
            acts.reset = Some((z.start, self.zones[i as usize + 1].start - z.start));
        }
        self.swd = self.swd.saturating_sub(data);
        self.wp_swd = self.wp_swd.saturating_sub(data);
        self.zones[i as usize].wp = z.start;
        job.resets += 1;
    }

    /// fio's zbd_adjust_block: where the I/O of direction `ddir` drawn at `offset` with
    /// `len` bytes really goes.
    pub fn adjust(
        &mut self,
        job: &mut JobZones,
        r: &Range,
        ddir: usize,
        offset: u64,
        len: u64,
    ) -> Adjust {
        let p = job.params;
        let min_bs = p.min_bs[ddir].max(1);
        let zb = self.zone_idx(offset);
        let mut acts = Actions::default();
        if zb >= self.nr {
            // Past the last zone: nothing there.
            return Adjust::Eof { actions: acts };
        }
        let zone = self.zones[zb as usize];
        if !zone.has_wp {
            return self.adjust_conventional(ddir, offset, len, min_bs, zb);
        }
        if zone.cond != Cond::Offline && ddir == 0 && p.read_beyond_wp {
            return Adjust::Go {
                offset,
                len,
                actions: acts,
            };
        }
        match ddir {
            0 => self.adjust_read(p, r, zb, offset, len, min_bs),
            1 => {
                if len > self.zone_size {
                    return Adjust::Fail {
                        errno: EINVAL,
                        func: "I/O buflen exceeds zone size",
                        log: None,
                        actions: acts,
                    };
                }
                let mut zi = zb;
                if !self.open_zone(job, zb) {
                    match self.convert_to_open(job, r, offset, &mut acts) {
                        Some(z) => zi = z,
                        None => return Adjust::Eof { actions: acts },
                    }
                }
                if p.reset_frequency > 0.0
                    && self.wp_swd as f64 >= r.io_size as f64 * p.reset_threshold
                    && self.dec_write_cnt(&p)
                {
                    self.zones[zi as usize].reset_zone = true;
                }
                if self.zones[zi as usize].reset_zone || self.full(zi as usize, min_bs) {
                    acts.quiesce = true;
                    self.quiesce(job);
                    self.zones[zi as usize].reset_zone = false;
                    self.reset_zone(job, zi, &mut acts);
                    let cap = self.zones[zi as usize].capacity;
                    if cap < min_bs {
                        return Adjust::Fail {
                            errno: EINVAL,
                            func: "ZCAP is less min_bs",
                            log: Some(format!(
                                "zone capacity {cap} smaller than minimum block size {min_bs}"
                            )),
                            actions: acts,
                        };
                    }
                }
                let z = self.zones[zi as usize];
                let off = z.wp;
                if off.wrapping_sub(r.offset) >= r.io_size {
                    return Adjust::Fail {
                        errno: EINVAL,
                        func: "invalid WP value",
                        log: None,
                        actions: acts,
                    };
                }
                let new_len = len.min(z.cap_end() - off) / min_bs * min_bs;
                if new_len == len || new_len >= min_bs {
                    return Adjust::Go {
                        offset: off,
                        len: new_len,
                        actions: acts,
                    };
                }
                Adjust::Fail {
                    errno: EIO,
                    func: "zone remainder too small",
                    log: Some(format!(
                        "zone remainder {} smaller than min block size {min_bs}",
                        z.cap_end() - off
                    )),
                    actions: acts,
                }
            }
            _ => {
                // Trims reset zones; a random trim looks for a zone with data.
                if !p.random || zone.wp > zone.start {
                    return Adjust::Go {
                        offset,
                        len,
                        actions: acts,
                    };
                }
                match self.find_zone(&p, r, zb, 1) {
                    Some(z) => Adjust::Go {
                        offset: self.zones[z as usize].start,
                        len,
                        actions: acts,
                    },
                    None => Adjust::Eof { actions: acts },
                }
            }
        }
    }

    /// Writes to conventional zones do not run into the next sequential zone.
    fn adjust_conventional(
        &self,
        ddir: usize,
        offset: u64,
        len: u64,
        min_bs: u64,
        zb: u32,
    ) -> Adjust {
        let acts = Actions::default();
        let next = &self.zones[zb as usize + 1];
        if ddir != 1 || !next.has_wp || offset + len <= next.start {
            return Adjust::Go {
                offset,
                len,
                actions: acts,
            };
        }
        let start = self.zones[zb as usize].start;
        let (off, new_len) = if offset + min_bs > next.start {
            let off = start + next.start - offset;
            (off, len.min(next.start - off))
        } else {
            (offset, next.start - offset)
        };
        Adjust::Go {
            offset: off,
            len: new_len / min_bs * min_bs,
            actions: acts,
        }
    }

    fn adjust_read(
        &self,
        p: JobParams,
        r: &Range,
        zb: u32,
        offset: u64,
        len: u64,
        min_bs: u64,
    ) -> Adjust {
        let acts = Actions::default();
        let orig_start = self.zones[zb as usize].start;
        let mut zi = zb;
        let mut off = offset;
        let z = self.zones[zi as usize];
        let mut range = if z.cond != Cond::Offline {
            z.wp - z.start
        } else {
            0
        };
        if range < min_bs || (!p.random && off + min_bs > z.wp) {
            let Some(n) = self.find_zone(&p, r, zb, min_bs) else {
                return Adjust::Eof { actions: acts };
            };
            zi = n;
            let z = &self.zones[zi as usize];
            range = z.wp - z.start;
            if !p.random {
                off = z.start;
            }
        }
        let z = self.zones[zi as usize];
        if range <= len {
            off = z.start;
        } else if p.random {
            off = z.start + ((off - orig_start) % (range - len)) / min_bs * min_bs;
        }
        if !z.has_wp {
            return Adjust::Go {
                offset: off,
                len,
                actions: acts,
            };
        }
        let new_len = len.min(z.wp.saturating_sub(off)) / min_bs * min_bs;
        Adjust::Go {
            offset: off,
            len: new_len.min(len),
            actions: acts,
        }
    }

    /// fio's zbd_queue_io: a write moves its zone's write pointer when it is queued; a
    /// completed one that filled the zone closes it.
    pub fn queued(
        &mut self,
        job: &mut JobZones,
        ddir: usize,
        offset: u64,
        len: u64,
        completed: bool,
    ) {
        let i = self.zone_idx(offset);
        if i >= self.nr || !self.zones[i as usize].has_wp || ddir != 1 {
            return;
        }
        let z = &mut self.zones[i as usize];
        let end = (offset + len).min(z.cap_end());
        if z.wp <= end {
            self.swd += end - z.wp;
            self.wp_swd += end - z.wp;
        }
        z.wp = end;
        if offset + len >= z.cap_end() {
            job.pending.push((self.id, i, offset));
        }
        if completed {
            self.completed(job, ddir, offset, len);
        }
    }

    /// fio's zbd_end_zone_io: a write that reached the zone's capacity closes it (unless
    /// a wait for the requests in flight closed it already).
    pub fn completed(&mut self, job: &mut JobZones, ddir: usize, offset: u64, _len: u64) {
        let i = self.zone_idx(offset);
        if ddir != 1 || i >= self.nr {
            return;
        }
        if let Some(k) = job.pending.iter().position(|p| *p == (self.id, i, offset)) {
            job.pending.swap_remove(k);
            self.close_zone(job, i);
        }
    }

    /// fio waits for the job's requests in flight here: the zones their writes fill are
    /// closed now (the caller drains the queue before the next request).
    fn quiesce(&mut self, job: &mut JobZones) {
        let id = self.id;
        let mut k = 0;
        while k < job.pending.len() {
            if job.pending[k].0 == id {
                let (_, z, _) = job.pending.swap_remove(k);
                self.close_zone(job, z);
            } else {
                k += 1;
            }
        }
    }

    /// A trim of a write-pointer zone is a reset of it (fio's zbd_do_io_u_trim): `Ok(true)`
    /// when done that way, `Ok(false)` for a conventional zone (a real trim), `Err` when
    /// the offset is not a zone start.
    pub fn trim(
        &mut self,
        job: &mut JobZones,
        offset: u64,
        acts: &mut Actions,
    ) -> Result<bool, String> {
        let i = self.zone_idx(offset);
        if i >= self.nr || !self.zones[i as usize].has_wp {
            return Ok(false);
        }
        if offset != self.zones[i as usize].start {
            return Err(format!("Trim offset not at zone start ({offset})"));
        }
        self.reset_zone(job, i, acts);
        Ok(true)
    }

    /// With `verify`, a writing job resets the zones of its range that hold data when a
    /// loop begins, before anything is written (fio's zbd_file_reset): the resets are
    /// counted; a real device's zones to reset are returned as (start, length).
    pub fn reset_for_verify(&mut self, job: &mut JobZones, r: &Range) -> Vec<(u64, u64)> {
        let p = job.params;
        let mut dev = Vec::new();
        if !p.verify || !p.writes {
            return dev;
        }
        for i in r.min_zone..r.max_zone {
            let z = self.zones[i as usize];
            if !z.has_wp || z.wp == z.start {
                continue;
            }
            // An open zone reset here is closed too: the loop opens its zones afresh.
            self.close_zone(job, i);
            let mut a = Actions::default();
            self.reset_zone(job, i, &mut a);
            dev.extend(a.reset);
        }
        dev
    }

    /// zoneskip for a sequential job: where its next I/O of `ddir` starts, given where the
    /// previous one ended (`ended`, absolute), where it would continue (`last_pos`: past a
    /// zone's capacity, the zone's end) and the start of the zone it went to last (`base`,
    /// moved here). The job moves on when it has drawn a zone's worth of bytes since it
    /// last moved, when `last_pos` is at the end of the zone `ended` falls in, or, for a
    /// read that may not pass the write pointer, at that zone's write pointer: to
    /// `zonesize + zoneskip` after `base`, or to the start of its range past the range's
    /// end.
    pub fn skip_zones(
        &self,
        job: &mut JobZones,
        r: &Range,
        ddir: usize,
        ended: u64,
        last_pos: u64,
        base: &mut u64,
    ) -> u64 {
        let p = job.params;
        if p.random || p.zone_skip == 0 || ddir > 1 {
            return last_pos;
        }
        let i = self.zone_idx(ended) as usize;
        let z = &self.zones[i];
        let end = self.zones.get(i + 1).map_or(z.start, |n| n.start);
        if job.zone_bytes >= self.zone_size
            || last_pos >= end
            || (ddir == 0 && !p.read_beyond_wp && last_pos >= z.wp)
        {
            job.zone_bytes = 0;
            *base = base.saturating_add(self.zone_size + p.zone_skip);
            if *base >= r.offset + r.io_size {
                *base = r.offset;
            }
            return *base;
        }
        last_pos
    }

    /// Data written in all zones (fio's sectors_with_data, in bytes).
    pub fn data(&self) -> u64 {
        self.swd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(random: bool) -> JobZones {
        JobZones {
            params: JobParams {
                min_bs: [4096; 3],
                random,
                writes: true,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn range(s: &ZoneSet, size: u64) -> Range {
        s.fit_range(0, size, false, &mut Vec::new()).unwrap()
    }

    fn go(a: Adjust) -> (u64, u64, Actions) {
        match a {
            Adjust::Go {
                offset,
                len,
                actions,
            } => (offset, len, actions),
            other => panic!("not accepted: {other:?}"),
        }
    }

    #[test]
    fn setup_errors_are_fio_s() {
        assert_eq!(
            ZoneSet::emulated(1 << 24, 0, 0).unwrap_err().to_string(),
            "Specifying the zone size is mandatory for regular file/block device with --zonemode=zbd"
        );
        assert_eq!(
            ZoneSet::emulated(1 << 24, 256, 0).unwrap_err(),
            SetupError::TooSmallZone
        );
        assert_eq!(
            ZoneSet::emulated(1 << 24, 1 << 20, 2 << 20)
                .unwrap_err()
                .to_string(),
            "job parameter zonecapacity 2097152 is larger than zone size 1048576"
        );
        assert_eq!(
            ZoneSet::emulated(1 << 20, 4 << 20, 0)
                .unwrap_err()
                .to_string(),
            "file/device size 1048576 is smaller than zone size 4194304"
        );
        let s = ZoneSet::emulated(16 << 20, 1 << 20, 0).unwrap();
        assert_eq!(s.nr_zones(), 16);
    }

    #[test]
    fn ranges_round_to_zones_with_fio_s_messages() {
        let s = ZoneSet::emulated(16 << 20, 1 << 20, 0).unwrap();
        let mut notes = Vec::new();
        let r = s
            .fit_range(102400, (16 << 20) - 102400, false, &mut notes)
            .unwrap();
        assert_eq!((r.offset, r.io_size), (1 << 20, 15 << 20));
        assert_eq!(notes, ["rounded up offset from 102400 to 1048576"]);
        notes.clear();
        let r = s.fit_range(0, 3584000, false, &mut notes).unwrap();
        assert_eq!(r.io_size, 3 << 20);
        assert_eq!(notes, ["rounded down io_size from 3584000 to 3145728"]);
        notes.clear();
        let e = s.fit_range(102400, 1 << 20, false, &mut notes).unwrap_err();
        assert_eq!(e, "io_size must be at least one zone");
        // A sequential read keeps its region.
        let r = s.fit_range(102400, 1 << 20, true, &mut notes).unwrap();
        assert_eq!(r.offset, 102400);
    }

    #[test]
    fn writes_go_to_the_write_pointer_and_full_zones_are_reset() {
        let mut s = ZoneSet::emulated(4 << 20, 1 << 20, 0).unwrap();
        let mut j = job(true);
        let r = range(&s, 4 << 20);
        s.file_reset(&j.params, &r);
        // A random write in zone 2 goes to its write pointer (the zone start).
        let (off, len, _) = go(s.adjust(&mut j, &r, 1, (2 << 20) + 65536, 65536));
        assert_eq!((off, len), (2 << 20, 65536));
        s.queued(&mut j, 1, off, len, true);
        let (off, _, _) = go(s.adjust(&mut j, &r, 1, (2 << 20) + 8192, 65536));
        assert_eq!(off, (2 << 20) + 65536);
        // Fill zone 0, then the next write there resets it.
        for _ in 0..16 {
            let (off, len, _) = go(s.adjust(&mut j, &r, 1, 0, 65536));
            s.queued(&mut j, 1, off, len, true);
        }
        assert_eq!(j.resets, 0);
        let (off, _, a) = go(s.adjust(&mut j, &r, 1, 4096, 65536));
        assert_eq!((off, j.resets), (0, 1));
        assert!(
            a.quiesce && a.reset.is_none(),
            "an emulated reset touches nothing"
        );
    }

    #[test]
    fn open_zone_limit_moves_writes_to_open_zones() {
        let mut s = ZoneSet::emulated(8 << 20, 1 << 20, 0).unwrap();
        s.set_max_open(2);
        let mut j = job(true);
        let r = range(&s, 8 << 20);
        s.file_reset(&j.params, &r);
        let mut zones = std::collections::BTreeSet::new();
        for k in 0..20u64 {
            let drawn = (k * 2654435761) % (8 << 20) / 4096 * 4096;
            let (off, len, _) = go(s.adjust(&mut j, &r, 1, drawn, 4096));
            s.queued(&mut j, 1, off, len, true);
            zones.insert(off >> 20);
        }
        assert!(zones.len() <= 2, "writes went to {zones:?}");
        assert_eq!(j.num_open, 2);
    }

    #[test]
    fn reads_stay_below_the_write_pointer() {
        let mut s = ZoneSet::emulated(4 << 20, 1 << 20, 0).unwrap();
        let mut j = job(false);
        let r = range(&s, 4 << 20);
        s.file_reset(&j.params, &r);
        // Nothing written: a sequential read has nothing to read.
        assert!(matches!(
            s.adjust(&mut j, &r, 0, 0, 4096),
            Adjust::Eof { .. }
        ));
        // 8 KiB written in zone 1: a read at 0 moves there and stops at the pointer.
        for _ in 0..2 {
            let (off, len, _) = go(s.adjust(&mut j, &r, 1, 1 << 20, 4096));
            s.queued(&mut j, 1, off, len, true);
        }
        let (off, len, _) = go(s.adjust(&mut j, &r, 0, 0, 65536));
        assert_eq!((off, len), (1 << 20, 8192));
        j.params.read_beyond_wp = true;
        let (off, len, _) = go(s.adjust(&mut j, &r, 0, 0, 65536));
        assert_eq!((off, len), (0, 65536));
    }

    #[test]
    fn mixed_jobs_write_before_anything_is_written() {
        let mut s = ZoneSet::emulated(4 << 20, 1 << 20, 0).unwrap();
        let mut j = job(true);
        j.params.mixed = true;
        let r = range(&s, 4 << 20);
        s.file_reset(&j.params, &r);
        assert_eq!(s.adjust_ddir(&j.params, 0), 1);
        let (off, len, _) = go(s.adjust(&mut j, &r, 1, 0, 4096));
        s.queued(&mut j, 1, off, len, true);
        assert_eq!(s.adjust_ddir(&j.params, 0), 0);
    }

    #[test]
    fn threshold_resets_every_nth_write_past_the_threshold() {
        let mut s = ZoneSet::emulated(4 << 20, 1 << 20, 0).unwrap();
        let mut j = job(false);
        j.params.reset_threshold = 0.25;
        j.params.reset_frequency = 0.5;
        let r = range(&s, 4 << 20);
        s.file_reset(&j.params, &r);
        let mut resets_at = Vec::new();
        for k in 0..40u64 {
            let drawn = (k * 65536) % (4 << 20);
            let (off, len, _) = go(s.adjust(&mut j, &r, 1, drawn, 65536));
            s.queued(&mut j, 1, off, len, true);
            if j.resets as usize > resets_at.len() {
                resets_at.push(k);
            }
        }
        // 1 MiB (a quarter) written after 16 writes; then every second write resets.
        assert_eq!(resets_at.first(), Some(&17));
        assert!(
            resets_at.windows(2).all(|w| w[1] - w[0] == 2),
            "{resets_at:?}"
        );
    }

    #[test]
    fn a_verifying_writer_resets_and_closes_its_zones_with_data_as_a_loop_begins() {
        let mut s = ZoneSet::emulated(4 << 20, 1 << 20, 0).unwrap();
        s.set_max_open(2);
        let mut j = job(true);
        j.params.verify = true;
        let r = s
            .fit_range(1 << 20, 3 << 20, false, &mut Vec::new())
            .unwrap();
        s.file_reset(&j.params, &r);
        // Nothing written yet: nothing to reset, nothing counted.
        assert!(s.reset_for_verify(&mut j, &r).is_empty());
        assert_eq!(j.resets, 0);
        for zone in [1u64, 2] {
            let (off, len, _) = go(s.adjust(&mut j, &r, 1, zone << 20, 65536));
            s.queued(&mut j, 1, off, len, true);
        }
        assert_eq!((s.num_open, j.num_open), (2, 2));
        assert!(
            s.reset_for_verify(&mut j, &r).is_empty(),
            "emulated: no device call"
        );
        assert_eq!(j.resets, 2);
        assert_eq!((s.zone(1).wp, s.zone(2).wp), (1 << 20, 2 << 20));
        assert_eq!(
            (s.num_open, j.num_open),
            (0, 0),
            "the loop opens its zones afresh"
        );
        // A job that does not verify keeps its data.
        let mut k = job(true);
        let (off, len, _) = go(s.adjust(&mut k, &r, 1, 3 << 20, 65536));
        s.queued(&mut k, 1, off, len, true);
        assert!(s.reset_for_verify(&mut k, &r).is_empty());
        assert_eq!((k.resets, s.zone(3).wp), (0, (3 << 20) + 65536));
        // A real device's zones are handed back to reset.
        let zones = (0..4u64)
            .map(|i| Zone::new(i << 20, 1 << 20, (i << 20) + 4096 * i, true, Cond::ImpOpen))
            .collect();
        let mut d = ZoneSet::reported(Model::HostManaged, 1 << 20, zones);
        let rd = range(&d, 4 << 20);
        assert_eq!(
            d.reset_for_verify(&mut j, &rd),
            vec![(1 << 20, 1 << 20), (2 << 20, 1 << 20), (3 << 20, 1 << 20)]
        );
    }

    #[test]
    fn a_verifying_writer_never_reopens_a_full_zone() {
        let mut s = ZoneSet::emulated(2 << 20, 1 << 20, 0).unwrap();
        let mut j = job(false);
        j.params.verify = true;
        let r = range(&s, 2 << 20);
        s.file_reset(&j.params, &r);
        for _ in 0..16 {
            let (off, len, _) = go(s.adjust(&mut j, &r, 1, 0, 65536));
            s.queued(&mut j, 1, off, len, true);
        }
        // Zone 0 is full: the write goes to zone 1 instead of resetting zone 0.
        let (off, _, _) = go(s.adjust(&mut j, &r, 1, 0, 65536));
        assert_eq!((off, j.resets), (1 << 20, 0));
        for _ in 0..16 {
            let (off, len, _) = go(s.adjust(&mut j, &r, 1, 1 << 20, 65536));
            s.queued(&mut j, 1, off, len, true);
        }
        // Everything full: nothing more for this loop.
        assert!(matches!(
            s.adjust(&mut j, &r, 1, 0, 65536),
            Adjust::Eof { .. }
        ));
        assert_eq!(j.resets, 0);
    }

    #[test]
    fn zoneskip_moves_on_after_a_zone_s_worth_and_wraps_to_the_range_start() {
        let s = ZoneSet::emulated(16 << 20, 1 << 20, 0).unwrap();
        let mut j = job(false);
        j.params.zone_skip = 2 << 20;
        let r = range(&s, 16 << 20);
        let mut base = 0;
        // Inside the first zone, less than a zone drawn: go on.
        j.zone_bytes = 768 << 10;
        assert_eq!(
            s.skip_zones(&mut j, &r, 1, 768 << 10, 768 << 10, &mut base),
            768 << 10
        );
        // A zone's worth drawn: 1 MiB + 2 MiB after the zone's start.
        j.zone_bytes = 1 << 20;
        assert_eq!(
            s.skip_zones(&mut j, &r, 1, 1 << 20, 1 << 20, &mut base),
            3 << 20
        );
        assert_eq!((base, j.zone_bytes), (3 << 20, 0));
        // Less drawn, but at the end of the zone the previous I/O ended in (a capacity
        // gap skipped to it): move on too.
        assert_eq!(
            s.skip_zones(&mut j, &r, 1, (3 << 20) + 4096, (3 << 20) + 4096, &mut base),
            (3 << 20) + 4096
        );
        assert_eq!(
            s.skip_zones(&mut j, &r, 1, (3 << 20) + (768 << 10), 4 << 20, &mut base),
            6 << 20
        );
        // Past the end of the range: its start again.
        base = 15 << 20;
        j.zone_bytes = 1 << 20;
        assert_eq!(
            s.skip_zones(&mut j, &r, 1, 16 << 20, 16 << 20, &mut base),
            0
        );
        // Random jobs and trims do not skip.
        j.zone_bytes = 1 << 20;
        j.params.random = true;
        assert_eq!(
            s.skip_zones(&mut j, &r, 1, 5 << 20, 5 << 20, &mut base),
            5 << 20
        );
        j.params.random = false;
        assert_eq!(
            s.skip_zones(&mut j, &r, 2, 5 << 20, 5 << 20, &mut base),
            5 << 20
        );
    }

    #[test]
    fn zoneskip_reads_move_on_at_the_write_pointer() {
        let mut s = ZoneSet::emulated(8 << 20, 1 << 20, 0).unwrap();
        let mut w = job(false);
        let r = range(&s, 8 << 20);
        for _ in 0..4 {
            let (off, len, _) = go(s.adjust(&mut w, &r, 1, 0, 65536));
            s.queued(&mut w, 1, off, len, true);
        }
        let mut j = job(false);
        j.params.zone_skip = 1 << 20;
        let mut base = 0;
        // 256 KiB written in zone 0: a read that reached them moves on.
        assert_eq!(
            s.skip_zones(&mut j, &r, 0, 128 << 10, 128 << 10, &mut base),
            128 << 10
        );
        assert_eq!(
            s.skip_zones(&mut j, &r, 0, 256 << 10, 256 << 10, &mut base),
            2 << 20
        );
        // Unless reads may pass the write pointer.
        j.params.read_beyond_wp = true;
        base = 0;
        assert_eq!(
            s.skip_zones(&mut j, &r, 0, 256 << 10, 256 << 10, &mut base),
            256 << 10
        );
    }

    #[test]
    fn offsets_past_the_last_zone_have_nothing() {
        let mut s = ZoneSet::emulated(2 << 20, 1 << 20, 0).unwrap();
        let mut j = job(false);
        let r = range(&s, 2 << 20);
        assert!(matches!(
            s.adjust(&mut j, &r, 1, 2 << 20, 4096),
            Adjust::Eof { .. }
        ));
        assert!(matches!(
            s.adjust(&mut j, &r, 0, 5 << 20, 4096),
            Adjust::Eof { .. }
        ));
    }

    #[test]
    fn trims_reset_zones_at_their_start_only() {
        let mut s = ZoneSet::emulated(4 << 20, 1 << 20, 0).unwrap();
        let mut j = job(false);
        let r = range(&s, 4 << 20);
        let (off, len, _) = go(s.adjust(&mut j, &r, 1, 0, 4096));
        s.queued(&mut j, 1, off, len, true);
        let mut a = Actions::default();
        assert_eq!(s.trim(&mut j, 0, &mut a), Ok(true));
        assert_eq!((j.resets, s.zone(0).wp), (1, 0));
        assert!(s.trim(&mut j, 4096, &mut a).is_err());
    }
}
