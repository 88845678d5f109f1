//! The integration tests, one test program: each `tests/NAME.rs` below is a module, so
//! the shared helpers (`tests/common`) and the dependencies are compiled and linked once, not
//! once per file, and the tests of all files share the test threads. Run one file's tests
//! with `cargo test --test suite NAME::`.
//!
//! The files that stay programs of their own are the `[[test]]` targets in Cargo.toml: `cli`,
//! `corpus` and `dir_engines` (also run without the default features), `mpi` (feature `mpi`),
//! `io_uring_probe` (it flips a system-wide sysctl, so nothing may run beside it), and
//! `rate_latency` and `self_measure`, whose lateness and overhead bounds hold beside their
//! own tests but not beside the CPU-heavy ones of other files.
//! `architecture::every_test_file_runs` checks that each file is in one place or the other.

mod common;

mod architecture;
mod async_engines;
mod byte_layout;
mod cgroups;
mod char_devices;
mod cmdhelp;
mod completions;
mod consumers;
mod credentials;
mod default_benchmark;
mod disk_slaves;
mod engines_hw;
mod faults;
mod file_service;
mod file_stats;
mod fill;
mod fio_compat;
mod fio_offsets;
mod fio_options;
mod group_reporting;
mod http_engine;
mod interference;
mod iolog;
mod iolog_passes;
mod iolog_queued;
mod issue28_logs;
mod issue28_seeds;
mod issue28_tls;
mod issue28_verify;
mod issue28_verify_replay;
mod job_control;
mod live;
mod log_options;
mod logs;
mod metadata;
mod nbd_engine;
mod net_engines;
mod newest;
mod newest_output;
mod noio_engines;
mod numa;
mod offload;
mod page_cache;
mod page_fault;
mod parity_cli;
mod parity_values;
mod parse_only;
mod plain_loop;
mod provenance;
mod pts;
mod ramp;
mod remote;
mod remote_security;
mod remote_tls;
mod report_compare;
mod results_store;
mod rt_study;
mod signals;
mod splice_defrag;
mod steady_watch;
mod study_matrix;
mod study_targets;
mod study_writemodes;
mod sweep;
mod sysio_options;
mod timed_commands;
mod trim_verify;
mod trims;
mod verify;
mod verify_cross;
mod verify_formats;
mod verify_passes;
mod verify_policy;
mod write_data;
mod zones;
