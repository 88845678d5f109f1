//! Per-request I/O priorities (fio's `cmdprio_*` options of io_uring and libaio). The
//! engines that take them list [`OPTIONS`] among their own; the job loop gives each
//! request its priority (a share of requests gets the command priority).

use flexio_job::engine_opts::parse;
use flexio_job::table::Kind;

flexio_job::engine_options! {
    /// Command priorities per direction (read, write).
    pub struct CmdprioOpts; rows OPTIONS;
    /// Share of requests (percent) sent with the command priority.
    cmdprio_percentage: [u32; 2] = [0, 0],
        "cmdprio_percentage", Kind::IntDir, "", "Send high priority I/O this percentage of the time",
        |v, _| parse::rw_ints(v, [0, 0], 0, 100);
    /// Their I/O priority class (1 real-time, 2 best-effort, 3 idle).
    cmdprio_class: [u32; 2] = [1, 1],
        "cmdprio_class", Kind::IntDir, "1", "Set asynchronous IO priority class",
        |v, _| parse::rw_ints(v, [1, 1], 1, 3);
    /// Their priority level within the class.
    cmdprio: [u32; 2] = [0, 0],
        "cmdprio", Kind::IntDir, "0", "Set asynchronous IO priority level",
        |v, _| parse::rw_ints(v, [0, 0], 0, 7);
    /// Per block size: the share of requests with a command priority, and optionally
    /// that priority (read and write lists).
    cmdprio_bssplit: [Vec<BsPrio>; 2] = [Vec::new(), Vec::new()],
        "cmdprio_bssplit", Kind::Str, "", "Set priority percentages for different block sizes",
        |v, kb| parse_bssplit(flexio_job::table::req(v)?, kb);
    /// Their priority hint (fio 3.36+: `class << 13 | hint << 3 | level`, e.g. a command
    /// duration limit descriptor).
    cmdprio_hint: [u32; 2] = [0, 0],
        "cmdprio_hint", Kind::IntDir, "0", "Set asynchronous IO priority hint",
        |v, _| parse::rw_ints(v, [0, 0], 0, 1023), since "3.36";
}

/// One `cmdprio_bssplit` entry: requests of `bs` bytes get a command priority `pct` percent
/// of the time; `prio` is (class, level, hint) when the entry gives them, else
/// cmdprio_class/cmdprio (hint 0).
#[derive(Clone, Debug, PartialEq)]
pub struct BsPrio {
    pub bs: u64,
    pub pct: u32,
    pub prio: Option<(u32, u32, u32)>,
}

/// fio's forms, entries separated by `:`, read and write lists by `,` (one list: both):
/// `bs/pct`, `bs/pct/class/level`, and (fio 3.36+) `bs/pct/class/level/hint`.
fn parse_bssplit(v: &str, kb: flexio_job::value::KbBase) -> Result<[Vec<BsPrio>; 2], String> {
    let bad = || "invalid cmdprio_bssplit format".to_string();
    let mut dirs: Vec<Vec<BsPrio>> = Vec::new();
    for list in v.split(',').take(2) {
        let mut out = Vec::new();
        for e in list.split(':').filter(|e| !e.is_empty()) {
            let f: Vec<&str> = e.split('/').collect();
            if !matches!(f.len(), 2 | 4 | 5) {
                return Err(bad());
            }
            let num = |s: &str, max: u32| -> Result<u32, String> {
                s.parse::<u32>().ok().filter(|n| *n <= max).ok_or_else(bad)
            };
            let bs = flexio_job::value::parse_size(f[0], kb).map_err(|_| bad())?;
            let pct = num(f[1], u32::MAX)?;
            let prio = if f.len() >= 4 {
                let hint = if f.len() == 5 {
                    num(f[4], u32::MAX)?.min(1023)
                } else {
                    0
                };
                Some((num(f[2], 3)?, num(f[3], 7)?, hint))
            } else {
                None
            };
            out.push(BsPrio { bs, pct, prio });
        }
        dirs.push(out);
    }
    let read = dirs.first().cloned().unwrap_or_default();
    let write = dirs.get(1).cloned().unwrap_or_else(|| read.clone());
    Ok([read, write])
}

impl CmdprioOpts {
    /// Whether any request gets a command priority.
    pub fn active(&self) -> bool {
        self.cmdprio_percentage.iter().any(|p| *p > 0)
            || self
                .cmdprio_bssplit
                .iter()
                .any(|l| l.iter().any(|e| e.pct > 0))
    }

    /// cmdprio_bssplit per direction as (block size, percent, ioprio value).
    pub fn bssplit_values(&self) -> [Vec<(u64, u32, u16)>; 2] {
        [0, 1].map(|d| {
            self.cmdprio_bssplit[d]
                .iter()
                .map(|e| {
                    let (class, level, hint) = e.prio.unwrap_or((
                        self.cmdprio_class[d],
                        self.cmdprio[d],
                        self.cmdprio_hint[d],
                    ));
                    (e.bs, e.pct, ((class << 13) | (hint << 3) | level) as u16)
                })
                .collect()
        })
    }

    /// The ioprio value (class << 13 | hint << 3 | level) of command-priority requests per
    /// direction.
    pub fn values(&self) -> [u16; 2] {
        [0, 1].map(|d| {
            ((self.cmdprio_class[d] << 13) | (self.cmdprio_hint[d] << 3) | self.cmdprio[d]) as u16
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flexio_job::value::KbBase;

    #[test]
    fn bssplit_forms() {
        let v = parse_bssplit("4k/50/1/2:8k/10", KbBase::K1024).unwrap();
        assert_eq!(v[0], v[1], "one list: both directions");
        assert_eq!(
            v[0],
            vec![
                BsPrio {
                    bs: 4096,
                    pct: 50,
                    prio: Some((1, 2, 0))
                },
                BsPrio {
                    bs: 8192,
                    pct: 10,
                    prio: None
                },
            ]
        );
        let v = parse_bssplit("4k/20,64k/30/3/7/9", KbBase::K1024).unwrap();
        assert_eq!(
            v[1],
            vec![BsPrio {
                bs: 65536,
                pct: 30,
                prio: Some((3, 7, 9))
            }]
        );
        for bad in ["4k/50/1", "4k", "x/5", "4k/50/4/0", "4k/50/1/8"] {
            assert!(parse_bssplit(bad, KbBase::K1024).is_err(), "{bad}");
        }
        let o = CmdprioOpts {
            cmdprio_bssplit: parse_bssplit("4k/50:8k/10/3/5", KbBase::K1024).unwrap(),
            cmdprio_class: [2, 2],
            cmdprio: [1, 1],
            ..Default::default()
        };
        assert!(o.active());
        assert_eq!(
            o.bssplit_values()[0],
            vec![(4096, 50, 0x4001), (8192, 10, 0x6005)]
        );
        // cmdprio_hint (fio 3.36): bits 3..12, for the percentage and two-field forms.
        let o = CmdprioOpts {
            cmdprio_class: [2, 1],
            cmdprio: [1, 0],
            cmdprio_hint: [3, 1023],
            cmdprio_bssplit: parse_bssplit("4k/50:8k/10/3/5", KbBase::K1024).unwrap(),
            ..Default::default()
        };
        assert_eq!(o.values(), [2 << 13 | 3 << 3 | 1, 1 << 13 | 1023 << 3]);
        assert_eq!(o.bssplit_values()[0][0], (4096, 50, 0x4019));
        assert_eq!(
            o.bssplit_values()[0][1],
            (8192, 10, 0x6005),
            "its own hint: 0"
        );
    }
}
