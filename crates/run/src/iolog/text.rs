//! fio's iolog text formats: reading versions 2 and 3, writing version 3.

use super::{Act, Entry, ReplayOpts};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

pub const VER2: &str = "fio version 2 iolog";
pub const VER3: &str = "fio version 3 iolog";

/// The version named by a file's first bytes.
pub fn version(head: &[u8]) -> Option<u8> {
    if head.starts_with(VER2.as_bytes()) {
        Some(2)
    } else if head.starts_with(VER3.as_bytes()) {
        Some(3)
    } else {
        None
    }
}

fn act_of(word: &str) -> Option<Act> {
    Some(match word {
        "add" => Act::Add,
        "open" => Act::Open,
        "close" => Act::Close,
        "read" => Act::Read,
        "write" => Act::Write,
        "trim" => Act::Trim,
        "sync" => Act::Sync,
        "datasync" => Act::Datasync,
        "sync_file_range" => Act::SyncRange,
        "wait" => Act::Wait,
        _ => return None,
    })
}

/// The name fio writes for an action.
pub fn act_name(a: Act) -> &'static str {
    match a {
        Act::Add => "add",
        Act::Open => "open",
        Act::Close => "close",
        Act::Read => "read",
        Act::Write => "write",
        Act::Trim => "trim",
        Act::Sync => "sync",
        Act::Datasync => "datasync",
        Act::SyncRange => "sync_file_range",
        Act::Wait => "wait",
    }
}

/// One line split as fio's sscanf does: fields up to the first that does not convert.
struct Line<'a> {
    time: u64,
    name: &'a str,
    act: &'a str,
    offset: u64,
    len: u64,
    /// Converted fields, fio's sscanf result.
    fields: usize,
}

fn split(line: &str, v3: bool) -> Line<'_> {
    let mut it = line.split_ascii_whitespace();
    let mut l = Line {
        time: 0,
        name: "",
        act: "",
        offset: 0,
        len: 0,
        fields: 0,
    };
    if v3 {
        match it.next().and_then(|w| w.parse::<u64>().ok()) {
            Some(t) => {
                l.time = t;
                l.fields = 1;
            }
            None => return l,
        }
    }
    let Some(name) = it.next() else { return l };
    l.name = name;
    l.fields += 1;
    let Some(act) = it.next() else { return l };
    l.act = act;
    l.fields += 1;
    let Some(off) = it.next().and_then(|w| w.parse::<u64>().ok()) else {
        return l;
    };
    l.offset = off;
    l.fields += 1;
    let Some(len) = it.next().and_then(|w| w.parse::<u32>().ok()) else {
        return l;
    };
    l.len = len as u64;
    l.fields += 1;
    l
}

/// A text trace read line by line with one reused buffer.
pub struct TextReader {
    src: BufReader<std::fs::File>,
    v3: bool,
    opts: ReplayOpts,
    index: HashMap<PathBuf, u32>,
    /// Files added so far (with `replay_redirect`: whether the one file was added).
    added: Vec<bool>,
    /// The file of the last line, by name: consecutive lines mostly name the same file,
    /// which then costs a comparison instead of a hash lookup.
    last_file: Option<(String, u32)>,
    line: String,
    lineno: u64,
    last_time: u64,
    pub readonly_dropped: u64,
}

impl TextReader {
    pub fn open(
        path: &Path,
        version: u8,
        opts: ReplayOpts,
        files: &[PathBuf],
    ) -> Result<Self, String> {
        let f = std::fs::File::open(path)
            .map_err(|e| format!("cannot open iolog '{}': {e}", path.display()))?;
        let mut src = BufReader::with_capacity(64 * 1024, f);
        let mut line = String::with_capacity(512);
        // The version line.
        src.read_line(&mut line)
            .map_err(|e| format!("cannot read iolog '{}': {e}", path.display()))?;
        Ok(TextReader {
            src,
            v3: version == 3,
            index: files
                .iter()
                .enumerate()
                .map(|(i, p)| (p.clone(), i as u32))
                .collect(),
            added: vec![false; files.len()],
            last_file: None,
            opts,
            line,
            lineno: 1,
            last_time: 0,
            readonly_dropped: 0,
        })
    }

    /// The index of file `name` (the one file with `replay_redirect`); `last_file` is the
    /// reader's (a separate borrow from the line `name` is in).
    fn file_index(
        redirect: bool,
        index: &HashMap<PathBuf, u32>,
        last_file: &mut Option<(String, u32)>,
        name: &str,
    ) -> Option<u32> {
        if redirect {
            return Some(0);
        }
        if let Some((n, i)) = last_file {
            if n == name {
                return Some(*i);
            }
        }
        let i = index.get(Path::new(name)).copied()?;
        match last_file {
            Some((n, j)) => {
                n.clear();
                n.push_str(name);
                *j = i;
            }
            None => *last_file = Some((name.to_string(), i)),
        }
        Some(i)
    }

    pub fn next_entry(&mut self, notes: &mut Vec<String>) -> Result<Option<Entry>, String> {
        loop {
            self.line.clear();
            let n = self
                .src
                .read_line(&mut self.line)
                .map_err(|e| format!("iolog read error: {e}"))?;
            if n == 0 {
                return Ok(None);
            }
            self.lineno += 1;
            let l = split(&self.line, self.v3);
            let mut delay = 0;
            if self.v3 {
                if l.fields == 0 {
                    note(notes, format!("bad iolog3: {}", self.line.trim_end()));
                    continue;
                }
                if self.last_time != 0 && l.time >= self.last_time {
                    delay = self.opts.delay(l.time - self.last_time);
                }
                self.last_time = l.time;
                if l.act == "wait" {
                    note(
                        notes,
                        format!(
                            "iolog: ignoring wait command with version 3 for file {}",
                            l.name
                        ),
                    );
                    continue;
                }
            }
            let base = if self.v3 { 1 } else { 0 };
            let fields = l.fields - base.min(l.fields);
            let Some(act) = act_of(l.act) else {
                if fields >= 2 {
                    note(notes, format!("fio: bad iolog file action: {}", l.act));
                } else {
                    note(
                        notes,
                        format!(
                            "bad iolog{}: {}",
                            if self.v3 { 3 } else { 2 },
                            self.line.trim_end()
                        ),
                    );
                }
                continue;
            };
            let is_io = !matches!(act, Act::Add | Act::Open | Act::Close);
            if (is_io && fields != 4) || (!is_io && fields != 2) {
                if fields == 2 || fields == 4 {
                    note(notes, format!("fio: bad iolog file action: {}", l.act));
                } else {
                    note(
                        notes,
                        format!(
                            "bad iolog{}: {}",
                            if self.v3 { 3 } else { 2 },
                            self.line.trim_end()
                        ),
                    );
                }
                continue;
            }
            if self.opts.skip_in_iologs && self.opts.skips(act) {
                continue;
            }
            if self.opts.readonly && matches!(act, Act::Write | Act::Trim) {
                if act == Act::Write {
                    self.readonly_dropped += 1;
                }
                continue;
            }
            if act == Act::Wait && self.opts.no_stall {
                continue;
            }
            let redirect = self.opts.redirect.is_some();
            let Some(file) = Self::file_index(redirect, &self.index, &mut self.last_file, l.name)
            else {
                note(
                    notes,
                    format!(
                        "iolog line {}: file {} was never added",
                        self.lineno, l.name
                    ),
                );
                continue;
            };
            if act == Act::Add {
                let first = !self.added[file as usize];
                self.added[file as usize] = true;
                if !first && self.opts.redirect.is_some() {
                    // fio: "ignoring re-add" of the redirected file.
                    continue;
                }
            }
            let e = match act {
                Act::Wait => Entry {
                    act,
                    file,
                    offset: 0,
                    len: 0,
                    delay_us: l.offset,
                },
                _ => Entry {
                    act,
                    file,
                    offset: if is_io { self.opts.place(l.offset) } else { 0 },
                    len: l.len,
                    delay_us: delay,
                },
            };
            return Ok(Some(e));
        }
    }
}

/// Keep at most a screenful of repeated messages.
fn note(notes: &mut Vec<String>, m: String) {
    if notes.len() < 20 {
        notes.push(m);
    }
}

/// The files a text trace adds, in order of their `add` lines.
pub fn files(path: &Path, version: u8, opts: &ReplayOpts) -> Result<Vec<PathBuf>, String> {
    if let Some(r) = &opts.redirect {
        return Ok(vec![r.clone()]);
    }
    let f = std::fs::File::open(path)
        .map_err(|e| format!("cannot open iolog '{}': {e}", path.display()))?;
    let mut out: Vec<PathBuf> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for line in BufReader::new(f).lines().skip(1) {
        let line = line.map_err(|e| format!("iolog read error: {e}"))?;
        let l = split(&line, version == 3);
        let fields = l.fields - (if version == 3 { 1 } else { 0 }).min(l.fields);
        if fields == 2 && l.act == "add" && seen.insert(l.name.to_string()) {
            out.push(PathBuf::from(l.name));
        }
    }
    Ok(out)
}

/// A decimal number into `buf` without the formatting machinery; returns the digits.
pub fn decimal(mut v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &buf[i..]
}

/// Write one version-3 line: `<µs> <file> <act>[ <offset> <len>]`.
pub fn write_line<W: Write>(
    w: &mut W,
    time_us: u64,
    name: &[u8],
    act: Act,
    io: Option<(u64, u64)>,
) -> std::io::Result<()> {
    let mut b = [0u8; 20];
    w.write_all(decimal(time_us, &mut b))?;
    w.write_all(b" ")?;
    w.write_all(name)?;
    w.write_all(b" ")?;
    w.write_all(act_name(act).as_bytes())?;
    if let Some((off, len)) = io {
        w.write_all(b" ")?;
        w.write_all(decimal(off, &mut b))?;
        w.write_all(b" ")?;
        w.write_all(decimal(len, &mut b))?;
    }
    w.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iolog::{scan, ReplayOpts};

    fn trace(text: &str) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.log");
        std::fs::write(&p, text).unwrap();
        (d, p)
    }

    fn entries(p: &Path, opts: &ReplayOpts) -> Vec<Entry> {
        let info = scan(p, opts).unwrap();
        let mut r = crate::iolog::open(p, opts, &info.files).unwrap();
        let mut out = Vec::new();
        let mut notes = Vec::new();
        while let Some(e) = r.next_entry(&mut notes).unwrap() {
            out.push(e);
        }
        out
    }

    #[test]
    fn version3_delays_scale_and_skip() {
        let (_d, p) = trace(
            "fio version 3 iolog\n10 /a add\n20 /a open\n120 /a read 8192 4096\n400 /a write 4096 512\n1000 /a read 12288 4096\n1100 /a close\n",
        );
        let e = entries(&p, &ReplayOpts::default());
        assert_eq!(e.len(), 6);
        assert_eq!(
            (e[2].act, e[2].offset, e[2].len, e[2].delay_us),
            (Act::Read, 8192, 4096, 100)
        );
        assert_eq!(e[3].delay_us, 280);
        let o = ReplayOpts {
            time_scale: 200,
            scale: 2,
            align: 4096,
            skip: 2,
            ..ReplayOpts::default()
        };
        let e = entries(&p, &o);
        let io: Vec<_> = e.iter().filter(|e| e.act.ddir().is_some()).collect();
        assert_eq!(io.len(), 2, "writes skipped");
        assert_eq!(io[0].offset, 4096);
        assert_eq!(io[0].delay_us, 50);
        // The skipped write's time still counts as the previous time.
        assert_eq!((io[1].offset, io[1].delay_us), (4096, 300));
        let ns = ReplayOpts {
            no_stall: true,
            ..ReplayOpts::default()
        };
        assert!(entries(&p, &ns).iter().all(|e| e.delay_us == 0));
    }

    #[test]
    fn version2_files_waits_and_bad_lines() {
        let (_d, p) = trace(
            "fio version 2 iolog\n/a add\n/b add\n/a open\n/b open\n/b write 0 4096\n/a wait 5 0\n/a read 4096 4096\n/a frob 0 1\n/a read x\n/b sync 0 0\n/a close\n/b close\n",
        );
        let info = scan(&p, &ReplayOpts::default()).unwrap();
        assert_eq!(info.files, vec![PathBuf::from("/a"), PathBuf::from("/b")]);
        assert_eq!(info.ios, [1, 1, 0]);
        assert_eq!(info.syncs, 1);
        assert_eq!(info.waits, 1);
        assert_eq!(info.max_end, vec![8192, 4096]);
        assert_eq!(info.notes.len(), 2, "{:?}", info.notes);
        let e = entries(&p, &ReplayOpts::default());
        assert_eq!((e[4].act, e[4].file, e[4].offset), (Act::Write, 1, 0));
        assert_eq!((e[5].act, e[5].delay_us), (Act::Wait, 5));
        let red = ReplayOpts {
            redirect: Some("/c".into()),
            ..ReplayOpts::default()
        };
        let e = entries(&p, &red);
        assert!(e.iter().all(|e| e.file == 0));
        assert_eq!(e.iter().filter(|e| e.act == Act::Add).count(), 1);
    }

    #[test]
    fn lines_naming_files_by_other_spellings_find_them() {
        // The last line's file is remembered by its spelling; another spelling of the same
        // path is still that file, as fio's lookup finds it.
        let (_d, p) = trace(
            "fio version 2 iolog\n/a add\n/b add\n/a read 0 512\n/a read 512 512\n/b read 0 512\n/a/ read 1024 512\n//b read 512 512\n/b read 1024 512\n/c read 0 512\n/a read 1536 512\n",
        );
        let e: Vec<(u32, u64)> = entries(&p, &ReplayOpts::default())
            .iter()
            .filter(|e| e.act == Act::Read)
            .map(|e| (e.file, e.offset))
            .collect();
        assert_eq!(
            e,
            [
                (0, 0),
                (0, 512),
                (1, 0),
                (0, 1024),
                (1, 512),
                (1, 1024),
                (0, 1536)
            ]
        );
    }

    #[test]
    fn readonly_drops_writes() {
        let (_d, p) = trace("fio version 2 iolog\n/a add\n/a write 0 4096\n/a read 0 4096\n");
        let o = ReplayOpts {
            readonly: true,
            ..ReplayOpts::default()
        };
        let info = scan(&p, &o).unwrap();
        assert_eq!(info.ios, [1, 0, 0]);
        assert!(info.notes.iter().any(|n| n.contains("1 writes")));
    }

    #[test]
    fn lines_are_written_as_fio_writes_them() {
        let mut v = Vec::new();
        write_line(&mut v, 164, b"/tmp/f", Act::Read, Some((45056, 4096))).unwrap();
        write_line(&mut v, 0, b"/tmp/f", Act::Add, None).unwrap();
        assert_eq!(v, b"164 /tmp/f read 45056 4096\n0 /tmp/f add\n");
        let mut b = [0u8; 20];
        assert_eq!(decimal(u64::MAX, &mut b), u64::MAX.to_string().as_bytes());
    }
}
