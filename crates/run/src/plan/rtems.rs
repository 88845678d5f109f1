//! What flexio's RTEMS port does not do (docs/embedded.md). RTEMS runs one application
//! linked with the kernel: no processes, no /proc or /sys, no cgroups, and its C library
//! (as the libc crate binds it) has no O_DIRECT, O_DSYNC, CPU affinity, I/O priorities or
//! mmap flags. A job option that needs one of them is refused before any job runs, with
//! the option's name and "not supported by flexio on RTEMS", never ignored.
//!
//! The check reads the options only, so it is tested on every system; planning applies it
//! when flexio is built for RTEMS.

use flexio_job::cli_extra::Extra;
use flexio_job::options::SyncMode;
use flexio_job::sysio::MemType;
use flexio_job::JobOptions;

/// The first option of `o` the RTEMS port cannot honour, as the error to give; `None` when
/// the job can run there.
pub fn refusal(o: &JobOptions) -> Option<String> {
    let why: &[(bool, &str, &str)] = &[
        (
            o.exec_prerun.is_some(),
            "exec_prerun",
            "RTEMS has no processes to run a command in",
        ),
        (
            o.exec_postrun.is_some(),
            "exec_postrun",
            "RTEMS has no processes to run a command in",
        ),
        (
            o.cgroup.is_some() || o.cgroup_weight.is_some(),
            "cgroup",
            "RTEMS has no cgroups",
        ),
        (
            o.cpus_allowed.is_some(),
            "cpus_allowed/cpumask",
            "no CPU affinity calls",
        ),
        (
            o.verify_async_cpus.is_some(),
            "verify_async_cpus",
            "no CPU affinity calls",
        ),
        (
            o.extra.gtod_cpu.is_some(),
            "gtod_cpu",
            "no CPU affinity calls",
        ),
        (
            o.log_compression_cpus.is_some(),
            "log_compression_cpus",
            "no CPU affinity calls",
        ),
        (
            o.numa_cpu_nodes.is_some(),
            "numa_cpu_nodes",
            "no NUMA interfaces",
        ),
        (
            o.numa_mem_policy.is_some(),
            "numa_mem_policy",
            "no NUMA interfaces",
        ),
        (o.nice != 0, "nice", "RTEMS has no process priorities"),
        (
            o.prio.is_some() || o.prioclass.is_some() || o.newest.priohint.is_some(),
            "prio/prioclass/priohint",
            "RTEMS has no I/O priorities",
        ),
        (
            o.uid.is_some() || o.gid.is_some(),
            "uid/gid",
            "RTEMS has no per-thread credentials",
        ),
        (o.direct, "direct=1", "its C library has no O_DIRECT"),
        (
            o.extra.atomic,
            "atomic=1",
            "it needs O_DIRECT or RWF_ATOMIC",
        ),
        (
            o.sync == SyncMode::Dsync,
            "sync=dsync",
            "its C library has no O_DSYNC (use sync=sync)",
        ),
        (
            o.newest.end_syncfs,
            "end_syncfs",
            "its C library has no syncfs or sync",
        ),
        (
            o.sysio.mem != MemType::Malloc,
            "mem",
            "only mem=malloc: no System V shared memory, no mmap flags",
        ),
        (
            o.sysio.lockmem > 0,
            "lockmem",
            "no mmap flags (and RTEMS pages nothing out)",
        ),
        (
            o.sysio.write_hint.is_some(),
            "write_hint",
            "it is a Linux fcntl",
        ),
        (
            o.sysio.ioscheduler.is_some(),
            "ioscheduler",
            "RTEMS has no /sys",
        ),
        (
            o.sysio.sync_file_range.is_some(),
            "sync_file_range",
            "it is a Linux system call",
        ),
    ];
    why.iter()
        .find(|(on, ..)| *on)
        .map(|(_, opt, because)| format!("{opt} is not supported by flexio on RTEMS: {because}"))
}

/// The first run-wide switch of `x` the RTEMS port cannot honour (the triggers' commands:
/// RTEMS has no processes).
pub fn run_refusal(x: &Extra) -> Option<String> {
    let why: &[(bool, &str)] = &[
        (x.trigger_cmd.is_some(), "--trigger"),
        (x.trigger_remote_cmd.is_some(), "--trigger-remote"),
    ];
    why.iter().find(|(on, _)| *on).map(|(_, switch)| {
        format!(
            "{switch} is not supported by flexio on RTEMS: RTEMS has no processes to run a \
             command in"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_run_and_each_option_is_named() {
        let base = JobOptions::default();
        assert_eq!(refusal(&base), None, "fio's defaults run on RTEMS");
        type Set = fn(&mut JobOptions);
        let cases: Vec<(&str, Set)> = vec![
            ("exec_prerun", |o| o.exec_prerun = Some("true".into())),
            ("exec_postrun", |o| o.exec_postrun = Some("true".into())),
            ("cgroup", |o| o.cgroup = Some("g".into())),
            ("cpus_allowed", |o| o.cpus_allowed = Some(vec![0])),
            ("verify_async_cpus", |o| o.verify_async_cpus = Some(vec![0])),
            ("gtod_cpu", |o| o.extra.gtod_cpu = Some(0)),
            ("log_compression_cpus", |o| {
                o.log_compression_cpus = Some(vec![0])
            }),
            ("numa_cpu_nodes", |o| {
                o.numa_cpu_nodes = Some(flexio_job::cpus::Nodes::All)
            }),
            ("nice", |o| o.nice = 1),
            ("prio", |o| o.prio = Some(1)),
            ("uid/gid", |o| o.gid = Some(1)),
            ("direct=1", |o| o.direct = true),
            ("atomic=1", |o| o.extra.atomic = true),
            ("sync=dsync", |o| o.sync = SyncMode::Dsync),
            ("end_syncfs", |o| o.newest.end_syncfs = true),
            ("mem", |o| o.sysio.mem = MemType::Shm { huge: false }),
            ("lockmem", |o| o.sysio.lockmem = 1 << 20),
            ("write_hint", |o| o.sysio.write_hint = Some(2)),
            ("ioscheduler", |o| o.sysio.ioscheduler = Some("none".into())),
            ("sync_file_range", |o| {
                o.sysio.sync_file_range = Some((2, 1))
            }),
        ];
        for (name, set) in cases {
            let mut o = JobOptions::default();
            set(&mut o);
            let e = refusal(&o).unwrap_or_else(|| panic!("{name} not refused"));
            assert!(
                e.starts_with(name) && e.contains("not supported by flexio on RTEMS"),
                "{name}: {e}"
            );
        }
        // What RTEMS has stays allowed: O_SYNC, the heap, psync's defaults.
        let o = JobOptions {
            sync: SyncMode::Sync,
            ..JobOptions::default()
        };
        assert_eq!(refusal(&o), None);
    }

    #[test]
    fn trigger_commands_are_refused_and_the_rest_of_the_triggers_run() {
        let mut x = Extra {
            trigger_file: Some("stop".into()),
            trigger_timeout_us: Some(1_000_000),
            ..Extra::default()
        };
        assert_eq!(run_refusal(&x), None);
        x.trigger_remote_cmd = Some("true".into());
        let e = run_refusal(&x).unwrap();
        assert!(
            e.starts_with("--trigger-remote is not supported by flexio on RTEMS"),
            "{e}"
        );
        x.trigger_cmd = Some("true".into());
        assert!(run_refusal(&x).unwrap().starts_with("--trigger is not"));
    }
}
