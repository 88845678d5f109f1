//! fio's program switches beyond the basic ones: `--debug`, `--idle-prof`, `--trigger-file`,
//! `--trigger-timeout`, `--trigger`, `--trigger-remote`, `--crctest`, `--cpuclock-test`,
//! `--aux-path`, `--alloc-size`, `--bandwidth-log[=NAME]` and the deprecated
//! `--latency-log`. Parsed here into [`Extra`]; the binary acts on them.

/// (name, argument, help) rows, appended to the command line's switch table.
/// Argument requirement of a program switch.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    None,
    Required,
    Optional,
}

pub const SWITCHES: &[(&str, Arg, &str)] = &[
    (
        "debug",
        Arg::Required,
        "Enable debug logging (fio's categories, or all; help lists them)",
    ),
    (
        "bandwidth-log",
        Arg::Optional,
        "Generate aggregate bandwidth logs (NAME-read_bw.log, ...; NAME defaults to agg)",
    ),
    (
        "latency-log",
        Arg::None,
        "Deprecated in fio: use the per-job latency log options",
    ),
    (
        "idle-prof",
        Arg::Required,
        "Report CPU idleness on a system or percpu basis (system,percpu), or calibrate",
    ),
    (
        "trigger-file",
        Arg::Required,
        "Stop the jobs and execute the trigger command when this file exists",
    ),
    (
        "trigger-timeout",
        Arg::Required,
        "Stop the jobs and execute the trigger command at this time",
    ),
    (
        "trigger",
        Arg::Required,
        "Set this command as local trigger",
    ),
    (
        "trigger-remote",
        Arg::Required,
        "Set this command as remote trigger (run by the servers of --client)",
    ),
    (
        "crctest",
        Arg::Optional,
        "Test speed of checksum functions (all, or a comma-separated list)",
    ),
    (
        "cpuclock-test",
        Arg::None,
        "Perform test/validation of the CPU clock",
    ),
    (
        "aux-path",
        Arg::Required,
        "Use this path for generated state files",
    ),
    (
        "alloc-size",
        Arg::Required,
        "Set smalloc pool to this size in kb (accepted; flexio needs no shared pool)",
    ),
];

/// `--debug` categories, fio's names in fio's order: fio 3.33's nineteen, then the newest
/// fio's `sprandom` (unknown under `--compat=3.33`, as in fio 3.33). Every one is accepted;
/// the binary prints lines for the events flexio has (`src/debug.rs` lists them).
pub const DEBUG_CATEGORIES: &[&str] = &[
    "process",
    "file",
    "io",
    "mem",
    "blktrace",
    "verify",
    "random",
    "parse",
    "diskutil",
    "job",
    "mutex",
    "profile",
    "time",
    "net",
    "rate",
    "compress",
    "steadystate",
    "helperthread",
    "zbd",
    "sprandom",
];

/// How many of [`DEBUG_CATEGORIES`] fio 3.33 has (the rest came later).
pub const FIO333_DEBUG_CATEGORIES: usize = 19;

/// `--idle-prof`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleProf {
    System,
    Percpu,
    Calibrate,
}

/// What the extra switches asked for.
#[derive(Clone, Debug, Default)]
pub struct Extra {
    /// Bit `i` set: `DEBUG_CATEGORIES[i]` is logged.
    pub debug: u32,
    /// The categories as given (fio announces them in that order), `all` as such.
    pub debug_given: Vec<&'static str>,
    /// `--debug=help`/`?`: list the categories and exit.
    pub debug_help: bool,
    /// `--bandwidth-log[=NAME]`: `Some(None)` without a name (`agg`).
    pub bandwidth_log: Option<Option<String>>,
    /// `--latency-log`: fio only says that it is deprecated, and exits.
    pub latency_log: bool,
    pub idle_prof: Option<IdleProf>,
    pub trigger_file: Option<String>,
    pub trigger_timeout_us: Option<u64>,
    pub trigger_cmd: Option<String>,
    /// `--trigger-remote`: the command the servers run when the trigger fires.
    pub trigger_remote_cmd: Option<String>,
    /// `--crctest[=list]`: `Some(None)` tests all.
    pub crctest: Option<Option<String>>,
    pub cpuclock_test: bool,
    pub aux_path: Option<String>,
    pub alloc_size_kb: Option<u64>,
}

impl Extra {
    /// Whether debug category `name` is on.
    pub fn debugs(&self, name: &str) -> bool {
        DEBUG_CATEGORIES
            .iter()
            .position(|c| *c == name)
            .is_some_and(|i| self.debug & (1 << i) != 0)
    }

    /// The switches a fio 3.33 would refuse (`--compat=3.33`): the newest fio's debug
    /// category and `--bandwidth-log=NAME`, with fio 3.33's words (getopt's line names the
    /// program).
    pub fn fio333_errors(&self) -> Vec<String> {
        let mut e = Vec::new();
        for c in &self.debug_given {
            if DEBUG_CATEGORIES[FIO333_DEBUG_CATEGORIES..].contains(c) {
                e.push(format!("fio: debug mask {c} not found"));
            }
        }
        if let Some(Some(name)) = &self.bandwidth_log {
            // fio's two lines, named after the program (argv[0]) as fio's are.
            e.push("flexio: option '--bandwidth-log' doesn't allow an argument".into());
            e.push(format!(
                "flexio: unrecognized option '--bandwidth-log={name}'"
            ));
        }
        e
    }
}

fn parse_debug(x: &mut Extra, v: &str) -> Result<(), String> {
    for c in v.split(',').filter(|c| !c.is_empty()) {
        match c {
            "help" | "?" => x.debug_help = true,
            "all" => {
                x.debug |= (1 << DEBUG_CATEGORIES.len()) - 1;
                x.debug_given.push("all");
            }
            _ => match DEBUG_CATEGORIES.iter().position(|k| *k == c) {
                Some(i) => {
                    x.debug |= 1 << i;
                    x.debug_given.push(DEBUG_CATEGORIES[i]);
                }
                None => {
                    return Err(format!(
                        "debug mask {c} not found (the categories: {},all)",
                        DEBUG_CATEGORIES.join(",")
                    ))
                }
            },
        }
    }
    if x.debug == 0 && !x.debug_help {
        return Err("--debug needs a category (see --debug=help)".into());
    }
    Ok(())
}

/// Apply switch `name` (one of [`SWITCHES`]) with its value.
pub fn apply(x: &mut Extra, name: &str, value: Option<&str>) -> Result<(), String> {
    let v = value.unwrap_or("");
    match name {
        "debug" => parse_debug(x, v)?,
        "bandwidth-log" => {
            if value == Some("") {
                return Err("--bandwidth-log=NAME needs a name".into());
            }
            x.bandwidth_log = Some(value.map(str::to_string))
        }
        "latency-log" => x.latency_log = true,
        "idle-prof" => {
            x.idle_prof = Some(match v {
                "system" => IdleProf::System,
                "percpu" => IdleProf::Percpu,
                "calibrate" => IdleProf::Calibrate,
                _ => {
                    return Err(format!(
                        "incorrect idle-prof option: {v} (use system, percpu or calibrate)"
                    ))
                }
            })
        }
        "trigger-file" => {
            if v.is_empty() {
                return Err("--trigger-file needs a file name".into());
            }
            x.trigger_file = Some(v.to_string())
        }
        "trigger-timeout" => {
            let us = crate::value::parse_time_us(v, true)?;
            if us == 0 {
                return Err("--trigger-timeout must be positive".into());
            }
            x.trigger_timeout_us = Some(us)
        }
        "trigger" => x.trigger_cmd = Some(v.to_string()),
        "trigger-remote" => x.trigger_remote_cmd = Some(v.to_string()),
        "crctest" => x.crctest = Some(value.filter(|s| !s.is_empty()).map(str::to_string)),
        "cpuclock-test" => x.cpuclock_test = true,
        "aux-path" => {
            if v.is_empty() {
                return Err("--aux-path needs a directory".into());
            }
            x.aux_path = Some(v.to_string())
        }
        "alloc-size" => {
            let kb: u64 = v
                .parse()
                .map_err(|_| format!("--alloc-size takes a size in KiB, not '{v}'"))?;
            if kb == 0 {
                return Err("--alloc-size must be positive".into());
            }
            x.alloc_size_kb = Some(kb)
        }
        _ => return Err(format!("'--{name}' is not handled")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ap(name: &str, v: Option<&str>) -> Result<Extra, String> {
        let mut x = Extra::default();
        apply(&mut x, name, v).map(|_| x)
    }

    #[test]
    fn debug_categories() {
        let x = ap("debug", Some("parse,io")).unwrap();
        assert!(x.debugs("parse") && x.debugs("io") && !x.debugs("file"));
        let x = ap("debug", Some("all")).unwrap();
        assert!(DEBUG_CATEGORIES.iter().all(|c| x.debugs(c)));
        assert_eq!(x.debug_given, ["all"]);
        assert!(ap("debug", Some("help")).unwrap().debug_help);
        // fio 3.33's nineteen, in its order, all accepted.
        assert_eq!(DEBUG_CATEGORIES[..FIO333_DEBUG_CATEGORIES].join(","), "process,file,io,mem,blktrace,verify,random,parse,diskutil,job,mutex,profile,time,net,rate,compress,steadystate,helperthread,zbd");
        let x = ap("debug", Some("mutex,process")).unwrap();
        assert_eq!(x.debug_given, ["mutex", "process"]);
        assert!(x.fio333_errors().is_empty());
        let x = ap("debug", Some("sprandom")).unwrap();
        assert_eq!(x.fio333_errors(), ["fio: debug mask sprandom not found"]);
        assert!(ap("debug", Some("bogus"))
            .unwrap_err()
            .contains("debug mask bogus not found"));
        assert!(ap("debug", Some("")).is_err());
    }

    #[test]
    fn values() {
        assert_eq!(
            ap("idle-prof", Some("percpu")).unwrap().idle_prof,
            Some(IdleProf::Percpu)
        );
        assert!(ap("idle-prof", Some("bogus")).is_err());
        assert_eq!(
            ap("trigger-timeout", Some("2")).unwrap().trigger_timeout_us,
            Some(2_000_000)
        );
        assert_eq!(
            ap("trigger-timeout", Some("500ms"))
                .unwrap()
                .trigger_timeout_us,
            Some(500_000)
        );
        assert!(ap("trigger-timeout", Some("x")).is_err());
        assert_eq!(ap("crctest", None).unwrap().crctest, Some(None));
        assert_eq!(
            ap("crctest", Some("md5")).unwrap().crctest,
            Some(Some("md5".into()))
        );
        assert_eq!(
            ap("alloc-size", Some("32768")).unwrap().alloc_size_kb,
            Some(32768)
        );
        assert!(ap("alloc-size", Some("lots")).is_err());
        assert_eq!(ap("bandwidth-log", None).unwrap().bandwidth_log, Some(None));
        let x = ap("bandwidth-log", Some("run1")).unwrap();
        assert_eq!(x.bandwidth_log, Some(Some("run1".into())));
        assert_eq!(
            x.fio333_errors(),
            [
                "flexio: option '--bandwidth-log' doesn't allow an argument",
                "flexio: unrecognized option '--bandwidth-log=run1'"
            ]
        );
        assert!(ap("bandwidth-log", Some("")).is_err());
        assert_eq!(
            ap("trigger-remote", Some("touch x"))
                .unwrap()
                .trigger_remote_cmd
                .as_deref(),
            Some("touch x")
        );
        assert!(ap("latency-log", None).unwrap().latency_log);
    }
}
