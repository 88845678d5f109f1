//! fio options that complete its option set: `write_barrier`, `atomic`, `gtod_cpu`,
//! `block_error_percentiles` and `profile` (fio's built-in tiobench and act workloads).
//! Typed here, in [`JobOptions::extra`](crate::JobOptions); their rows are in
//! `table/extra.rs`.

/// fio's built-in workload profiles (`--profile=NAME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    Tiobench,
    Act,
}

impl Profile {
    pub const CHOICES: &'static [(&'static str, &'static str)] = &[
        ("tiobench", "tiotest/tiobench benchmark"),
        ("act", "ACT Aerospike like benchmark"),
    ];

    pub fn parse(s: &str) -> Result<Profile, String> {
        match s {
            "tiobench" => Ok(Profile::Tiobench),
            "act" => Ok(Profile::Act),
            _ => Err(format!("profile '{s}' not found")),
        }
    }

    /// The profile's job lines, as fio 3.33 generates them: (section name, lines); the
    /// first section is the global one. fio 3.33 never passes the profile's own options
    /// (`size`, `block`, `numruns`, `dir`, `threads`; `device-names`, `load`, ...) to the
    /// profile, so the jobs are always these (verified with `fio --profile=tiobench
    /// --debug=parse`, whatever those options say): tiobench sizes its four files from the
    /// machine's memory (`4*1024*$mb_memory` bytes in all), and act, which has no device
    /// names then, fails.
    pub fn jobs(self) -> Result<Vec<(&'static str, Vec<&'static str>)>, String> {
        match self {
            Profile::Tiobench => Ok(vec![
                (
                    "global",
                    vec![
                        "buffered=0",
                        "size=4*1024*$mb_memory",
                        "bs=4096",
                        "loops=1",
                        "directory=./",
                        "numjobs=1",
                        "timeout=600",
                        "group_reporting",
                        "thread",
                        "overwrite=1",
                        "filename=.fio.tio.1:.fio.tio.2:.fio.tio.3:.fio.tio.4",
                        "ioengine=sync",
                    ],
                ),
                ("seqwrite", vec!["name=seqwrite", "rw=write", "end_fsync=1"]),
                (
                    "randwrite",
                    vec!["name=randwrite", "stonewall", "rw=randwrite", "end_fsync=1"],
                ),
                ("seqread", vec!["name=seqread", "stonewall", "rw=read"]),
                ("randread", vec!["name=randread", "stonewall", "rw=randread"]),
            ]),
            Profile::Act => Err(
                "act: you need to set IO target(s) with the device-names option.\nfio: profile act prep failed"
                    .into(),
            ),
        }
    }
}

/// The options of this module.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExtraOptions {
    /// `write_barrier`: every Nth write a barrier write (0 = none).
    pub write_barrier: u64,
    /// `atomic`: atomic writes (fio 3.33: O_ATOMIC with O_DIRECT; newer: RWF_ATOMIC).
    pub atomic: bool,
    /// `gtod_cpu`: the CPU of a thread that keeps the time for the jobs.
    pub gtod_cpu: Option<u32>,
    /// `block_error_percentiles`: per-block trim/write outcomes and their histogram.
    pub block_error_percentiles: bool,
    /// `profile` as a job option (fio stores it and does nothing with it there; the
    /// command line's `--profile` runs the profile).
    pub profile: Option<Profile>,
    /// `verify_policy=fsynced` (the newest fio): only writes an fsync that completed
    /// covers are verified.
    pub verify_fsynced: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles() {
        assert_eq!(Profile::parse("tiobench"), Ok(Profile::Tiobench));
        assert_eq!(
            Profile::parse("nope").unwrap_err(),
            "profile 'nope' not found"
        );
        let j = Profile::Tiobench.jobs().unwrap();
        assert_eq!(j.len(), 5);
        assert_eq!(j[0].0, "global");
        assert!(Profile::Act
            .jobs()
            .unwrap_err()
            .starts_with("act: you need to set IO target(s)"));
    }
}
