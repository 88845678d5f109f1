//! Every option of the core table is classified by what it does to the job loops, and an
//! option that changes what happens per I/O in a way not every loop handles must turn on
//! its feature in the plan's feature set (`flexio_run::plan::features`), which alone
//! decides the loop. A new option can then not be forgotten: it fails `every_option_is_classified`
//! until someone says which kind it is, and a feature left out of `Features::of` fails
//! `each_feature_option_turns_its_feature_on`.

use flexio_engine::CATALOG;
use flexio_run::plan::features::{Feature, Features, Loop};

/// Options that switch a feature on, with the job lines that do it on the base job (the
/// option first). An option may have several rows (an engine that queues, one that does
/// file operations).
const TURNS_ON: &[(&str, &str, Feature)] = &[
    ("fsync", "fsync=4\nrw=write", Feature::Syncs),
    ("fdatasync", "fdatasync=4\nrw=write", Feature::Syncs),
    (
        "sync_file_range",
        "sync_file_range=write:4\nrw=write",
        Feature::Syncs,
    ),
    ("rate", "rate=1m", Feature::Rate),
    ("rate_iops", "rate_iops=100", Feature::Rate),
    ("thinktime", "thinktime=10", Feature::ThinkTime),
    ("thinkcycles", "thinkcycles=100", Feature::ThinkTime),
    ("verify", "verify=crc32c\nrw=write", Feature::Verify),
    (
        "latency_target",
        "latency_target=10ms",
        Feature::LatencyTarget,
    ),
    ("max_latency", "max_latency=10ms", Feature::LatencyMax),
    ("flow", "flow=1", Feature::Flow),
    ("lockfile", "lockfile=exclusive", Feature::Lockfile),
    ("trim_mode", "trim_mode=punch\nrw=trim", Feature::TrimPunch),
    (
        "serialize_overlap",
        "serialize_overlap=1",
        Feature::SerializeOverlap,
    ),
    (
        "iodepth_low",
        "iodepth_low=2\nioengine=null\niodepth=8",
        Feature::LowWater,
    ),
    ("io_submit_mode", "io_submit_mode=offload", Feature::Offload),
    (
        "block_error_percentiles",
        "block_error_percentiles=1\nrw=randtrimwrite",
        Feature::BlockStates,
    ),
    ("read_iolog", "read_iolog=TRACE", Feature::Replay),
    (
        "write_iolog",
        "write_iolog=DIR/captured.log",
        Feature::Capture,
    ),
    ("write_bw_log", "write_bw_log=DIR/x", Feature::Logs),
    ("write_lat_log", "write_lat_log=DIR/x", Feature::Logs),
    ("write_iops_log", "write_iops_log=DIR/x", Feature::Logs),
    ("write_hist_log", "write_hist_log=DIR/x", Feature::Logs),
    ("number_ios", "number_ios=10", Feature::NumberIos),
    ("iodepth", "iodepth=4\nioengine=null", Feature::Queue),
    ("ioengine", "ioengine=libaio", Feature::Queue),
    ("ioengine", "ioengine=filecreate", Feature::FileOps),
    (
        "cmdprio_percentage",
        "ioengine=libaio\ncmdprio_percentage=50",
        Feature::Priorities,
    ),
    (
        "zonemode",
        "zonemode=zbd\nfilename=DIR/zoned\nzonesize=64k\nsize=1m",
        Feature::Zones,
    ),
];

/// Options that only tune a feature: without it they change nothing per I/O.
const REFINES: &[(&str, Feature)] = &[
    ("rate_process", Feature::Rate),
    ("rate_cycle", Feature::Rate),
    ("rate_ignore_thinktime", Feature::Rate),
    ("thinktime_spin", Feature::ThinkTime),
    ("thinktime_blocks", Feature::ThinkTime),
    ("thinktime_blocks_type", Feature::ThinkTime),
    ("thinktime_iotime", Feature::ThinkTime),
    ("do_verify", Feature::Verify),
    ("verify_async", Feature::Verify),
    ("verify_async_cpus", Feature::Verify),
    ("verify_backlog", Feature::Verify),
    ("verify_backlog_batch", Feature::Verify),
    ("verify_dump", Feature::Verify),
    ("verify_fatal", Feature::Verify),
    ("verify_header_seed", Feature::Verify),
    ("verify_interval", Feature::Verify),
    ("verify_offset", Feature::Verify),
    ("verify_only", Feature::Verify),
    ("verify_pattern", Feature::Verify),
    ("verify_pattern_interval", Feature::Verify),
    ("verify_policy", Feature::Verify),
    ("verify_state_load", Feature::Verify),
    ("verify_state_save", Feature::Verify),
    ("verify_write_sequence", Feature::Verify),
    ("experimental_verify", Feature::Verify),
    ("trim_verify_zero", Feature::Verify),
    ("trim_backlog", Feature::Verify),
    ("trim_backlog_batch", Feature::Verify),
    ("trim_percentage", Feature::Verify),
    ("latency_window", Feature::LatencyTarget),
    ("latency_percentile", Feature::LatencyTarget),
    ("latency_run", Feature::LatencyTarget),
    ("flow_id", Feature::Flow),
    ("flow_sleep", Feature::Flow),
    ("read_iolog_chunked", Feature::Replay),
    ("replay_no_stall", Feature::Replay),
    ("replay_redirect", Feature::Replay),
    ("replay_scale", Feature::Replay),
    ("replay_align", Feature::Replay),
    ("replay_time_scale", Feature::Replay),
    ("replay_skip", Feature::Replay),
    ("merge_blktrace_file", Feature::Replay),
    ("merge_blktrace_scalars", Feature::Replay),
    ("merge_blktrace_iters", Feature::Replay),
    ("log_avg_msec", Feature::Logs),
    ("log_window_value", Feature::Logs),
    ("log_issue_time", Feature::Logs),
    ("log_unix_epoch", Feature::Logs),
    ("log_alternate_epoch", Feature::Logs),
    ("log_alternate_epoch_clock_id", Feature::Logs),
    ("log_compression", Feature::Logs),
    ("log_compression_cpus", Feature::Logs),
    ("log_store_compressed", Feature::Logs),
    ("log_offset", Feature::Logs),
    ("log_prio", Feature::Logs),
    ("per_job_logs", Feature::Logs),
    ("log_hist_msec", Feature::Logs),
    ("log_hist_coarseness", Feature::Logs),
    ("log_entries", Feature::Logs),
    ("iodepth_batch", Feature::Queue),
    ("iodepth_batch_complete_min", Feature::Queue),
    ("iodepth_batch_complete_max", Feature::Queue),
    ("max_open_zones", Feature::Zones),
    ("job_max_open_zones", Feature::Zones),
    ("ignore_zone_limits", Feature::Zones),
    ("read_beyond_wp", Feature::Zones),
    ("zone_reset_threshold", Feature::Zones),
    ("zone_reset_frequency", Feature::Zones),
    ("recover_zbd_write_error", Feature::Zones),
    ("write_zone_remainder", Feature::Zones),
    ("zonecapacity", Feature::Zones),
];

/// Options every loop handles alike: what the generator draws (directions, offsets, block
/// sizes, files), what a write buffer holds, how files are opened, laid out and closed,
/// what is done before or after the loop, per job rather than per I/O, or in the periodic
/// work every loop runs (ramp, runtime, rate minimums, steady state), and how the results
/// are reported.
const SAME_IN_EVERY_LOOP: &[&str] = &[
    // the workload the generator draws
    "rw",
    "rw_sequencer",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "ba",
    "bsrange",
    "bssplit",
    "bs_unaligned",
    "bs_is_seq_rand",
    "offset",
    "offset_align",
    "offset_increment",
    "size",
    "io_size",
    "filesize",
    "fill_device",
    "loops",
    "norandommap",
    "softrandommap",
    "percentage_random",
    "random_distribution",
    "random_generator",
    "random_sequence_stride",
    "randrepeat",
    "randseed",
    "allrandrepeat",
    "num_range",
    "file_service_type",
    "nrfiles",
    "openfiles",
    "sprandom",
    "spr_cs",
    "spr_num_regions",
    "spr_op",
    "zonesize",
    "zonerange",
    "zoneskip",
    // write buffers (filled by the one fill_write every loop calls)
    "buffer_compress_chunk",
    "buffer_compress_percentage",
    "buffer_pattern",
    "dedupe_global",
    "dedupe_mode",
    "dedupe_percentage",
    "dedupe_working_set_percentage",
    "refill_buffers",
    "scramble_buffers",
    "zero_buffers",
    "iomem_align",
    "iomem_thp",
    "mem",
    "hugepage-size",
    "lockmem",
    // files: names, layout, open flags, what happens at open and close
    "filename",
    "filename_format",
    "directory",
    "opendir",
    "unique_filename",
    "filetype",
    "allow_file_create",
    "allow_mounted_write",
    "create_fsync",
    "create_on_open",
    "create_only",
    "create_serialize",
    "fallocate",
    "file_append",
    "overwrite",
    "pre_read",
    "invalidate",
    "unlink",
    "unlink_each_loop",
    "end_fsync",
    "end_syncfs",
    "fsync_on_close",
    "direct",
    "buffered",
    "sync",
    "atomic",
    "fadvise_hint",
    "write_hint",
    // placement data and flags the engine carries itself
    "fdp",
    "dataplacement",
    "plid_select",
    "plids",
    "dp_scheme",
    // fio's engines honour no barrier: accepted without effect, as in fio
    "write_barrier",
    // the job as a whole: its thread, placement, priority for every request, cgroup
    "name",
    "description",
    "comm",
    "thread",
    "numjobs",
    "stonewall",
    "new_group",
    "wait_for",
    "startdelay",
    "exitall",
    "exitall_on_error",
    "exit_what",
    "exec_prerun",
    "exec_postrun",
    "cpumask",
    "cpus_allowed",
    "cpus_allowed_policy",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "nice",
    "prio",
    "prioclass",
    "priohint",
    "uid",
    "gid",
    "cgroup",
    "cgroup_nodelete",
    "cgroup_weight",
    "ioscheduler",
    "gtod_cpu",
    "clocksource",
    "job_start_clock_id",
    // errors: the one completion path every loop ends in for a failed request
    "continue_on_error",
    "ignore_error",
    "error_dump",
    // periodic work and stopping rules every loop runs
    "runtime",
    "time_based",
    "ramp_time",
    "ramp_size",
    "rate_min",
    "rate_iops_min",
    "steadystate",
    "steadystate_duration",
    "steadystate_ramp_time",
    "steadystate_check_interval",
    "steadystate_departure",
    "steadystate_band",
    "steadystate_direction",
    "steadystate_departure_window",
    "interval_log",
    "interval_log_msec",
    "disk_util",
    // what is timed and how it is reported
    "gtod_reduce",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw_measurement",
    "bwavgtime",
    "iopsavgtime",
    "stats",
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "percentile_list",
    "significant_figures",
    "group_reporting",
    "unified_rw_reporting",
    "kb_base",
    "unit_base",
    // fio's profiles' options: checked, without effect, as in fio 3.33
    "profile",
    "block",
    "numruns",
    "dir",
    "threads",
    "load",
    "prep",
    "device-names",
    "large-block-op-kbytes",
    "read-req-num-512-blocks",
    "test-duration",
    "threads-per-queue",
];

fn features(dir: &std::path::Path, lines: &str) -> Result<Features, String> {
    let job = format!(
        "[j]\nioengine=psync\nrw=read\nbs=4k\nsize=1m\nfilename={}/f\n{}\n",
        dir.display(),
        lines.replace("DIR", &dir.display().to_string())
    );
    let p = flexio_run::prepare_job_text(&job, &[])?;
    Ok(p.plans()[0].features)
}

#[test]
fn every_option_is_classified() {
    let mut problems = Vec::new();
    for row in CATALOG.core_rows() {
        let n = row.name;
        let kinds = TURNS_ON.iter().any(|t| t.0 == n) as u8
            + REFINES.iter().any(|t| t.0 == n) as u8
            + SAME_IN_EVERY_LOOP.contains(&n) as u8;
        if kinds != 1 {
            problems.push(format!(
                "{n}: {} (say whether it turns a feature of flexio_run::plan::features on, tunes one, or is the same in every loop)",
                if kinds == 0 { "not classified" } else { "classified twice" }
            ));
        }
    }
    let known = |n: &str| CATALOG.lookup(n).is_some();
    for n in TURNS_ON
        .iter()
        .map(|t| t.0)
        .chain(REFINES.iter().map(|t| t.0))
        .chain(SAME_IN_EVERY_LOOP.iter().copied())
    {
        if !known(n) {
            problems.push(format!("{n}: classified, but no such option"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_base_job_runs_the_plain_loop() {
    let d = tempfile::tempdir().unwrap();
    let f = features(d.path(), "").unwrap();
    assert_eq!(
        f.job_loop(),
        Loop::Plain,
        "{:?}",
        f.iter().collect::<Vec<_>>()
    );
}

#[test]
fn each_feature_option_turns_its_feature_on() {
    let d = tempfile::tempdir().unwrap();
    // A trace for read_iolog: fio's iolog v2.
    let trace = d.path().join("trace.log");
    let f = d.path().join("f");
    std::fs::write(
        &trace,
        format!(
            "fio version 2 iolog\n{0} add\n{0} open\n{0} read 0 4096\n{0} close\n",
            f.display()
        ),
    )
    .unwrap();
    // A zoned target: zonemode=zbd on a regular file.
    std::fs::write(d.path().join("zoned"), vec![0u8; 1 << 20]).unwrap();
    let mut problems = Vec::new();
    for (opt, lines, feature) in TURNS_ON {
        let lines = lines.replace("TRACE", &trace.display().to_string());
        match features(d.path(), &lines) {
            Ok(f) if f.contains(*feature) => {
                if *feature == Feature::Replay || *feature == Feature::FileOps {
                    // A trace without syncs is replayed by the plain loop (one with them by
                    // the full general loop); the plain loop does a file engine's operation.
                    assert_eq!(f.job_loop(), Loop::Plain, "{opt}");
                } else if feature.gated() {
                    assert_eq!(f.job_loop(), Loop::Full, "{opt}");
                } else {
                    assert_ne!(f.job_loop(), Loop::Plain, "{opt}");
                }
            }
            Ok(f) => problems.push(format!(
                "{opt} ({}): {feature:?} is not in the set {:?}",
                lines.replace('\n', " "),
                f.iter().collect::<Vec<_>>()
            )),
            Err(e) => problems.push(format!("{opt}: the job does not plan: {e}")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_gated_feature_has_an_option_or_a_reason() {
    // Features no option of the table turns on: --debug=io (a switch), an engine with
    // untimed work (Caps::untimed, e.g. cmdtime).
    let not_options = [Feature::DebugIo, Feature::Untimed];
    for f in Feature::ALL {
        assert!(
            not_options.contains(&f) || TURNS_ON.iter().any(|t| t.2 == f),
            "{f:?}: no option in TURNS_ON turns it on"
        );
    }
}

/// A trace's sync entries are issued by the general loop only: they turn `Syncs` on, which
/// takes the replay off the plain loop.
#[test]
fn a_trace_with_syncs_is_replayed_by_the_general_loop() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    for (sync, want) in [
        ("", Loop::Plain),
        ("sync", Loop::Full),
        ("datasync", Loop::Full),
    ] {
        let trace = d.path().join(format!("trace-{sync}.log"));
        let line = if sync.is_empty() {
            String::new()
        } else {
            format!("{} {sync} 0 0\n", f.display())
        };
        std::fs::write(
            &trace,
            format!(
                "fio version 2 iolog\n{0} add\n{0} open\n{0} write 0 4096\n{line}{0} close\n",
                f.display()
            ),
        )
        .unwrap();
        let fs = features(d.path(), &format!("read_iolog={}", trace.display())).unwrap();
        assert!(fs.contains(Feature::Replay), "{sync}");
        assert_eq!(fs.contains(Feature::Syncs), !sync.is_empty(), "{sync}");
        assert_eq!(fs.job_loop(), want, "{sync}");
    }
}
