//! Trace replay (`read_iolog`): the trace's entries in order, and fio's pacing between them
//! (`iolog_delay`): an entry's delay counts from the previous issue, and time overslept
//! is taken off the next delay.
//!
//! The trace is parsed ahead on a reader thread of the job's own (`flexio-iolog`) into
//! batches of [`BATCH`] entries. [`BATCHES`] batch buffers exist, allocated when the replay
//! opens: the reader fills an empty one and sends it over a bounded channel, the job thread
//! replays it and sends it back emptied. Memory stays the same whatever the trace's length,
//! and taking an entry on the job thread is an index into the current batch (no parsing and
//! no allocation on the I/O path). The end of the trace, or a read error, travels in the
//! last batch after the entries read before it, so the job sees them in the same order as
//! when it read the trace itself.

use crate::iolog::{self, Entry};
use crate::plan::ReplayPlan;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Entries per batch.
pub const BATCH: usize = 4096;
/// Batch buffers per replay: one being replayed, the others parsed ahead.
pub const BATCHES: usize = 3;

/// Entries parsed ahead by the reader thread.
#[derive(Default)]
struct Batch {
    entries: Vec<Entry>,
    /// On the last batch: the end of the trace (`Ok`) or the read error.
    end: Option<Result<(), String>>,
}

/// The job thread's ends of the reader thread's channels.
struct Feed {
    full: Receiver<Batch>,
    empty: SyncSender<Batch>,
    handle: JoinHandle<()>,
}

pub struct Replay {
    feed: Option<Feed>,
    /// The batch being replayed and the next entry in it.
    cur: Option<Batch>,
    pos: usize,
    /// The trace's end (or error) was returned.
    done: bool,
    last_issue_ns: u64,
    /// µs overslept by the last delay, taken off the next one.
    time_offset_us: u64,
    pub redirect: bool,
}

impl Replay {
    pub fn open(p: &ReplayPlan) -> Result<Self, String> {
        let reader = iolog::open(&p.trace, &p.opts, &p.files)?;
        let (full_tx, full) = mpsc::sync_channel::<Batch>(BATCHES);
        let (empty, empty_rx) = mpsc::sync_channel::<Batch>(BATCHES);
        for _ in 0..BATCHES {
            let b = Batch {
                entries: Vec::with_capacity(BATCH),
                end: None,
            };
            // Cannot fail: the receiver is alive and the channel holds BATCHES.
            let _ = empty.send(b);
        }
        let handle = std::thread::Builder::new()
            .name("flexio-iolog".into())
            .spawn(move || parse_ahead(reader, full_tx, empty_rx))
            .map_err(|e| {
                format!(
                    "iolog '{}': cannot start the reader thread: {e}",
                    p.trace.display()
                )
            })?;
        Ok(Replay {
            feed: Some(Feed {
                full,
                empty,
                handle,
            }),
            cur: None,
            pos: 0,
            done: false,
            last_issue_ns: 0,
            time_offset_us: 0,
            redirect: p.opts.redirect.is_some(),
        })
    }

    /// The next entry; `Ok(None)` at the end of the trace.
    #[inline]
    pub fn next_entry(&mut self) -> Result<Option<Entry>, String> {
        if let Some(b) = &self.cur {
            if let Some(e) = b.entries.get(self.pos) {
                self.pos += 1;
                return Ok(Some(*e));
            }
        }
        self.next_batch()
    }

    /// The next entry when it is a read, write or trim without a delay, the common entry,
    /// taken by the plain loop without a call; `None`, and nothing taken, otherwise (a file
    /// action, a wait, a delay, a sync, the end of a batch).
    #[inline]
    pub fn next_plain_io(&mut self) -> Option<Entry> {
        let e = *self.cur.as_ref()?.entries.get(self.pos)?;
        if e.delay_us != 0 || e.act.ddir().is_none() {
            return None;
        }
        self.pos += 1;
        Some(e)
    }

    /// The current batch is replayed: its end, or the first entry of the next batch.
    #[cold]
    fn next_batch(&mut self) -> Result<Option<Entry>, String> {
        loop {
            if self.done {
                return Ok(None);
            }
            let Some(feed) = &self.feed else {
                return Ok(None);
            };
            if let Some(mut b) = self.cur.take() {
                if let Some(end) = b.end.take() {
                    self.done = true;
                    return end.map(|()| None);
                }
                b.entries.clear();
                // Fails only when the reader has ended (after the trace's last batch).
                let _ = feed.empty.send(b);
            }
            match feed.full.recv() {
                Ok(b) => {
                    self.cur = Some(b);
                    self.pos = 0;
                }
                Err(_) => {
                    self.done = true;
                    return Err("iolog read error: the reader thread ended early".into());
                }
            }
            if let Some(b) = &self.cur {
                if let Some(e) = b.entries.first() {
                    self.pos = 1;
                    return Ok(Some(*e));
                }
            }
        }
    }

    /// How long to sleep (µs) before an entry with `delay` µs, at `now_ns`: `None` when the
    /// entry goes at once and the oversleep stays as it is (the delay is below the last
    /// oversleep, which is then forgiven, or has passed since the last issue); otherwise
    /// the time left, possibly 0, after which [`Self::slept`] takes the oversleep anew.
    pub fn sleep_for(&mut self, delay: u64, now_ns: u64) -> Option<u64> {
        let since = now_ns.saturating_sub(self.last_issue_ns) / 1000;
        if delay < self.time_offset_us {
            self.time_offset_us = 0;
            return None;
        }
        let d = delay - self.time_offset_us;
        if d < since {
            return None;
        }
        Some(d - since)
    }

    /// A sleep for an entry of `delay` µs took `slept_us`.
    pub fn slept(&mut self, delay: u64, slept_us: u64) {
        self.time_offset_us = slept_us.saturating_sub(delay);
    }

    /// An entry was issued (or a file action done) at `now_ns`.
    #[inline]
    pub fn issued(&mut self, now_ns: u64) {
        self.last_issue_ns = now_ns;
    }
}

impl Drop for Replay {
    /// A job that stops before the end of its trace: the closed channels end the reader
    /// (within one batch), which is waited for so no thread outlives the job.
    fn drop(&mut self) {
        if let Some(Feed {
            full,
            empty,
            handle,
        }) = self.feed.take()
        {
            drop(full);
            drop(empty);
            let _ = handle.join();
        }
    }
}

/// The reader thread: fill each empty batch with the next entries and send it on, until the
/// trace ends or fails (in the last batch) or the job drops its ends.
fn parse_ahead(mut reader: iolog::Reader, full: SyncSender<Batch>, empty: Receiver<Batch>) {
    // Messages were printed when the plan scanned the trace.
    let mut notes = Vec::new();
    for mut b in empty {
        while b.entries.len() < BATCH {
            match reader.next_entry(&mut notes) {
                Ok(Some(e)) => b.entries.push(e),
                Ok(None) => b.end = Some(Ok(())),
                Err(m) => b.end = Some(Err(m)),
            }
            notes.clear();
            if b.end.is_some() {
                break;
            }
        }
        let last = b.end.is_some();
        if full.send(b).is_err() || last {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iolog::{Act, Format, ReplayOpts};
    use std::path::Path;

    fn plan(p: &Path, files: Vec<std::path::PathBuf>) -> ReplayPlan {
        ReplayPlan {
            trace: p.to_path_buf(),
            opts: ReplayOpts::default(),
            files,
            format: Format::Text(2),
            notes: Vec::new(),
            syncs: false,
        }
    }

    fn replay() -> (tempfile::TempDir, Replay) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        std::fs::write(&p, "fio version 2 iolog\n/a add\n/a read 0 512\n").unwrap();
        let r = Replay::open(&plan(&p, vec!["/a".into()])).unwrap();
        (d, r)
    }

    #[test]
    fn delays_count_from_the_last_issue_and_oversleep_is_repaid() {
        let (_d, mut r) = replay();
        r.issued(1_000_000);
        // 300 µs since the last issue: 700 µs left of a 1000 µs delay.
        assert_eq!(r.sleep_for(1000, 1_300_000), Some(700));
        // Already late: no sleep.
        assert_eq!(r.sleep_for(1000, 2_500_000), None);
        // Overslept by 200 µs: the next delay is shorter by that much.
        r.slept(1000, 1200);
        r.issued(5_000_000);
        assert_eq!(r.sleep_for(500, 5_000_000), Some(300));
        // A delay below the overshoot resets it.
        r.slept(100, 400);
        assert_eq!(r.sleep_for(100, 5_000_000), None);
        assert_eq!(r.sleep_for(100, 5_000_000), Some(100));
        // A late entry keeps the oversleep; one due just now (no sleep) clears it.
        r.slept(100, 190);
        assert_eq!(r.sleep_for(100, 5_020_000), None);
        assert_eq!(r.sleep_for(100, 5_010_000), Some(0));
        r.slept(100, 0);
        assert_eq!(r.sleep_for(100, 5_000_000), Some(100));
        let e = r.next_entry().unwrap().unwrap();
        assert_eq!(e.act, crate::iolog::Act::Add);
        assert_eq!(r.next_entry().unwrap().unwrap().len, 512);
        assert!(r.next_entry().unwrap().is_none());
        assert!(r.next_entry().unwrap().is_none(), "the end stays the end");
    }

    /// A version 2 trace of `n` reads of `/a` (offsets 0, 512, ...) after its add and open.
    fn reads(n: usize) -> String {
        let mut t = String::from("fio version 2 iolog\n/a add\n/a open\n");
        for i in 0..n {
            t += &format!("/a read {} 512\n", i * 512);
        }
        t
    }

    /// Every entry the replay gives, and how it ended.
    fn drain(r: &mut Replay) -> (Vec<Entry>, Result<(), String>) {
        let mut out = Vec::new();
        loop {
            match r.next_entry() {
                Ok(Some(e)) => out.push(e),
                Ok(None) => return (out, Ok(())),
                Err(m) => return (out, Err(m)),
            }
        }
    }

    /// The same, read on this thread without batches.
    fn direct(p: &ReplayPlan) -> (Vec<Entry>, Result<(), String>) {
        let mut r = iolog::open(&p.trace, &p.opts, &p.files).unwrap();
        let mut out = Vec::new();
        let mut notes = Vec::new();
        loop {
            match r.next_entry(&mut notes) {
                Ok(Some(e)) => out.push(e),
                Ok(None) => return (out, Ok(())),
                Err(m) => return (out, Err(m)),
            }
        }
    }

    #[test]
    fn batches_give_the_traces_entries_in_order_at_every_length() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        // Entries: the add and open, then the reads: lengths around one and several batches.
        for n in [
            0,
            1,
            BATCH - 3,
            BATCH - 2,
            BATCH - 1,
            2 * BATCH - 2,
            BATCHES * BATCH + 5,
            3 * BATCHES * BATCH + 7,
        ] {
            std::fs::write(&p, reads(n)).unwrap();
            let pl = plan(&p, vec!["/a".into()]);
            let mut r = Replay::open(&pl).unwrap();
            let (got, end) = drain(&mut r);
            assert_eq!(end, Ok(()), "{n}");
            assert_eq!(got.len(), n + 2, "{n}");
            assert_eq!((got, end), direct(&pl), "{n}");
            assert!(r.next_entry().unwrap().is_none());
        }
    }

    #[test]
    fn a_read_error_past_the_first_batches_comes_after_the_entries_before_it() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        let n = 2 * BATCH + 100;
        let mut t = reads(n).into_bytes();
        // A line that is not text: reading it fails, after every entry before it.
        t.extend_from_slice(b"/a read \xff\xfe 512\n/a read 0 512\n");
        std::fs::write(&p, t).unwrap();
        let pl = plan(&p, vec!["/a".into()]);
        let mut r = Replay::open(&pl).unwrap();
        let (got, end) = drain(&mut r);
        assert_eq!(got.len(), n + 2);
        assert!(got[2..]
            .iter()
            .enumerate()
            .all(|(i, e)| e.act == Act::Read && e.offset == i as u64 * 512));
        let m = end.unwrap_err();
        assert!(m.starts_with("iolog read error"), "{m}");
        assert_eq!((got, Err(m)), direct(&pl));
        assert!(r.next_entry().unwrap().is_none());
    }

    #[test]
    fn a_replay_dropped_early_ends_its_reader() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        std::fs::write(&p, reads(20 * BATCH)).unwrap();
        let pl = plan(&p, vec!["/a".into()]);
        for taken in [0, 1, BATCH + 1] {
            let mut r = Replay::open(&pl).unwrap();
            for _ in 0..taken {
                r.next_entry().unwrap().unwrap();
            }
            // Joins the reader: a reader blocked on its channels would hang here.
            drop(r);
        }
    }

    #[test]
    fn a_long_trace_cycles_through_the_same_few_buffers() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        std::fs::write(&p, reads(10 * BATCHES * BATCH + 11)).unwrap();
        let mut r = Replay::open(&plan(&p, vec!["/a".into()])).unwrap();
        let mut buffers = std::collections::HashSet::new();
        let mut n = 0;
        while r.next_entry().unwrap().is_some() {
            n += 1;
            let b = &r.cur.as_ref().unwrap().entries;
            // The buffers allocated at the start, never grown nor replaced.
            assert_eq!(b.capacity(), BATCH);
            buffers.insert(b.as_ptr() as usize);
        }
        assert_eq!(n, 10 * BATCHES * BATCH + 13);
        assert_eq!(buffers.len(), BATCHES, "the batches are recycled");
    }

    #[test]
    fn two_replays_of_different_traces_read_their_own() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        let b = d.path().join("b");
        std::fs::write(&a, reads(BATCH + 1)).unwrap();
        std::fs::write(&b, reads(2 * BATCH + 3).replace("/a", "/b")).unwrap();
        let pa = plan(&a, vec!["/a".into()]);
        let pb = plan(&b, vec!["/b".into()]);
        let mut ra = Replay::open(&pa).unwrap();
        let mut rb = Replay::open(&pb).unwrap();
        // Interleaved, as two job threads take them.
        let (mut ga, mut gb) = (Vec::new(), Vec::new());
        let (mut ea, mut eb) = (false, false);
        while !(ea && eb) {
            if !ea {
                match ra.next_entry().unwrap() {
                    Some(e) => ga.push(e),
                    None => ea = true,
                }
            }
            if !eb {
                match rb.next_entry().unwrap() {
                    Some(e) => gb.push(e),
                    None => eb = true,
                }
            }
        }
        assert_eq!((ga, Ok(())), direct(&pa));
        assert_eq!((gb, Ok(())), direct(&pb));
    }
}
