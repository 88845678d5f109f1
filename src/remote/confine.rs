//! What a remote job may do on a server (docs/multi-host.md, "Security").
//!
//! Every client, authenticated or not, is confined:
//! - nothing that runs a program (the `exec` and `cmdtime` engines, `exec_prerun` and
//!   `exec_postrun`, trigger commands) unless the server was started with `--allow-exec`;
//! - no network engine (connections from the server to other hosts, or ports it listens
//!   on) unless the server was started with `--allow-net`;
//! - nothing that changes the host's settings: `cgroup` (a cgroup made and weighted on the
//!   server) and `ioscheduler` (a device's scheduler switched) are refused;
//! - no file outside the server root (`--server-root`, else the working directory), where
//!   every path a job names is resolved as the run would open it (symbolic links followed
//!   as far as the path exists);
//! - no device node (block or character) that `--allow-device` does not name, wherever
//!   it is;
//! - no switch that writes where the client chose or opens a port (`--output`,
//!   `--metrics-listen`, ...): results go back to the client.
//!
//! The checks run on the planned job set (the files each job thread will open, after
//! `directory`, `filename_format` and `nrfiles` are applied), before anything is opened,
//! and on every file the server reads for a client (`LOAD_FILE`, `include`). Each refusal
//! names the job, the option and the rule, and goes back to the client.

use flexio_job::cli::Security;
use flexio_run::session::Prepared;
use std::path::{Component, Path, PathBuf};

/// The server's rules for remote jobs.
#[derive(Clone, Debug)]
pub struct Policy {
    /// Canonical.
    pub root: PathBuf,
    pub allow_exec: bool,
    pub allow_net: bool,
    /// Canonical paths of the devices allowed.
    pub devices: Vec<PathBuf>,
}

impl Policy {
    /// The rules the switches give; the root must exist (it becomes the server's
    /// working directory, so relative names in remote jobs are under it).
    pub fn from_switches(sec: &Security) -> Result<Policy, String> {
        let root = match &sec.server_root {
            Some(r) => std::fs::canonicalize(r)
                .map_err(|e| format!("--server-root={r}: {e}"))
                .and_then(|p| {
                    if p.is_dir() {
                        Ok(p)
                    } else {
                        Err(format!("--server-root={r}: not a directory"))
                    }
                })?,
            None => std::env::current_dir()
                .and_then(std::fs::canonicalize)
                .map_err(|e| format!("cannot find the working directory: {e}"))?,
        };
        let mut devices = Vec::new();
        for d in &sec.allow_devices {
            let p = std::fs::canonicalize(d).map_err(|e| format!("--allow-device={d}: {e}"))?;
            if !is_device(&p) {
                return Err(format!(
                    "--allow-device={d}: not a device node (name a block or character device)"
                ));
            }
            devices.push(p);
        }
        Ok(Policy {
            root,
            allow_exec: sec.allow_exec,
            allow_net: sec.allow_net,
            devices,
        })
    }

    /// Whether a remote job may touch `p` (relative to the working directory, which is
    /// the root). `Err` says why not.
    pub fn path(&self, p: &Path) -> Result<PathBuf, String> {
        let full = resolve(&self.root, p);
        if is_device(&full) {
            return if self.devices.contains(&full) {
                Ok(full)
            } else {
                Err(format!(
                    "{} is a device that the server does not allow (start it with --allow-device={})",
                    p.display(),
                    full.display()
                ))
            };
        }
        if full.starts_with(&self.root) {
            Ok(full)
        } else {
            Err(format!(
                "{} is outside the server root {} (start the server with --server-root to move it)",
                p.display(),
                self.root.display()
            ))
        }
    }

    /// Read a file for a client (`LOAD_FILE`, a job's `include`), inside the rules.
    pub fn read(&self, p: &Path) -> std::io::Result<Vec<u8>> {
        match self.path(p) {
            Ok(full) => std::fs::read(full),
            Err(e) => Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, e)),
        }
    }

    /// Every refusal for a prepared job set, one line each; empty when it may run.
    pub fn check(&self, p: &Prepared) -> Vec<String> {
        let mut out = Vec::new();
        self.check_switches(p, &mut out);
        for job in &p.set.jobs {
            let o = &job.opts;
            let name = &job.opts.name;
            let mut refuse =
                |what: &str, why: String| out.push(format!("job '{name}': {what}: {why}"));
            if !self.allow_exec {
                let exec =
                    "runs a program, which this server does not allow (start it with --allow-exec)";
                if matches!(o.ioengine.as_str(), "exec" | "cmdtime") {
                    refuse(&format!("ioengine={}", o.ioengine), exec.into());
                }
                if o.exec_prerun.is_some() {
                    refuse("exec_prerun", exec.into());
                }
                if o.exec_postrun.is_some() {
                    refuse("exec_postrun", exec.into());
                }
            }
            // The engines that reach other hosts (a name list, as fio's engine names are
            // the interface here: the policy speaks of what the user wrote).
            if !self.allow_net
                && matches!(o.ioengine.as_str(), "net" | "netsplice" | "http" | "nbd")
            {
                refuse(
                    &format!("ioengine={}", o.ioengine),
                    "uses the network from the server, which this server does not allow (start it with --allow-net)".into(),
                );
            }
            if o.cgroup.is_some() {
                refuse(
                    "cgroup",
                    "makes a cgroup on the server; remote jobs may not change the host's settings"
                        .into(),
                );
            }
            if o.sysio.ioscheduler.is_some() {
                refuse(
                    "ioscheduler",
                    "switches a device's I/O scheduler on the server; remote jobs may not change the host's settings".into(),
                );
            }
            let mut paths: Vec<(&str, String)> = Vec::new();
            if let flexio_job::sysio::MemType::Mmap { file: Some(f), .. } = &o.sysio.mem {
                paths.push(("mem", f.clone()));
            }
            for (what, v) in [
                ("directory", &o.directory),
                ("opendir", &o.opendir),
                ("write_bw_log", &o.write_bw_log),
                ("write_lat_log", &o.write_lat_log),
                ("write_iops_log", &o.write_iops_log),
                ("write_hist_log", &o.write_hist_log),
                ("interval_log", &o.interval_log),
                ("write_iolog", &o.iolog.write),
                ("replay_redirect", &o.iolog.redirect),
                ("merge_blktrace_file", &o.iolog.merge_file),
            ] {
                if let Some(v) = v {
                    // `directory` may list several, `:`-separated (fio's rule).
                    if what == "directory" {
                        paths.extend(
                            v.split(':')
                                .filter(|s| !s.is_empty())
                                .map(|s| (what, s.to_string())),
                        );
                    } else {
                        paths.push((what, v.clone()));
                    }
                }
            }
            if let Some(r) = &o.iolog.read {
                paths.extend(
                    r.split(':')
                        .filter(|s| !s.is_empty())
                        .map(|s| ("read_iolog", s.to_string())),
                );
            }
            if let Some(Some(d)) = o.engine.get::<Option<String>>("donorname") {
                paths.push(("donorname", d.clone()));
            }
            for (what, v) in paths {
                if let Err(e) = self.path(Path::new(&v)) {
                    refuse(what, e);
                }
            }
        }
        for plan in &p.plans {
            if skips_files(
                &plan.engine.name,
                plan.engine.caps.pipe || plan.engine.caps.noio,
            ) {
                continue;
            }
            for f in &plan.files {
                if let Err(e) = self.path(&f.path) {
                    out.push(format!("job '{}': file {e}", plan.name));
                }
            }
        }
        // Clones of a job (numjobs) repeat its refusals: each is said once.
        let mut seen = std::collections::HashSet::new();
        out.retain(|l| seen.insert(l.clone()));
        out
    }

    fn check_switches(&self, p: &Prepared, out: &mut Vec<String>) {
        let sw = &p.cli.switches;
        let not_here =
            |s: &str| format!("{s} is not accepted from a client (results go back to the client)");
        if sw.output.is_some() {
            out.push(not_here("--output"));
        }
        if sw.live.any() {
            out.push(not_here("--metrics-listen, --interval-stream and --live"));
        }
        if sw.save.is_some() || sw.store.is_some() || sw.report.is_some() {
            out.push(not_here("--save, --store and --report"));
        }
        if sw.inflate_log.is_some() {
            out.push(not_here("--inflate-log"));
        }
        let r = &sw.remote;
        if r.server.is_some() || !r.clients.is_empty() || r.mpi || r.daemonize.is_some() {
            out.push(not_here("--server, --client and --mpi"));
        }
        if !r.security.server_only().is_empty() || r.security.authenticates() {
            out.push("the server's own switches (--server-root, --allow-*, --auth-*, --tls-*) are not accepted from a client".into());
        }
        let x = &sw.extra;
        if !self.allow_exec && (x.trigger_cmd.is_some() || x.trigger_remote_cmd.is_some()) {
            out.push("--trigger runs a program, which this server does not allow (start it with --allow-exec)".into());
        }
        for (what, v) in [
            ("--trigger-file", &x.trigger_file),
            ("--aux-path", &x.aux_path),
        ] {
            if let Some(v) = v {
                if let Err(e) = self.path(Path::new(v)) {
                    out.push(format!("{what}: {e}"));
                }
            }
        }
        if let Some(Some(name)) = &x.bandwidth_log {
            if let Err(e) = self.path(Path::new(name)) {
                out.push(format!("--bandwidth-log: {e}"));
            }
        }
    }
}

/// Engines whose `filename` is not a file on this host (a network peer, an object name,
/// nothing at all).
fn skips_files(engine: &str, stream_or_noio: bool) -> bool {
    stream_or_noio || matches!(engine, "null" | "http" | "nbd" | "page_fault")
}

fn is_device(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p)
        .map(|m| m.file_type().is_block_device() || m.file_type().is_char_device())
        .unwrap_or(false)
}

/// `p` as the run would reach it from `cwd`: the longest part that exists with its
/// symbolic links resolved, the rest appended with `.` and `..` applied by name.
pub fn resolve(cwd: &Path, p: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    // Walk down while the path exists, canonicalising as we go.
    let mut base = PathBuf::from("/");
    let mut rest: Vec<Component> = Vec::new();
    let mut existing = true;
    for c in abs.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => {}
            Component::CurDir => {}
            Component::ParentDir => {
                // Up from a name that exists, or past the names that do not.
                if existing || rest.pop().is_none() {
                    base.pop();
                }
            }
            Component::Normal(n) => {
                if existing {
                    let next = base.join(n);
                    match std::fs::canonicalize(&next) {
                        Ok(c) => base = c,
                        Err(_) => {
                            existing = false;
                            rest.push(Component::Normal(n));
                        }
                    }
                } else {
                    rest.push(Component::Normal(n));
                }
            }
        }
    }
    for c in rest {
        base.push(c.as_os_str());
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(root: &Path) -> Policy {
        Policy {
            root: std::fs::canonicalize(root).unwrap(),
            allow_exec: false,
            allow_net: false,
            devices: Vec::new(),
        }
    }

    #[test]
    fn paths_resolve_through_links_and_dots() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir(root.join("in")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("out")).unwrap();
        let p = policy(&root);
        assert!(p.path(Path::new("in/new-file")).is_ok());
        assert!(p.path(Path::new("new-dir/x/../y")).is_ok());
        assert!(p.path(&root.join("in/../in/f")).is_ok());
        // Out through `..`, through a link, by absolute name, and by `..` on names that
        // do not exist yet.
        for bad in [
            "../x",
            "out/passwd",
            "/etc/passwd",
            "nope/../../x",
            "in/../../x",
        ] {
            let e = p.path(Path::new(bad)).unwrap_err();
            assert!(e.contains("outside the server root"), "{bad}: {e}");
        }
        // Devices need --allow-device wherever they are.
        let e = p.path(Path::new("/dev/null")).unwrap_err();
        assert!(e.contains("--allow-device=/dev/null"), "{e}");
        let mut q = p.clone();
        q.devices.push(PathBuf::from("/dev/null"));
        assert!(q.path(Path::new("/dev/null")).is_ok());
    }

    #[test]
    fn programs_and_outside_files_are_refused_with_reasons() {
        let d = tempfile::tempdir().unwrap();
        let p = policy(d.path());
        let prep = flexio_run::session::prepare_job_text(
            "[a]\nioengine=exec\nprogram=/usr/bin/touch\narguments=/tmp/x\n[b]\nioengine=null\nsize=1m\nexec_prerun=true\nwrite_bw_log=/tmp/bw\n[c]\nioengine=psync\nsize=1m\nfilename=/etc/passwd\n[d]\nioengine=psync\nsize=1m\nfilename=data\n[e]\nioengine=net\nhostname=192.0.2.1\nport=9\nrw=write\nsize=1m\n[f]\nioengine=null\nsize=1m\ncgroup=x\nioscheduler=none\nmem=mmap:/tmp/m\n",
            &[],
        )
        .unwrap();
        let r = p.check(&prep).join("\n");
        assert!(r.contains("job 'a': ioengine=exec: runs a program"), "{r}");
        assert!(r.contains("job 'b': exec_prerun: runs a program"), "{r}");
        assert!(
            r.contains("job 'b': write_bw_log: /tmp/bw is outside the server root"),
            "{r}"
        );
        assert!(
            r.contains("job 'c': file /etc/passwd is outside the server root"),
            "{r}"
        );
        assert!(!r.contains("job 'd'"), "{r}");
        assert!(r.contains("job 'e': ioengine=net: uses the network"), "{r}");
        assert!(r.contains("job 'f': cgroup: makes a cgroup"), "{r}");
        assert!(r.contains("job 'f': ioscheduler: switches"), "{r}");
        assert!(
            r.contains("job 'f': mem: /tmp/m is outside the server root"),
            "{r}"
        );
        let mut q = p.clone();
        q.allow_exec = true;
        q.allow_net = true;
        let r = q.check(&prep).join("\n");
        assert!(!r.contains("runs a program"), "{r}");
        assert!(!r.contains("uses the network"), "{r}");
    }
}
