//! Periodic syncs between a job's writes: `fsync=N`, `fdatasync=N` and
//! `sync_file_range=flags:N` after every N writes (the range that of the last written
//! file since its previous one), as fio's get_rw_ddir finds them due: when the count of
//! writes is a multiple of N, the fsync first, then the fdatasync, then the range.

/// A sync due before the next write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    /// fsync (fdatasync when `data`) of `file`.
    Sync { file: u32, data: bool },
    /// sync_file_range of `file` from `offset`, `len` bytes (0 = to the end of the file).
    Range { file: u32, offset: u64, len: u64 },
}

/// sync_file_range's state: its period, and each file's written range since the last
/// one (lowest offset, highest end).
struct Ranges {
    every: u64,
    span: Vec<(u64, u64)>,
}

/// The write count the periodic syncs are due by.
pub struct Syncs {
    /// fsync and fdatasync every this many writes (0 = never).
    fsync: u64,
    fdatasync: u64,
    last_file: u32,
    ranges: Option<Ranges>,
    /// fio 3.33's rule ([`Syncs::repeating`]) instead of the newest's.
    repeat: bool,
    /// fio 3.33's rule read at completions ([`Syncs::reaped`]).
    reaped: bool,
    /// Writes so far; whether the last request was a write, or a sync.
    writes: u64,
    last_write: bool,
    last_sync: bool,
}

impl Syncs {
    /// `every`: fsync and fdatasync every this many writes (0 = none); `range_every`:
    /// sync_file_range every this many writes; `nfiles` files; `enabled` = false for
    /// targets with nothing to sync (engines without a disk, except those whose target has
    /// its own flush).
    pub fn new(every: (u64, u64), range_every: Option<u64>, nfiles: usize, enabled: bool) -> Syncs {
        let on = |n: u64| if enabled { n } else { 0 };
        Syncs {
            fsync: on(every.0),
            fdatasync: on(every.1),
            last_file: 0,
            ranges: range_every
                .filter(|n| *n > 0 && enabled)
                .map(|every| Ranges {
                    every,
                    // fio's first range of a file starts at 0 (later ones at their lowest write).
                    span: vec![(0, 0); nfiles],
                }),
            repeat: false,
            reaped: false,
            writes: 0,
            last_write: false,
            last_sync: false,
        }
    }

    /// fio 3.33's rule (`--compat=3.33`): a sync is due whenever the writes so far are a
    /// multiple of N and the last request was not a sync, so in a read/write mix each read
    /// after a sync brings another one until the next write (`w s r s r s w`). The newest
    /// fio (3.38 on) syncs only right after the N-th write.
    pub fn repeating(mut self, on: bool) -> Syncs {
        self.repeat = on;
        self
    }

    /// fio 3.33 keeps "the last request was a sync" from the requests it *completed*: a
    /// sync's completion sets it, any other's clears it. On synchronous engines that is
    /// the last request prepared; on libaio, whose syncs fio 3.33 runs at once while
    /// writes stay queued, the writes prepared after a sync leave it set until one of
    /// them is reaped, so a sync due meanwhile is skipped (`rw=write iodepth=8 fsync=3`:
    /// 41 syncs for 128 writes). `on` with [`Syncs::repeating`] only; the worker then
    /// reports completions ([`Syncs::completed`], [`Syncs::sync_completed`]).
    pub fn reaped(mut self, on: bool) -> Syncs {
        self.reaped = on && self.repeat;
        self
    }

    /// Whether any periodic sync is on (fsync, fdatasync or sync_file_range every N).
    pub fn periodic(&self) -> bool {
        self.fsync > 0 || self.fdatasync > 0 || self.ranges.is_some()
    }

    /// The sync due now, if any. `pick` names the file it goes to, given the file written
    /// last: fio picks the file of its next request first and then finds a sync due, so
    /// the sync goes to the file that request would have used (and takes that turn of the
    /// file service).
    #[inline]
    pub fn due(&mut self, pick: impl FnOnce(u32) -> u32) -> Option<Due> {
        let asked = if self.repeat {
            !self.last_sync
        } else {
            self.last_write
        };
        if !asked || self.writes == 0 {
            return None;
        }
        let at = |every: u64| every > 0 && self.writes % every == 0;
        let range = self.ranges.as_ref().is_some_and(|r| at(r.every));
        let kind = if at(self.fsync) {
            Some(false)
        } else if at(self.fdatasync) {
            Some(true)
        } else {
            None
        };
        if kind.is_none() && !range {
            return None;
        }
        self.last_sync = true;
        self.last_write = false;
        let file = pick(self.last_file);
        if let Some(data) = kind {
            return Some(Due::Sync { file, data });
        }
        let r = self.ranges.as_mut()?;
        let (lo, hi) = std::mem::replace(&mut r.span[file as usize], (u64::MAX, 0));
        // The range written since the last one; 0 bytes means "to the end of the file"
        // (also when the range is too long for io_uring's 32-bit length).
        let (offset, len) = match hi.checked_sub(lo) {
            Some(l) if l > 0 && l <= u32::MAX as u64 => (lo, l),
            Some(_) => (lo, 0),
            None => (0, 0),
        };
        Some(Due::Range { file, offset, len })
    }

    /// A write of `len` bytes at `offset` of `file` was prepared.
    #[inline]
    pub fn wrote(&mut self, file: usize, offset: u64, len: u64) {
        self.writes += 1;
        self.last_write = true;
        self.last_sync &= self.reaped;
        self.last_file = file as u32;
        if let Some(r) = &mut self.ranges {
            let s = &mut r.span[file];
            *s = (s.0.min(offset), s.1.max(offset + len));
        }
    }

    /// A read or trim was prepared (no sync after it in the newest fio; fio 3.33's rule:
    /// the last request is no sync).
    #[inline]
    pub fn other(&mut self) {
        self.last_sync &= self.reaped;
        self.last_write = false;
    }

    /// Whether the last request was a sync (fio's should_fsync: a loop's end syncs only
    /// where it was not; fio 3.33 reads it from completions, the newest from the request
    /// issued last).
    pub fn last_was_sync(&self) -> bool {
        self.last_sync
    }

    /// A loop or pass starts over: no request before it (fio's reset of its counters).
    pub fn reset(&mut self) {
        self.last_sync = false;
        self.last_write = false;
    }

    /// A request other than a sync completed ([`Syncs::reaped`]).
    #[inline]
    pub fn completed(&mut self) {
        self.last_sync &= !self.reaped;
    }

    /// A sync completed ([`Syncs::reaped`]).
    #[inline]
    pub fn sync_completed(&mut self) {
        self.last_sync |= self.reaped;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsync_every_n_writes_of_the_picked_file() {
        let mut s = Syncs::new((3, 0), None, 2, true);
        assert_eq!(s.due(|f| f), None);
        s.wrote(0, 0, 4096);
        s.wrote(1, 0, 4096);
        assert_eq!(s.due(|f| f), None);
        s.wrote(1, 4096, 4096);
        assert_eq!(
            s.due(|f| f),
            Some(Due::Sync {
                file: 1,
                data: false
            })
        );
        assert_eq!(s.due(|f| f), None, "the count starts again");
        // The file is asked for only when a sync is due, and the sync goes to it.
        s.wrote(0, 8192, 4096);
        assert_eq!(s.due(|_| unreachable!()), None);
        s.wrote(0, 12288, 4096);
        s.wrote(0, 16384, 4096);
        assert_eq!(
            s.due(|_| 1),
            Some(Due::Sync {
                file: 1,
                data: false
            })
        );
    }

    #[test]
    fn fio_3_33_syncs_again_after_each_read_until_the_next_write() {
        let seq = |repeat: bool| {
            let mut s = Syncs::new((2, 0), None, 1, true).repeating(repeat);
            let mut out = String::new();
            for c in "rwwrrwrwwr".chars() {
                while s.due(|f| f).is_some() {
                    out.push('s');
                }
                out.push(c);
                if c == 'w' {
                    s.wrote(0, 0, 4096);
                } else {
                    s.other();
                }
            }
            out
        };
        assert_eq!(seq(true), "rwwsrsrswrwswr");
        assert_eq!(seq(false), "rwwsrrwrwswr");
    }

    #[test]
    fn fio_3_33_on_libaio_decides_by_the_requests_completed() {
        // 'w' a write prepared (queued), 'c' a request other than a sync completed; a
        // sync completes as it is issued.
        let seq = |reaped: bool, events: &str| {
            let mut s = Syncs::new((3, 0), None, 1, true)
                .repeating(true)
                .reaped(reaped);
            let mut out = String::new();
            for c in events.chars() {
                if c == 'w' {
                    while s.due(|f| f).is_some() {
                        s.sync_completed();
                        out.push('s');
                    }
                    s.wrote(0, 0, 4096);
                } else {
                    s.completed();
                }
                out.push(c);
            }
            out
        };
        // The writes after a sync not reaped by the time the next is due: it is skipped.
        assert_eq!(seq(true, "wwwwwwwcww"), "wwwswwwwcww");
        // Without the rule, each third write brings its sync.
        assert_eq!(seq(false, "wwwwwwwcww"), "wwwswwwswcww");
        // A completion in between: as on a synchronous engine.
        assert_eq!(seq(true, "wwwcwwwcw"), "wwwcswwwcsw");
    }

    #[test]
    fn nothing_is_due_without_a_disk() {
        let mut s = Syncs::new((1, 1), Some(1), 1, false);
        s.wrote(0, 0, 512);
        s.wrote(0, 512, 512);
        assert_eq!(s.due(|f| f), None);
    }

    #[test]
    fn ranges_cover_what_was_written_since_the_last_one() {
        let mut s = Syncs::new((0, 0), Some(2), 2, true);
        s.wrote(0, 8192, 4096);
        s.wrote(0, 16384, 4096);
        // The file's first range starts at 0.
        assert_eq!(
            s.due(|f| f),
            Some(Due::Range {
                file: 0,
                offset: 0,
                len: 20480
            })
        );
        s.wrote(0, 4096, 4096);
        s.wrote(0, 12288, 4096);
        assert_eq!(
            s.due(|f| f),
            Some(Due::Range {
                file: 0,
                offset: 4096,
                len: 12288
            })
        );
        // The range is the last written file's; other files keep theirs.
        s.wrote(0, 0, 512);
        s.wrote(1, 8192, 512);
        assert_eq!(
            s.due(|f| f),
            Some(Due::Range {
                file: 1,
                offset: 0,
                len: 8704
            })
        );
    }

    #[test]
    fn an_empty_or_huge_range_means_to_the_end() {
        let mut s = Syncs::new((0, 0), Some(1), 1, true);
        s.wrote(0, 0, 0);
        assert_eq!(
            s.due(|f| f),
            Some(Due::Range {
                file: 0,
                offset: 0,
                len: 0
            })
        );
        s.wrote(0, 1 << 20, 1 << 33);
        assert_eq!(
            s.due(|f| f),
            Some(Due::Range {
                file: 0,
                offset: 1 << 20,
                len: 0
            })
        );
    }

    #[test]
    fn a_range_due_with_an_fsync_gives_way() {
        let mut s = Syncs::new((2, 0), Some(2), 1, true);
        for _ in 0..3 {
            s.wrote(0, 0, 4096);
            assert_eq!(s.due(|f| f), None);
            s.wrote(0, 4096, 4096);
            assert_eq!(
                s.due(|f| f),
                Some(Due::Sync {
                    file: 0,
                    data: false
                })
            );
            assert_eq!(s.due(|f| f), None, "one sync per write");
        }
        // Different periods: each comes when its count is reached.
        let mut s = Syncs::new((3, 0), Some(2), 1, true);
        let mut seen = Vec::new();
        for i in 0..6u64 {
            s.wrote(0, i * 4096, 4096);
            seen.push(match s.due(|f| f) {
                None => '-',
                Some(Due::Sync { .. }) => 'S',
                Some(Due::Range { .. }) => 'R',
            });
        }
        assert_eq!(seen.iter().collect::<String>(), "-RSR-S");
    }

    #[test]
    fn fsync_and_fdatasync_come_by_one_write_count_the_fsync_first() {
        let seq = |repeat: bool| {
            let mut s = Syncs::new((3, 5), None, 1, true).repeating(repeat);
            let mut out = String::new();
            for i in 0..16u64 {
                s.wrote(0, i * 4096, 4096);
                out.push(match s.due(|f| f) {
                    None => '-',
                    Some(Due::Sync { data: false, .. }) => 'S',
                    Some(Due::Sync { data: true, .. }) => 'D',
                    Some(Due::Range { .. }) => 'R',
                });
            }
            out
        };
        // Write 15 is both's: the fsync; the fdatasync is not owed after it.
        assert_eq!(seq(false), "--S-DS--SD-S--S-");
        assert_eq!(seq(true), "--S-DS--SD-S--S-");
    }
}
