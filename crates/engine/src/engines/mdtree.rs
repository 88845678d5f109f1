//! `mdtree`: a metadata workload over a directory tree (the operations mdtest and fileop
//! time, with flexio's statistics per operation). Each loop of the job runs one whole life
//! cycle of a tree of `fanout` subdirectories per directory, `tree_depth` levels below its
//! root and `files_per_dir` files in every directory, made under `directory` as
//! `mdtree.<job>.<clone>`:
//!
//! | phase | per | operation (kind) |
//! |---|---|---|
//! | build | directory, top-down | `mkdir` |
//! | create | file | `create` (open O_CREAT\|O_EXCL\|O_WRONLY), `write` (`create_size` bytes, when set), `close` |
//! | dirfsync | directory | `dirfsync` (fsync of the directory; its open and close are not timed) |
//! | stat, access, chmod | file | `stat`, `access` (R_OK\|W_OK), `chmod` (0600) |
//! | open | file | `open` (O_RDONLY), `close` |
//! | readdir | directory | `readdir` (the whole listing; its open and close are not timed; the entries found are checked) |
//! | link, symlink, rename | file | `link` (`<f>.l`), `symlink` (`<f>.s` → `<f>`), `rename` (`<f>` → `<f>.r`) |
//! | unlink | file | `unlink` of each of its names |
//! | remove | directory, bottom-up | `rmdir` |
//!
//! `md_ops` chooses the optional phases (dirfsync, stat, access, chmod, open, readdir,
//! link, symlink, rename). Every request of the job is one timed system call (a readdir:
//! the getdents calls of one listing); paths are built and auxiliary descriptors opened
//! in [`Engine::untimed`], before the request's start stamp, into buffers sized when the
//! job starts, so the timed path does not allocate. The core records each request in the
//! job's statistics and in its kind's ([`Caps::op_kinds`]). When the job ends, whatever is
//! left of the tree (after an error) is removed.

use crate::api::{Caps, Engine, EngineConfig, EngineDef, IoReq, Queued};
use flexio_job::engine_opts::parse;
use flexio_job::table::{Kind, OptDef};
use rustix::fd::OwnedFd;
use rustix::fs::{Access, Mode, OFlags};
use std::ffi::CStr;
use std::io;
use std::mem::MaybeUninit;
use std::path::PathBuf;

/// The operation kinds, in report order (indexes are the `K_*` constants).
pub const KINDS: &[&str] = &[
    "mkdir", "create", "write", "close", "dirfsync", "stat", "access", "chmod", "open",
    "readdir", "link", "symlink", "rename", "unlink", "rmdir",
];
const K_MKDIR: u8 = 0;
const K_CREATE: u8 = 1;
const K_WRITE: u8 = 2;
const K_CLOSE: u8 = 3;
const K_DIRFSYNC: u8 = 4;
const K_STAT: u8 = 5;
const K_ACCESS: u8 = 6;
const K_CHMOD: u8 = 7;
const K_OPEN: u8 = 8;
const K_READDIR: u8 = 9;
const K_LINK: u8 = 10;
const K_SYMLINK: u8 = 11;
const K_RENAME: u8 = 12;
const K_UNLINK: u8 = 13;
const K_RMDIR: u8 = 14;

/// The optional phases `md_ops` can choose, by name (their bit is `1 << kind`).
const OPTIONAL: &[(&str, u8)] = &[
    ("dirfsync", K_DIRFSYNC),
    ("stat", K_STAT),
    ("access", K_ACCESS),
    ("chmod", K_CHMOD),
    ("open", K_OPEN),
    ("readdir", K_READDIR),
    ("link", K_LINK),
    ("symlink", K_SYMLINK),
    ("rename", K_RENAME),
];

/// The optional phases of a job (bit `1 << kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpSet(pub u16);

impl OpSet {
    pub const ALL: OpSet = OpSet(
        1 << K_DIRFSYNC
            | 1 << K_STAT
            | 1 << K_ACCESS
            | 1 << K_CHMOD
            | 1 << K_OPEN
            | 1 << K_READDIR
            | 1 << K_LINK
            | 1 << K_SYMLINK
            | 1 << K_RENAME,
    );

    pub fn has(self, k: u8) -> bool {
        self.0 & (1 << k) != 0
    }

    /// `all`, `none`, or names separated by `:` or `,`.
    pub fn parse(v: &str) -> Result<OpSet, String> {
        match v.trim() {
            "all" => return Ok(OpSet::ALL),
            "none" | "" => return Ok(OpSet(0)),
            _ => {}
        }
        let mut set = 0u16;
        for name in v.split([':', ',']).map(str::trim).filter(|n| !n.is_empty()) {
            match OPTIONAL.iter().find(|(n, _)| *n == name) {
                Some((_, k)) => set |= 1 << k,
                None => {
                    let names: Vec<&str> = OPTIONAL.iter().map(|(n, _)| *n).collect();
                    return Err(format!(
                        "'{name}' is none of {}, all, none",
                        names.join(", ")
                    ));
                }
            }
        }
        Ok(OpSet(set))
    }
}

flexio_job::engine_options! {
    /// mdtree's options.
    pub struct MdTreeOpts; rows OPTIONS;
    /// Subdirectories per directory.
    fanout: u32 = 4,
        "fanout", Kind::Int { min: 1, max: 1 << 20 }, "4",
        "mdtree: subdirectories per directory",
        |v, kb| parse::int(v, kb, 1, 1 << 20).map(|n| n as u32);
    /// Levels below the root (0: the root alone).
    tree_depth: u32 = 2,
        "tree_depth", Kind::Int { min: 0, max: 64 }, "2",
        "mdtree: directory levels below the tree's root",
        |v, kb| parse::int(v, kb, 0, 64).map(|n| n as u32);
    /// Files in every directory.
    files_per_dir: u32 = 8,
        "files_per_dir", Kind::Int { min: 0, max: 1 << 24 }, "8",
        "mdtree: files in every directory of the tree",
        |v, kb| parse::int(v, kb, 0, 1 << 24).map(|n| n as u32);
    /// Bytes written into each file at its creation.
    create_size: u64 = 0,
        "create_size", Kind::Int { min: 0, max: 1 << 30 }, "0",
        "mdtree: bytes written into each file when it is created (a timed write)",
        |v, kb| parse::int(v, kb, 0, 1 << 30).map(|n| n as u64);
    /// The optional phases.
    md_ops: OpSet = OpSet::ALL,
        "md_ops", Kind::Str, "all",
        "mdtree: optional operations, ':'-separated (dirfsync, stat, access, chmod, open, readdir, link, symlink, rename), all or none",
        |v, _| OpSet::parse(flexio_job::table::req(v)?);
}

/// Most directories and files a tree may have.
const MAX_DIRS: u64 = 1 << 24;
const MAX_FILES: u64 = 1 << 28;

/// The number of directories and files of a tree (None when too large).
pub fn tree_counts(o: &MdTreeOpts) -> Option<(u64, u64)> {
    let mut dirs: u64 = 0;
    let mut level: u64 = 1;
    for i in 0..=o.tree_depth {
        if i > 0 {
            level = level.checked_mul(o.fanout as u64)?;
        }
        dirs = dirs.checked_add(level)?;
        if dirs > MAX_DIRS {
            return None;
        }
    }
    let files = dirs.checked_mul(o.files_per_dir as u64)?;
    (files <= MAX_FILES).then_some((dirs, files))
}

/// The phases of a life cycle, in order.
const PHASES: &[u8] = &[
    K_MKDIR, K_CREATE, K_DIRFSYNC, K_STAT, K_ACCESS, K_CHMOD, K_OPEN, K_READDIR, K_LINK,
    K_SYMLINK, K_RENAME, K_UNLINK, K_RMDIR,
];

/// Where the life cycle is: phase (index into `phases`), item (directory or file) and
/// step within the item.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Cursor {
    phase: usize,
    item: u64,
    step: u8,
}

pub struct MdTree {
    opts: MdTreeOpts,
    root: PathBuf,
    /// Every directory's path (pre-order: parents first), NUL-terminated, in one buffer.
    dir_bytes: Vec<u8>,
    dirs: Vec<(u32, u32)>,
    /// Level of each directory (0 = root).
    levels: Vec<u8>,
    nfiles: u64,
    phases: Vec<u8>,
    cur: Cursor,
    /// The current request: its kind, its path (NUL-terminated), and the other path of
    /// link (the new name), symlink (the link's target) and rename (the new name).
    kind: u8,
    path: Vec<u8>,
    other_path: Vec<u8>,
    /// The file open between create/write/close and open/close.
    fd: Option<OwnedFd>,
    /// The directory open for dirfsync or readdir (untimed).
    aux: Option<OwnedFd>,
    data: Vec<u8>,
    dirbuf: Vec<MaybeUninit<u8>>,
    /// A readdir found other entries than the tree has.
    mismatch: Option<(u64, u64)>,
    root_exists: bool,
    built: Result<(), String>,
}

/// Append `n` in decimal without allocating.
fn push_num(v: &mut Vec<u8>, mut n: u64) {
    let mut d = [0u8; 20];
    let mut i = d.len();
    loop {
        i -= 1;
        d[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    v.extend_from_slice(&d[i..]);
}

fn cstr(v: &[u8]) -> &CStr {
    CStr::from_bytes_with_nul(v).unwrap_or(c"")
}

fn errno_of(e: rustix::io::Errno) -> i64 {
    -(e.raw_os_error() as i64)
}

impl MdTree {
    fn dir(&self, i: usize) -> &[u8] {
        let (s, l) = self.dirs[i];
        &self.dir_bytes[s as usize..(s + l) as usize]
    }

    /// Lay out every directory's path (pre-order) and size the buffers.
    fn build_tree(&mut self) -> Result<(), String> {
        let (ndirs, nfiles) = tree_counts(&self.opts).ok_or_else(|| {
            format!(
                "mdtree: a tree of fan-out {}, depth {} and {} files per directory is too large (at most {MAX_DIRS} directories and {MAX_FILES} files)",
                self.opts.fanout, self.opts.tree_depth, self.opts.files_per_dir
            )
        })?;
        self.nfiles = nfiles;
        let root = self.root.as_os_str().as_encoded_bytes().to_vec();
        if root.contains(&0) {
            return Err("mdtree: the directory name contains a NUL byte".into());
        }
        let mut stack: Vec<(Vec<u8>, u8)> = vec![(root, 0)];
        while let Some((p, level)) = stack.pop() {
            let start = self.dir_bytes.len() as u32;
            self.dir_bytes.extend_from_slice(&p);
            self.dirs.push((start, p.len() as u32));
            self.levels.push(level);
            if (level as u32) < self.opts.tree_depth {
                for c in (0..self.opts.fanout).rev() {
                    let mut q = p.clone();
                    q.extend_from_slice(b"/d");
                    push_num(&mut q, c as u64);
                    stack.push((q, level + 1));
                }
            }
        }
        debug_assert_eq!(self.dirs.len() as u64, ndirs);
        let longest = self.dirs.iter().map(|d| d.1).max().unwrap_or(0) as usize;
        // "/f" + up to 10 digits + ".r" + NUL.
        self.path = Vec::with_capacity(longest + 32);
        self.other_path = Vec::with_capacity(longest + 32);
        // create_size is at most 1 GiB (its option row), which every target addresses.
        let create_size = usize::try_from(self.opts.create_size).map_err(|_| {
            format!(
                "create_size={} is more than this system can address",
                self.opts.create_size
            )
        })?;
        self.data = vec![0x5a; create_size];
        self.dirbuf = vec![MaybeUninit::uninit(); 64 * 1024];
        Ok(())
    }

    /// Items of a phase: directories or files.
    fn items(&self, phase: u8) -> u64 {
        match phase {
            K_MKDIR | K_DIRFSYNC | K_READDIR | K_RMDIR => self.dirs.len() as u64,
            _ => self.nfiles,
        }
    }

    /// Steps of one item of a phase.
    fn steps(&self, phase: u8) -> u8 {
        let ops = self.opts.md_ops;
        match phase {
            K_CREATE => 2 + (self.opts.create_size > 0) as u8,
            K_OPEN => 2,
            K_UNLINK => 1 + ops.has(K_LINK) as u8 + ops.has(K_SYMLINK) as u8,
            _ => 1,
        }
    }

    /// The kind of a phase's step.
    fn kind_of(&self, phase: u8, step: u8) -> u8 {
        match (phase, step) {
            (K_CREATE, 0) => K_CREATE,
            (K_CREATE, 1) if self.opts.create_size > 0 => K_WRITE,
            (K_CREATE, _) => K_CLOSE,
            (K_OPEN, 1) => K_CLOSE,
            (p, _) => p,
        }
    }

    fn advance(&mut self) {
        let phase = self.phases[self.cur.phase];
        self.cur.step += 1;
        if self.cur.step >= self.steps(phase) {
            self.cur.step = 0;
            self.cur.item += 1;
            if self.cur.item >= self.items(phase) {
                self.cur.item = 0;
                self.cur.phase += 1;
                // Skip phases without items (a tree without files).
                while self.cur.phase < self.phases.len()
                    && self.items(self.phases[self.cur.phase]) == 0
                {
                    self.cur.phase += 1;
                }
            }
        }
    }

    /// A file's path into `v`: its directory, `/f<n>`, and a suffix (`.l`, `.s`, `.r`).
    fn file_path(&self, v: &mut Vec<u8>, file: u64, suffix: &[u8]) {
        let per = self.opts.files_per_dir as u64;
        let d = (file / per) as usize;
        v.clear();
        v.extend_from_slice(self.dir(d));
        v.extend_from_slice(b"/f");
        push_num(v, file % per);
        v.extend_from_slice(suffix);
        v.push(0);
    }

    /// The directory of a directory phase's item (bottom-up for rmdir).
    fn dir_item(&self, phase: u8, item: u64) -> usize {
        if phase == K_RMDIR {
            self.dirs.len() - 1 - item as usize
        } else {
            item as usize
        }
    }

    /// Entries a directory holds when it is listed (its files and subdirectories).
    fn expected_entries(&self, dir: usize) -> u64 {
        let subdirs = if (self.levels[dir] as u32) < self.opts.tree_depth {
            self.opts.fanout as u64
        } else {
            0
        };
        self.opts.files_per_dir as u64 + subdirs
    }

    /// Prepare the request at the cursor: paths, and the directory descriptor of a
    /// dirfsync or readdir.
    fn prepare(&mut self) -> io::Result<()> {
        self.aux = None;
        if self.cur.phase >= self.phases.len() {
            return Ok(());
        }
        let phase = self.phases[self.cur.phase];
        let (item, step) = (self.cur.item, self.cur.step);
        self.kind = self.kind_of(phase, step);
        let mut a = std::mem::take(&mut self.path);
        let mut b = std::mem::take(&mut self.other_path);
        match phase {
            K_MKDIR | K_DIRFSYNC | K_READDIR | K_RMDIR => {
                a.clear();
                a.extend_from_slice(self.dir(self.dir_item(phase, item)));
                a.push(0);
            }
            K_LINK => {
                self.file_path(&mut a, item, b"");
                self.file_path(&mut b, item, b".l");
            }
            K_SYMLINK => {
                // The link points at the file's own name, in the same directory.
                b.clear();
                b.push(b'f');
                push_num(&mut b, item % self.opts.files_per_dir as u64);
                b.push(0);
                self.file_path(&mut a, item, b".s");
            }
            K_RENAME => {
                self.file_path(&mut a, item, b"");
                self.file_path(&mut b, item, b".r");
            }
            K_UNLINK => {
                let ops = self.opts.md_ops;
                let mut names: [&[u8]; 3] = [b"", b"", b""];
                let mut n = 0;
                names[n] = if ops.has(K_RENAME) { b".r" } else { b"" };
                n += 1;
                if ops.has(K_LINK) {
                    names[n] = b".l";
                    n += 1;
                }
                if ops.has(K_SYMLINK) {
                    names[n] = b".s";
                }
                self.file_path(&mut a, item, names[step as usize]);
            }
            _ => self.file_path(&mut a, item, b""),
        }
        self.path = a;
        self.other_path = b;
        if phase == K_DIRFSYNC || phase == K_READDIR {
            let fd = rustix::fs::open(
                cstr(&self.path),
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            self.aux = Some(fd);
        }
        Ok(())
    }

    /// The timed operation at the cursor: 0 or `-errno`.
    fn run(&mut self) -> i64 {
        let phase = self.phases[self.cur.phase];
        let a = cstr(&self.path);
        let r = match self.kind {
            K_MKDIR => rustix::fs::mkdir(a, Mode::from_raw_mode(0o755)),
            K_CREATE => rustix::fs::open(
                a,
                OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o644),
            )
            .map(|fd| self.fd = Some(fd)),
            K_WRITE => match &self.fd {
                Some(fd) => {
                    let mut done = 0;
                    let mut r = Ok(());
                    while done < self.data.len() {
                        match rustix::io::write(fd, &self.data[done..]) {
                            Ok(0) => {
                                r = Err(rustix::io::Errno::NOSPC);
                                break;
                            }
                            Ok(n) => done += n,
                            Err(rustix::io::Errno::INTR) => {}
                            Err(e) => {
                                r = Err(e);
                                break;
                            }
                        }
                    }
                    r
                }
                None => Err(rustix::io::Errno::BADF),
            },
            K_CLOSE => {
                // Dropping the descriptor is close(2); its result is not reported.
                self.fd = None;
                Ok(())
            }
            K_DIRFSYNC => match &self.aux {
                Some(fd) => rustix::fs::fsync(fd),
                None => Err(rustix::io::Errno::BADF),
            },
            K_STAT => rustix::fs::stat(a).map(|_| ()),
            K_ACCESS => rustix::fs::access(a, Access::READ_OK | Access::WRITE_OK),
            K_CHMOD => rustix::fs::chmod(a, Mode::from_raw_mode(0o600)),
            K_OPEN => rustix::fs::open(a, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
                .map(|fd| self.fd = Some(fd)),
            K_READDIR => self.list(),
            K_LINK => rustix::fs::link(a, cstr(&self.other_path)),
            K_SYMLINK => rustix::fs::symlink(cstr(&self.other_path), a),
            K_RENAME => rustix::fs::rename(a, cstr(&self.other_path)),
            K_UNLINK => rustix::fs::unlink(a),
            _ => rustix::fs::rmdir(a),
        };
        match r {
            Ok(()) => {
                if phase == K_MKDIR && self.cur.item == 0 {
                    self.root_exists = true;
                }
                if phase == K_RMDIR && self.cur.item + 1 == self.dirs.len() as u64 {
                    self.root_exists = false;
                }
                0
            }
            Err(e) => errno_of(e),
        }
    }

    /// readdir: every entry of the open directory; the count is checked.
    fn list(&mut self) -> rustix::io::Result<()> {
        let Some(fd) = &self.aux else {
            return Err(rustix::io::Errno::BADF);
        };
        let mut n: u64 = 0;
        let mut it = rustix::fs::RawDir::new(fd, &mut self.dirbuf);
        while let Some(e) = it.next() {
            let e = e?;
            let name = e.file_name().to_bytes();
            if name != b"." && name != b".." {
                n += 1;
            }
        }
        let want = self.expected_entries(self.cur.item as usize);
        if n != want {
            self.mismatch = Some((n, want));
            return Err(rustix::io::Errno::IO);
        }
        Ok(())
    }
}

impl EngineDef for MdTree {
    const NAME: &'static str = "mdtree";
    const HELP: &'static str =
        "Metadata life cycle of a directory tree (mkdir, create, stat, ..., rmdir), timed per operation";
    const OPTIONS: &'static [&'static [OptDef]] = &[OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        let opts = MdTreeOpts::from_values(&cfg.values);
        let dir = cfg.directory.clone().unwrap_or_else(|| ".".into());
        let root = PathBuf::from(dir).join(format!("mdtree.{}.{}", cfg.job_name, cfg.subjob));
        let phases = PHASES
            .iter()
            .copied()
            .filter(|k| !OPTIONAL.iter().any(|(_, o)| o == k) || opts.md_ops.has(*k))
            .collect();
        MdTree {
            opts,
            root,
            dir_bytes: Vec::new(),
            dirs: Vec::new(),
            levels: Vec::new(),
            nfiles: 0,
            phases,
            cur: Cursor::default(),
            kind: 0,
            path: Vec::new(),
            other_path: Vec::new(),
            fd: None,
            aux: None,
            data: Vec::new(),
            dirbuf: Vec::new(),
            mismatch: None,
            root_exists: false,
            built: Ok(()),
        }
    }
    fn probe(cfg: &EngineConfig) -> Result<(), String> {
        if cfg.filename.is_some() {
            return Err(
                "mdtree: the tree is made under directory= (as mdtree.<job>.<clone>); filename is not used by this engine"
                    .into(),
            );
        }
        let o = MdTreeOpts::from_values(&cfg.values);
        tree_counts(&o).map(|_| ()).ok_or_else(|| {
            format!(
                "mdtree: a tree of fan-out {}, depth {} and {} files per directory is too large (at most {MAX_DIRS} directories and {MAX_FILES} files)",
                o.fanout, o.tree_depth, o.files_per_dir
            )
        })
    }
}

impl Engine for MdTree {
    fn caps(&self) -> Caps {
        Caps {
            syncio: true,
            diskless: true,
            no_fd: true,
            noio: true,
            changes_names: true,
            op_kinds: KINDS,
            untimed: true,
            ..Caps::default()
        }
    }
    fn init(&mut self) -> io::Result<()> {
        self.built = self.build_tree();
        self.built
            .clone()
            .map_err(|m| io::Error::new(io::ErrorKind::InvalidInput, m))
    }
    fn init_notes(&self) -> Vec<String> {
        let o = &self.opts;
        let ops: Vec<&str> = self.phases.iter().map(|k| KINDS[*k as usize]).collect();
        vec![format!(
            "mdtree: {}: fan-out {}, depth {}, {} files per directory ({} directories, {} files{}): {}",
            self.root.display(),
            o.fanout,
            o.tree_depth,
            o.files_per_dir,
            self.dirs.len(),
            self.nfiles,
            if o.create_size > 0 {
                format!(", {} bytes written at create", o.create_size)
            } else {
                String::new()
            },
            ops.join(", ")
        )]
    }
    #[inline]
    fn untimed(&mut self) -> io::Result<()> {
        self.prepare()
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        if self.cur.phase >= self.phases.len() {
            // The tree's life cycle is over: the loop ends; the next one starts again.
            self.cur = Cursor::default();
            return Queued::LoopDone;
        }
        let r = self.run();
        // On to the next operation even after a failure (continue_on_error goes on with
        // the rest; otherwise the job ends and the tree is removed).
        self.advance();
        Queued::Completed(if r < 0 { r } else { io.len as i64 })
    }
    #[inline]
    fn last_kind(&self) -> usize {
        self.kind as usize
    }
    fn failed_op(&self) -> Option<String> {
        let path = String::from_utf8_lossy(self.path.strip_suffix(b"\0").unwrap_or(&self.path));
        let kind = KINDS[self.kind as usize];
        Some(match (self.kind, self.mismatch) {
            (K_READDIR, Some((n, want))) => {
                format!("readdir of {path} ({n} entries found, {want} expected)")
            }
            (K_LINK | K_RENAME, _) => format!(
                "{kind} of {path} to {}",
                String::from_utf8_lossy(self.other_path.strip_suffix(b"\0").unwrap_or(&self.other_path))
            ),
            _ => format!("{kind} of {path}"),
        })
    }
    fn wrap_up(&mut self) -> io::Result<()> {
        self.fd = None;
        self.aux = None;
        if !self.root_exists {
            return Ok(());
        }
        self.root_exists = false;
        match std::fs::remove_dir_all(&self.root) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io::Error::new(
                e.kind(),
                format!("removing what is left of {}: {e}", self.root.display()),
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(dir: &std::path::Path, opts: &[(&str, &str)]) -> EngineConfig {
        let mut o = flexio_job::JobOptions::default();
        for (k, v) in opts {
            let row = OPTIONS.iter().find(|r| r.name == *k).unwrap();
            (row.set)(&mut o, Some(v)).unwrap();
        }
        EngineConfig {
            values: o.engine.clone(),
            job_name: "t".into(),
            directory: Some(dir.display().to_string()),
            ..EngineConfig::default()
        }
    }

    /// Run one life cycle; the count of each kind.
    fn cycle(e: &mut MdTree) -> [u64; 15] {
        let mut n = [0u64; 15];
        let req = IoReq {
            idx: 0,
            op: crate::api::Op::Read,
            file: 0,
            fd: -1,
            offset: 0,
            buf: std::ptr::null_mut(),
            len: 4096,
            ioprio: 0,
            sync_flags: 0,
        };
        loop {
            e.untimed().unwrap();
            match e.queue(&req) {
                Queued::LoopDone => return n,
                Queued::Completed(r) => {
                    assert!(r > 0, "{:?} {r}", e.failed_op());
                    n[e.last_kind()] += 1;
                }
                q => panic!("{q:?}"),
            }
        }
    }

    #[test]
    fn counts_of_a_life_cycle() {
        let d = tempfile::tempdir().unwrap();
        let c = cfg(d.path(), &[("fanout", "3"), ("tree_depth", "2"), ("files_per_dir", "5"), ("create_size", "100")]);
        let mut e = MdTree::build(&c);
        e.init().unwrap();
        let (dirs, files) = (1 + 3 + 9, 13 * 5);
        let n = cycle(&mut e);
        let want = [
            dirs, files, files, 2 * files, dirs, files, files, files, files, dirs, files, files,
            files, 3 * files, dirs,
        ];
        assert_eq!(n, want);
        assert!(!e.root.exists(), "the tree is gone");
        // A second loop runs the same cycle again.
        assert_eq!(cycle(&mut e), want);
        e.wrap_up().unwrap();
    }

    #[test]
    fn fewer_ops_and_no_files() {
        let d = tempfile::tempdir().unwrap();
        let c = cfg(d.path(), &[("md_ops", "stat:rename"), ("files_per_dir", "2"), ("tree_depth", "1"), ("fanout", "2")]);
        let mut e = MdTree::build(&c);
        e.init().unwrap();
        let n = cycle(&mut e);
        assert_eq!(n, [3, 6, 0, 6, 0, 6, 0, 0, 0, 0, 0, 0, 6, 6, 3]);
        let c = cfg(d.path(), &[("files_per_dir", "0"), ("tree_depth", "0")]);
        let mut e = MdTree::build(&c);
        e.init().unwrap();
        let n = cycle(&mut e);
        assert_eq!((n[K_MKDIR as usize], n[K_READDIR as usize], n[K_RMDIR as usize]), (1, 1, 1));
        assert!(OpSet::parse("stat:bogus").unwrap_err().contains("bogus"));
    }

    #[test]
    fn an_error_leaves_nothing_behind() {
        let d = tempfile::tempdir().unwrap();
        let c = cfg(d.path(), &[]);
        let mut e = MdTree::build(&c);
        e.init().unwrap();
        let req = IoReq {
            idx: 0,
            op: crate::api::Op::Read,
            file: 0,
            fd: -1,
            offset: 0,
            buf: std::ptr::null_mut(),
            len: 4096,
            ioprio: 0,
            sync_flags: 0,
        };
        // Build part of the tree, then plant a name the create phase will meet.
        for _ in 0..21 {
            e.untimed().unwrap();
            assert_eq!(e.queue(&req), Queued::Completed(4096));
        }
        std::fs::write(e.root.join("f0"), b"x").unwrap();
        e.untimed().unwrap();
        assert_eq!(e.queue(&req), Queued::Completed(-(libc::EEXIST as i64)));
        assert_eq!(e.failed_op().unwrap(), format!("create of {}/f0", e.root.display()));
        e.wrap_up().unwrap();
        assert!(!e.root.exists());
        assert!(MdTree::probe(&cfg(d.path(), &[("fanout", "1000"), ("tree_depth", "9")])).is_err());
    }
}
