//! The file service: which file the next I/O goes to (fio's get_next_file: round robin,
//! sequential, random and the non-uniform distributions), and under `openfiles` which
//! files are open.

use super::*;

impl Generator {
    /// The file of the next I/O (fio's get_next_file); `None` when every file is done.
    #[inline]
    pub fn pick_file(&mut self) -> Option<usize> {
        if self.files.len() == 1 && self.files_done == 0 {
            return Some(0);
        }
        self.pick_among_files()
    }

    fn pick_among_files(&mut self) -> Option<usize> {
        let n = self.files.len();
        if self.files_done >= n {
            return None;
        }
        if n == 1 {
            return Some(0);
        }
        let limited = self.spec.open_limit > 0;
        let mut switch = self.file_ios >= self.spec.select_nr
            || self.files[self.cur_file].done
            || self.is_closing(self.cur_file);
        if !switch && limited && !self.open_file(self.cur_file) {
            switch = true;
        }
        if switch {
            self.file_ios = 0;
            match self.spec.select {
                FileSelect::RoundRobin | FileSelect::Sequential => {
                    if self.spec.select == FileSelect::Sequential
                        && !self.files[self.cur_file].done
                        && (!limited || self.is_open[self.cur_file])
                    {
                        // Sequential service stays on a file until it is done.
                    } else {
                        let mut found = false;
                        for _ in 0..n {
                            self.cur_file = (self.cur_file + 1) % n;
                            if !self.files[self.cur_file].done
                                && (!limited || self.open_file(self.cur_file))
                            {
                                found = true;
                                break;
                            }
                        }
                        if !found && limited {
                            // Every open file is busy closing: any file not done.
                            self.cur_file = (0..n).find(|i| !self.files[*i].done)?;
                        }
                    }
                }
                FileSelect::Dist(_) => {
                    // Files are never done here (they start over): one draw, more while
                    // they hit closed files with no room to open them.
                    for _ in 0..100_000 {
                        if let Some(d) = &mut self.file_dist {
                            self.cur_file = d.next_file().min(n - 1);
                        }
                        // A file still closing is drawn past, as fio's draw does.
                        if !self.is_closing(self.cur_file)
                            && (!limited || self.open_file(self.cur_file))
                        {
                            break;
                        }
                    }
                }
                FileSelect::Random => {
                    // fio draws until it hits a file that is not done (and open, or with
                    // room to open it).
                    let mut found = false;
                    for _ in 0..100_000 {
                        let f = self.file_rng.below(n as u64) as usize;
                        if !self.files[f].done && (!limited || self.open_file(f)) {
                            self.cur_file = f;
                            found = true;
                            break;
                        }
                    }
                    if !found {
                        self.cur_file = (0..n).find(|i| !self.files[*i].done)?;
                    }
                }
            }
        }
        self.file_ios += 1;
        Some(self.cur_file)
    }

    /// Under [`Spec::open_limit`]: whether file `fi` is open or can be opened now (it is
    /// then counted open until it is done or the files are closed).
    fn open_file(&mut self, fi: usize) -> bool {
        if self.is_open[fi] {
            return true;
        }
        if self.nr_open >= self.spec.open_limit {
            return false;
        }
        self.is_open[fi] = true;
        self.nr_open += 1;
        true
    }

    /// A new pass or loop under sequential service: fio picks the file after the last one
    /// it switched to (its round robin's next file). Without `openfiles` that is the
    /// current file moved on by one, which the service then stays on; under `openfiles`
    /// the current file is closed, so the switch itself moves on from it.
    pub(super) fn seq_moves_on(&mut self) {
        if self.spec.select == FileSelect::Sequential && self.spec.open_limit == 0 {
            self.cur_file = (self.cur_file + 1) % self.files.len();
        }
    }

    /// File `fi` was found done (or started over) while it had requests in flight: fio
    /// logs its close and marks it closing, and closes it when they complete
    /// ([`Self::close_finished`]). Until then the service does not pick it, and under
    /// `openfiles` it still takes its place among the open files.
    #[cold]
    pub fn close_deferred(&mut self, fi: usize) {
        if self.closing.is_empty() {
            self.closing = vec![false; self.files.len()];
        }
        if fi < self.closing.len() && !self.closing[fi] {
            self.closing[fi] = true;
            self.nr_closing += 1;
            if self.spec.open_limit > 0 {
                self.nr_open += 1;
            }
        }
    }

    /// The deferred close of file `fi` happened: it may be picked (and opened) again.
    #[cold]
    pub fn close_finished(&mut self, fi: usize) {
        if self.closing.get(fi) == Some(&true) {
            self.closing[fi] = false;
            self.nr_closing -= 1;
            if self.spec.open_limit > 0 {
                self.nr_open = self.nr_open.saturating_sub(1);
            }
        }
    }

    /// Whether file `fi` is still closing.
    #[inline]
    fn is_closing(&self, fi: usize) -> bool {
        self.nr_closing > 0 && self.closing[fi]
    }

    /// The worker closed every file (a loop or a pass ended).
    pub(super) fn all_closed(&mut self) {
        self.is_open.iter_mut().for_each(|o| *o = false);
        self.nr_open = 0;
        self.closing.iter_mut().for_each(|c| *c = false);
        self.nr_closing = 0;
    }
}
