//! Stage two: apply raw sections (command line and job files) to typed job options with
//! fio's inheritance rules, and assign reporting groups.

use crate::cli::Cli;
use crate::compat::{self, Compat};
use crate::error::{suggest, JobError, Origin};
use crate::jobfile::{parse_job_file, RawOpt, RawSection, Reader};
use crate::options::JobOptions;
use crate::subst::{substitute, Host};
use crate::table::{self, Catalog, OptDef};
use std::path::Path;

/// Options as they will be echoed in JSON `job options` (canonical name, value as given
/// after substitution; empty for a bare key).
pub type Echo = Vec<(String, String)>;

/// Options of one scope (the global defaults or a job) plus what is needed to report on them.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    pub opts: JobOptions,
    pub echo: Echo,
    /// Engine-private options applied (inherited ones included), to check ownership.
    engine_opts: Vec<(&'static str, Vec<&'static str>, Origin, String)>,
    /// How many of `engine_opts` came from the global scope: those apply only to jobs of
    /// their engine (fio: `[global] ioengine=e4defrag donorname=…` and a job with
    /// `ioengine=libaio` is fine), the job's own must fit its engine.
    inherited: usize,
}

impl Scope {
    /// Fresh defaults for the fio `compat` reproduces (setters whose accepted values
    /// differ by fio version read it from the options).
    fn at(compat: Compat) -> Scope {
        let mut s = Scope::default();
        s.opts.compat = compat;
        s
    }
}

/// One job definition (before `numjobs` cloning).
#[derive(Clone, Debug)]
pub struct JobDef {
    pub opts: JobOptions,
    /// Options set in the job's own section / after its `--name` (JSON `job options`).
    pub echo: Echo,
    pub origin: Origin,
    /// Reporting group.
    pub groupid: u32,
}

/// Everything the command line and job files define.
#[derive(Clone, Debug, Default)]
pub struct JobSet {
    pub jobs: Vec<JobDef>,
    /// Options set in global scope (JSON `global options`).
    pub global_echo: Echo,
    pub warnings: Vec<String>,
    /// Notes for the user that are not warnings (jobs switched off with `numjobs=0`).
    pub notes: Vec<String>,
    /// Which fio's behaviour to reproduce: `--compat`, else `FLEXIO_COMPAT`, else the newest.
    pub compat: Compat,
    /// Jobs whose `randseed` was drawn from the system's entropy before planning (they asked
    /// for unrepeatable random numbers; the result's provenance records the seed).
    pub seeds_drawn: Vec<usize>,
}

/// What the loader needs from the rest of the program.
pub struct LoadEnv<'a> {
    pub host: Host<'a>,
    pub read: Reader<'a>,
    /// The options and engines flexio knows (the engine registry's catalog).
    pub catalog: &'a Catalog,
}

/// Upper bound on threads (fio's FIO_MAX_JOBS default).
pub const DEFAULT_MAX_JOBS: u32 = 4096;

fn unknown_option(raw: &RawOpt, cat: &Catalog, compat: Compat) -> JobError {
    let text = raw.text();
    if table::UNSUPPORTED.contains(&raw.key.as_str()) {
        return JobError::new(
            raw.origin.clone(),
            Some(&text),
            format!(
                "option '{}' is a fio option that is not supported by flexio",
                raw.key
            ),
        );
    }
    // An option of a newer fio under --compat=3.33 on the command line: the command
    // line's own message for a name it does not know (the name as typed).
    if let Origin::Argv { .. } = raw.origin {
        if cat.lookup(&raw.key).is_some() {
            let typed = text.trim_start_matches('-');
            let typed = typed.split_once('=').map_or(typed, |(k, _)| k);
            return JobError::new(
                raw.origin.clone(),
                Some(&text),
                format!("unrecognized option '--{typed}'"),
            )
            .with_suggestion(suggest(typed, cat.names_at(compat)));
        }
    }
    JobError::new(
        raw.origin.clone(),
        Some(&text),
        format!("unknown option '{}'", raw.key),
    )
    .with_suggestion(suggest(&raw.key, cat.names_at(compat)))
}

fn apply_line(
    scope: &mut Scope,
    raw: &RawOpt,
    env: &LoadEnv,
    compat: Compat,
) -> Result<(), JobError> {
    let cat = env.catalog;
    // Options fio added after 3.33 are unknown under --compat=3.33, as in fio 3.33.
    let Some(def) = cat.lookup_at(&raw.key, compat) else {
        // A private option of the job's engine, one flexio does not run: kept as given
        // (the run says the engine is not available).
        if cat.is_fio_only_option_of(&scope.opts.ioengine, &raw.key) {
            scope
                .echo
                .push((raw.key.clone(), raw.value.clone().unwrap_or_default()));
            return Ok(());
        }
        return Err(unknown_option(raw, cat, compat));
    };
    let def: &'static OptDef = def;
    let text = raw.text();
    let value = match (&raw.value, raw.substitute) {
        (Some(v), true) => Some(
            substitute(v, &env.host)
                .map_err(|m| JobError::new(raw.origin.clone(), Some(&text), m))?,
        ),
        (v, _) => v.clone(),
    };
    if compat.is_fio333() {
        newer_value(def, value.as_deref(), raw, &text)?;
    }
    (def.set)(&mut scope.opts, value.as_deref()).map_err(|m| {
        let mut e = JobError::new(
            raw.origin.clone(),
            Some(&text),
            format!("bad value for '{}': {m}", def.name),
        );
        if def.name == "ioengine" {
            e = e.with_suggestion(suggest(value.as_deref().unwrap_or(""), cat.engine_names()));
        }
        e
    })?;
    if def.name == "ioengine" {
        let v = value.as_deref().unwrap_or("");
        // An engine flexio knows but does not run parses (its options too); the run
        // says it is not available.
        let unavailable = cat.is_unavailable_engine(v) && !v.starts_with("external:");
        cat.check_engine_at(v, compat)
            .or_else(|m| if unavailable { Ok(()) } else { Err(m) })
            .map_err(|m| {
                let e = JobError::new(raw.origin.clone(), Some(&text), m);
                // A name flexio knows (not supported, left out of this build, or newer than
                // the fio `--compat` reproduces) needs no guess; an unknown one gets the
                // nearest engine flexio runs.
                if cat.is_known_engine(v) {
                    e
                } else {
                    e.with_suggestion(suggest(v, cat.engine_names_at(compat).filter(|n| *n != v)))
                }
            })?;
    }
    // Bare keys are echoed with an empty value: JSON omits them (as fio), --showcmd keeps them.
    scope
        .echo
        .push((def.name.to_string(), value.unwrap_or_default()));
    let owners = cat.owners_at(def.name, compat);
    if !owners.is_empty() {
        scope
            .engine_opts
            .push((def.name, owners, raw.origin.clone(), text));
    }
    Ok(())
}

/// Under `--compat=3.33`: a value a newer fio added is a bad value, as fio 3.33's own
/// list of values does not have it.
fn newer_value(
    def: &OptDef,
    value: Option<&str>,
    raw: &RawOpt,
    text: &str,
) -> Result<(), JobError> {
    let v = value.unwrap_or("");
    let Some(release) = table::value_since(def.name, v) else {
        return Ok(());
    };
    let known: Vec<&str> = match def.kind {
        table::Kind::Choice(list) => list
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| table::value_since(def.name, n).is_none())
            .collect(),
        _ => Vec::new(),
    };
    Err(JobError::new(
        raw.origin.clone(),
        Some(text),
        format!(
            "bad value for '{}': '{v}' is not a valid value in fio 3.33 (fio {release} added it); valid values: {}",
            def.name,
            known.join(", ")
        ),
    ))
}

/// Apply a section's lines. Job-file sections go in fio's priority order (kb_base first,
/// filename last); the command line is applied in argv order, as fio does.
fn apply_section(
    scope: &mut Scope,
    sec: &RawSection,
    env: &LoadEnv,
    compat: Compat,
) -> Result<(), JobError> {
    let mut lines: Vec<&RawOpt> = sec.opts.iter().collect();
    // The command line and built-in jobs (a profile's) apply in their order.
    if !matches!(sec.origin, Origin::Argv { .. } | Origin::Builtin) {
        lines.sort_by_key(|r| -(env.catalog.lookup(&r.key).map(|d| d.prio).unwrap_or(0) as i32));
    }
    // Every bad line of the section is reported, as fio reports each bad option of the
    // job it drops; the load stops after the section.
    let mut errs: Vec<JobError> = Vec::new();
    for raw in lines {
        if let Err(e) = apply_line(scope, raw, env, compat) {
            errs.push(e);
        }
    }
    if errs.is_empty() {
        return Ok(());
    }
    let mut first = errs.remove(0);
    first.more = errs.into_boxed_slice();
    Err(first)
}

fn finish_job(mut scope: Scope, sec: &RawSection, cat: &Catalog) -> Result<JobDef, JobError> {
    // An alias of an engine owns what the engine owns.
    let engine = cat
        .engine(&scope.opts.ioengine)
        .map(|e| e.engine)
        .unwrap_or_default();
    // A job of an engine flexio does not run fails when it runs; its options are its own.
    let checked = if cat.is_unavailable_engine(&scope.opts.ioengine) {
        &[][..]
    } else {
        &scope.engine_opts[scope.inherited..]
    };
    for (name, owners, origin, text) in checked {
        if !owners.contains(&engine) {
            return Err(JobError::new(
                origin.clone(),
                Some(text),
                format!(
                    "option '{name}' belongs to ioengine {}, but job '{}' uses ioengine={engine}",
                    owners.join("/"),
                    sec.name
                ),
            ));
        }
    }
    if scope.opts.name.is_empty() {
        scope.opts.name = sec.name.clone();
    }
    in_zones(&mut scope.opts, sec)?;
    Ok(JobDef {
        opts: scope.opts,
        echo: scope.echo,
        origin: sec.origin.clone(),
        groupid: 0,
    })
}

/// Values given in zones (`size=2z`, `offset=1z`, fio's `_ZONE` values) become bytes: that
/// many zonesize= zones of zonemode=zbd.
fn in_zones(o: &mut JobOptions, sec: &RawSection) -> Result<(), JobError> {
    use crate::options::ZoneMode;
    use crate::value::SizeVal;
    let units = o.zbd.zone_units;
    let Some(first) = units.iter().position(Option::is_some) else {
        return Ok(());
    };
    let name = crate::zbd::ZONE_UNIT_OPTIONS[first];
    if o.zonemode != ZoneMode::Zbd || o.zonesize == 0 {
        return Err(JobError::new(
            sec.origin.clone(),
            None,
            format!(
                "job '{}': {name}= in zones (Nz) needs zonemode=zbd and zonesize=",
                sec.name
            ),
        ));
    }
    let z = o.zonesize;
    let bytes = |n: u64| {
        n.checked_mul(z).ok_or_else(|| {
            JobError::new(
                sec.origin.clone(),
                None,
                format!("{name}: {n} zones is too large"),
            )
        })
    };
    if let Some(n) = units[0] {
        o.size = Some(SizeVal::Bytes(bytes(n)?));
    }
    if let Some(n) = units[1] {
        o.io_size = Some(SizeVal::Bytes(bytes(n)?));
    }
    if let Some(n) = units[2] {
        o.offset = SizeVal::Bytes(bytes(n)?);
    }
    if let Some(n) = units[3] {
        o.offset_increment = SizeVal::Bytes(bytes(n)?);
    }
    if let Some(n) = units[4] {
        o.zoneskip = bytes(n)?;
    }
    Ok(())
}

/// The profile the command line asks for (`--profile=NAME`, the last one given).
pub fn cli_profile(cli: &Cli) -> Option<&str> {
    cli.sections
        .iter()
        .flat_map(|s| s.opts.iter())
        .filter(|o| o.key == "profile")
        .filter_map(|o| o.value.as_deref())
        .next_back()
}

/// A profile's jobs as sections of a built-in job file.
fn profile_sections(name: &str) -> Result<Vec<RawSection>, JobError> {
    let p = crate::extra::Profile::parse(name).map_err(|m| JobError::plain(format!("fio: {m}")))?;
    let jobs = p.jobs().map_err(JobError::plain)?;
    Ok(jobs
        .into_iter()
        .map(|(name, lines)| RawSection {
            name: name.to_string(),
            origin: Origin::Builtin,
            global: name == "global",
            opts: lines
                .into_iter()
                .map(|l| {
                    let (key, value, _) = crate::jobfile::split_kv(l);
                    RawOpt {
                        origin: Origin::Builtin,
                        key,
                        value,
                        substitute: true,
                        raw: l.to_string(),
                    }
                })
                .collect(),
        })
        .collect())
}

/// `--compat` wins over `FLEXIO_COMPAT`; neither: the newest fio.
fn resolve_compat(cli: &Cli, host: &Host) -> Result<Compat, JobError> {
    if let Some(c) = cli.switches.compat {
        return Ok(c);
    }
    match (host.env)(compat::ENV) {
        Some(v) if !v.trim().is_empty() => Compat::parse(&v).map_err(|m| {
            JobError::new(
                Origin::Builtin,
                None,
                format!("environment {}={v}: {m}", compat::ENV),
            )
        }),
        _ => Ok(Compat::default()),
    }
}

/// Load the command line and its job files into a [`JobSet`].
pub fn load(cli: &Cli, env: &LoadEnv) -> Result<JobSet, JobError> {
    let mut set = JobSet {
        compat: resolve_compat(cli, &env.host)?,
        ..JobSet::default()
    };
    let mut global = Scope::at(set.compat);
    // Jobs defined on the command line come first.
    for sec in &cli.sections {
        if sec.global {
            let before = global.echo.len();
            apply_section(&mut global, sec, env, set.compat)?;
            set.global_echo.extend(global.echo.drain(before..));
        } else {
            let mut job = Scope {
                echo: Vec::new(),
                inherited: global.engine_opts.len(),
                ..global.clone()
            };
            apply_section(&mut job, sec, env, set.compat)?;
            set.jobs.push(finish_job(job, sec, env.catalog)?);
        }
    }
    let mut files: Vec<Vec<RawSection>> = Vec::new();
    for (_, file) in &cli.job_files {
        let display = if file == "-" {
            "<stdin>".to_string()
        } else {
            file.clone()
        };
        files.push(parse_job_file(
            Path::new(file),
            &display,
            env.read,
            &mut set.warnings,
        )?);
    }
    // `--profile=NAME` on the command line adds the profile's jobs after the others, as a
    // further job file would (in a job file, `profile=` is only stored, as in fio).
    if let Some(p) = cli_profile(cli) {
        files.push(profile_sections(p)?);
        // fio takes `--profile` as a switch: it is not among the job options it echoes.
        set.global_echo.retain(|(k, _)| k != "profile");
    }
    for (fi, sections) in files.iter().enumerate() {
        if fi > 0 {
            // Each further job file starts from fresh defaults.
            global = Scope::at(set.compat);
        }
        let mut first_in_file = true;
        for sec in sections {
            if sec.global {
                let before = global.echo.len();
                apply_section(&mut global, sec, env, set.compat)?;
                set.global_echo.extend(global.echo.drain(before..));
                continue;
            }
            if !cli.switches.sections.is_empty() && !cli.switches.sections.contains(&sec.name) {
                continue;
            }
            let mut job = Scope {
                echo: Vec::new(),
                inherited: global.engine_opts.len(),
                ..global.clone()
            };
            apply_section(&mut job, sec, env, set.compat)?;
            let mut def = finish_job(job, sec, env.catalog)?;
            if fi > 0 && first_in_file {
                def.opts.stonewall = true;
            }
            first_in_file = false;
            set.jobs.push(def);
        }
    }
    for s in &cli.switches.sections {
        if !set.jobs.iter().any(|j| &j.opts.name == s) {
            return Err(JobError::plain(format!(
                "--section={s}: no job section of that name"
            )));
        }
    }
    // numjobs=0 switches a job off: it is dropped here, with a note, and the others run.
    let (on, off): (Vec<JobDef>, Vec<JobDef>) = std::mem::take(&mut set.jobs)
        .into_iter()
        .partition(|j| j.opts.numjobs > 0);
    set.jobs = on;
    for j in off {
        set.notes
            .push(format!("job '{}' disabled (numjobs=0)", j.opts.name));
    }
    assign_groups(&mut set.jobs);
    let max = cli.switches.max_jobs.unwrap_or(DEFAULT_MAX_JOBS) as u64;
    let total: u64 = set.jobs.iter().map(|j| j.opts.numjobs as u64).sum();
    if total > max {
        return Err(JobError::plain(format!(
            "the jobs ask for {total} threads, more than the maximum of {max} (see --max-jobs)"
        )));
    }
    Ok(set)
}

/// fio's group numbering: a job with `stonewall` or `new_group` starts a new group.
pub fn assign_groups(jobs: &mut [JobDef]) {
    let mut gid = 0u32;
    for (i, j) in jobs.iter_mut().enumerate() {
        if i > 0 && (j.opts.stonewall || j.opts.new_group) {
            gid += 1;
        }
        j.groupid = gid;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse_args;
    use std::collections::HashMap;
    use std::path::PathBuf;

    fn run(args: &str, files: &[(&str, &str)]) -> Result<JobSet, JobError> {
        let map: HashMap<PathBuf, Vec<u8>> = files
            .iter()
            .map(|(p, c)| (PathBuf::from(p), c.as_bytes().to_vec()))
            .collect();
        let read = move |p: &Path| {
            map.get(p)
                .cloned()
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
        };
        let env = LoadEnv {
            host: Host {
                ncpus: 2,
                mb_memory: 1024,
                pagesize: 4096,
                env: &|_| None,
            },
            read: &read,
            catalog: &TEST_CATALOG,
        };
        let args: Vec<String> = args.split_whitespace().map(str::to_string).collect();
        load(&parse_args(&args, &TEST_CATALOG)?, &env)
    }

    fn with_env(args: &str, compat_env: Option<&str>) -> Result<JobSet, JobError> {
        let read = |_: &Path| Err(std::io::Error::from(std::io::ErrorKind::NotFound));
        let lookup = |k: &str| {
            if k == compat::ENV {
                compat_env.map(str::to_string)
            } else {
                None
            }
        };
        let env = LoadEnv {
            host: Host {
                ncpus: 2,
                mb_memory: 1024,
                pagesize: 4096,
                env: &lookup,
            },
            read: &read,
            catalog: &TEST_CATALOG,
        };
        let args: Vec<String> = args.split_whitespace().map(str::to_string).collect();
        load(&parse_args(&args, &TEST_CATALOG)?, &env)
    }

    #[test]
    fn compat_from_switch_then_environment_then_newest() {
        assert_eq!(with_env("--name=a", None).unwrap().compat, Compat::Latest);
        assert_eq!(
            with_env("--name=a", Some("3.33")).unwrap().compat,
            Compat::Fio333
        );
        assert_eq!(
            with_env("--name=a", Some("")).unwrap().compat,
            Compat::Latest
        );
        // The command line wins over the environment.
        let s = with_env("--compat=latest --name=a", Some("3.33")).unwrap();
        assert_eq!(s.compat, Compat::Latest);
        let s = with_env("--compat=3.33 --name=a", None).unwrap();
        assert_eq!(s.compat, Compat::Fio333);
        let e = with_env("--name=a", Some("2.0")).unwrap_err().to_string();
        assert!(
            e.contains("FLEXIO_COMPAT=2.0") && e.contains("3.33, latest"),
            "{e}"
        );
        let e = with_env("--compat=9 --name=a", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown compatibility level '9'"), "{e}");
    }

    #[test]
    fn engines_of_newer_fio_are_unknown_under_compat_3_33() {
        assert!(with_env("--name=a --ioengine=newfangled", None).is_ok());
        for e in [
            with_env("--name=a --ioengine=newfangled", Some("3.33")).unwrap_err(),
            with_env("--compat=3.33 --name=a --ioengine=newfangled", None).unwrap_err(),
        ] {
            let e = e.to_string();
            assert!(e.contains("unknown ioengine 'newfangled'"), "{e}");
            assert!(e.contains("fio 3.33 does not have it"), "{e}");
        }
        // An engine fio 3.33 has stays; a misspelt one is not matched with a newer one.
        assert!(with_env("--compat=3.33 --name=a --ioengine=null", None).is_ok());
        let e = with_env("--compat=3.33 --name=a --ioengine=newfangle", None)
            .unwrap_err()
            .to_string();
        assert!(!e.contains("did you mean 'newfangled'"), "{e}");
    }

    #[test]
    fn options_of_newer_fio_are_unknown_under_compat_3_33() {
        for o in [
            "--verify_header_seed=1",
            "--verify_write_sequence=0",
            "--verify_pattern_interval=512",
        ] {
            let args = format!("--name=a {o}");
            assert!(with_env(&args, None).is_ok(), "{o}");
            let name = &o[2..o.find('=').unwrap()];
            for e in [
                with_env(&args, Some("3.33")).unwrap_err(),
                with_env(&format!("--compat=3.33 {args}"), None).unwrap_err(),
            ] {
                let e = e.to_string();
                assert!(
                    e.contains(&format!("unrecognized option '--{name}'")),
                    "{e}"
                );
                assert!(!e.contains(&format!("did you mean '{name}'")), "{e}");
            }
        }
        // Prefixes as typed; options fio 3.33 has stay.
        let e = with_env("--compat=3.33 --name=a --verify_header_s=1", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unrecognized option '--verify_header_s'"), "{e}");
        assert!(with_env("--compat=3.33 --name=a --verify_backlog=8", None).is_ok());
    }

    crate::engine_options! {
        /// A private option of the test's pvsync2.
        struct HipriOpts; rows HIPRI;
        /// Polled I/O.
        hipri: bool = false, "hipri", crate::table::Kind::Flag, "0", "Polled I/O",
            crate::engine_opts::parse::flag;
    }

    static TEST_CATALOG: Catalog = Catalog {
        core: crate::table::CORE,
        engines: &[
            crate::table::EngineOptions {
                engine: "psync",
                aliases: &[],
                groups: &[],
                since: None,
            },
            crate::table::EngineOptions {
                engine: "sync",
                aliases: &[],
                groups: &[],
                since: None,
            },
            crate::table::EngineOptions {
                engine: "null",
                aliases: &[],
                groups: &[],
                since: None,
            },
            crate::table::EngineOptions {
                engine: "newfangled",
                aliases: &[],
                groups: &[],
                since: Some("post-3.42"),
            },
            crate::table::EngineOptions {
                engine: "pvsync2",
                aliases: &[],
                groups: &[HIPRI],
                since: None,
            },
        ],
        fio_only_engines: &[("netsplice", "test"), ("splice", "test")],
        left_out_engines: &[],
        fio_only_options: &[],
    };

    #[test]
    fn cli_jobs_copy_globals_not_previous_jobs() {
        let s = run("--bs=8k --name=x --bs=16k --name=y", &[]).unwrap();
        assert_eq!(s.jobs[0].opts.bs[0], 16384);
        assert_eq!(s.jobs[1].opts.bs[0], 8192);
        assert_eq!(s.global_echo, vec![("bs".to_string(), "8k".to_string())]);
        assert_eq!(s.jobs[0].echo[0], ("name".to_string(), "x".to_string()));
    }

    #[test]
    fn job_file_globals_are_cumulative_and_positional() {
        let f = "[global]\nbs=8k\n[a]\n[global]\nsize=1M\n[b]\nstonewall\n";
        let s = run("j.fio", &[("j.fio", f)]).unwrap();
        assert!(s.jobs[0].opts.size.is_none());
        assert!(s.jobs[1].opts.size.is_some());
        assert_eq!(s.jobs[1].opts.bs[0], 8192);
        assert_eq!((s.jobs[0].groupid, s.jobs[1].groupid), (0, 1));
    }

    #[test]
    fn later_job_files_start_fresh_and_stonewall() {
        let s = run(
            "--bs=8k a.fio b.fio",
            &[("a.fio", "[a]\n"), ("b.fio", "[b]\n")],
        )
        .unwrap();
        assert_eq!(s.jobs[0].opts.bs[0], 8192);
        assert_eq!(s.jobs[1].opts.bs[0], 4096);
        assert_eq!(s.jobs[1].groupid, 1);
    }

    #[test]
    fn kb_base_is_applied_before_sizes_in_a_section() {
        let s = run("j.fio", &[("j.fio", "[a]\nbs=4k\nkb_base=1000\n")]).unwrap();
        assert_eq!(s.jobs[0].opts.bs[0], 4000);
        assert_eq!(s.jobs[0].echo[0].0, "kb_base");
    }

    #[test]
    fn command_line_keeps_argv_order() {
        let s = run(
            "--name=a --bs=4k --kb_base=1000 --filename=x --size=1M",
            &[],
        )
        .unwrap();
        assert_eq!(s.jobs[0].opts.bs[0], 4096);
        let keys: Vec<&str> = s.jobs[0].echo.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(keys, vec!["name", "bs", "kb_base", "filename", "size"]);
    }

    #[test]
    fn errors_carry_file_line_text_and_suggestion() {
        let e = run("j.fio", &[("j.fio", "[a]\nsize=1M\nioengin=psync\n")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "j.fio:3: 'ioengin=psync': unknown option 'ioengin'; did you mean 'ioengine'?"
        );
        let e = run("j.fio", &[("j.fio", "[a]\nrw=RandRead\n")]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("j.fio:2: 'rw=RandRead': bad value for 'rw'"),
            "{e}"
        );
        let e = run("j.fio", &[("j.fio", "[a]\nioengine=psyc\n")]).unwrap_err();
        assert_eq!(e.suggestion.as_deref(), Some("psync"));
        if let Some(n) = crate::table::UNSUPPORTED.first() {
            let text = format!("[a]\n{n}=1\n");
            let e = run("j.fio", &[("j.fio", &text)]).unwrap_err();
            assert!(e.msg.contains("not supported by flexio"), "{e}");
        }
    }

    #[test]
    fn engine_private_options_need_their_engine() {
        let s = run("--name=a --ioengine=pvsync2 --hipri", &[]).unwrap();
        assert!(HipriOpts::from_values(&s.jobs[0].opts.engine).hipri);
        let e = run("--name=a --hipri", &[]).unwrap_err();
        assert!(e.msg.contains("belongs to ioengine pvsync2"), "{e}");
        // Set globally, an engine's option applies to the jobs of that engine only.
        let s = run(
            "j.fio",
            &[(
                "j.fio",
                "[global]\nioengine=pvsync2\nhipri\n[a]\n[b]\nioengine=psync\n",
            )],
        )
        .unwrap();
        assert!(HipriOpts::from_values(&s.jobs[0].opts.engine).hipri);
        assert_eq!(s.jobs[1].opts.ioengine, "psync");
        let e = run("j.fio", &[("j.fio", "[a]\nioengine=psync\nhipri\n")]).unwrap_err();
        assert!(e.msg.contains("belongs to ioengine pvsync2"), "{e}");
    }

    #[test]
    fn engine_suggestions_are_engines_flexio_runs() {
        // An engine flexio knows but does not run parses (the run refuses it).
        let s = run("--name=a --ioengine=splice", &[]).unwrap();
        assert_eq!(s.jobs[0].opts.ioengine, "splice");
        let e = run("--name=a --ioengine=splcie", &[]).unwrap_err();
        assert_ne!(e.suggestion.as_deref(), Some("netsplice"));
        let e = run("--name=a --ioengine=pvsnc2", &[]).unwrap_err();
        assert_eq!(e.suggestion.as_deref(), Some("pvsync2"));
    }

    #[test]
    fn sections_filter_jobs() {
        let s = run(
            "--section=b j.fio",
            &[("j.fio", "[global]\nbs=8k\n[a]\n[b]\n")],
        )
        .unwrap();
        assert_eq!(s.jobs.len(), 1);
        assert_eq!(s.jobs[0].opts.name, "b");
        assert_eq!(s.jobs[0].opts.bs[0], 8192);
    }

    #[test]
    fn numjobs_zero_disables_a_job() {
        let s = run("--name=a --numjobs=0 --name=b --name=c --numjobs=2", &[]).unwrap();
        let names: Vec<&str> = s.jobs.iter().map(|j| j.opts.name.as_str()).collect();
        assert_eq!(names, vec!["b", "c"]);
        assert_eq!(s.notes, vec!["job 'a' disabled (numjobs=0)".to_string()]);
        assert!(run("--name=a --numjobs=-1", &[]).is_err());
    }

    #[test]
    fn too_many_jobs() {
        assert!(run("--name=a --numjobs=5000", &[]).is_err());
        assert!(run("--max-jobs=2 --name=a --numjobs=3", &[]).is_err());
    }
}
