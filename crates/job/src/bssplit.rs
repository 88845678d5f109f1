//! `bssplit=bs/perc[:bs/perc...][,write-list[,trim-list]]` (fio's `str_split_parse`).

use crate::value::{parse_size, KbBase};

/// One `bssplit` entry: block size and its share in percent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BsSplit {
    pub bs: u64,
    pub perc: u32,
}

/// At most this many entries per direction (fio's `BSSPLIT_MAX`).
pub const BSSPLIT_MAX: usize = 64;

fn parse_one(s: &str, kb: KbBase) -> Result<Vec<BsSplit>, String> {
    let mut out = Vec::new();
    let mut missing = 0u32;
    let mut sum = 0u32;
    for part in s.split(':') {
        if part.is_empty() {
            continue;
        }
        let (bs, perc) = match part.split_once('/') {
            // A blank percentage (`1k/`) is filled in like a missing one.
            Some((b, "")) => (b, None),
            Some((b, p)) => {
                let p: u32 = p
                    .parse()
                    .map_err(|_| format!("'{part}': percentage '{p}' is not a whole number"))?;
                if p > 100 {
                    return Err(format!("'{part}': percentage {p} is above 100"));
                }
                (b, Some(p))
            }
            None => (part, None),
        };
        let bs = parse_size(bs, kb)?;
        if bs == 0 {
            return Err(format!("'{part}': block size must be at least 1"));
        }
        match perc {
            Some(p) => sum += p,
            None => missing += 1,
        }
        out.push(BsSplit {
            bs,
            perc: perc.unwrap_or(u32::MAX),
        });
    }
    if out.is_empty() {
        return Err(format!("'{s}': no block sizes given"));
    }
    if out.len() > BSSPLIT_MAX {
        return Err(format!(
            "'{s}': at most {BSSPLIT_MAX} block sizes are allowed"
        ));
    }
    if sum > 100 {
        return Err(format!(
            "'{s}': percentages add up to {sum}%, more than 100%"
        ));
    }
    if let Some(each) = (100 - sum).checked_div(missing) {
        for e in out.iter_mut().filter(|e| e.perc == u32::MAX) {
            e.perc = each;
        }
    }
    // As in fio, a total below 100% leaves the remainder to the last entry.
    Ok(out)
}

/// Parse a full bssplit value into read, write and trim lists.
pub fn parse_bssplit(s: &str, kb: KbBase) -> Result<[Vec<BsSplit>; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() > 3 {
        return Err(format!(
            "'{s}': at most three lists (read,write,trim) are allowed"
        ));
    }
    let mut out: [Vec<BsSplit>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut last: Option<Vec<BsSplit>> = None;
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() {
            continue;
        }
        let l = parse_one(p, kb)?;
        out[i] = l.clone();
        last = Some(l);
    }
    let last = last.ok_or_else(|| "empty value".to_string())?;
    for slot in out.iter_mut().skip(parts.len()) {
        *slot = last.clone();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    const K: KbBase = KbBase::K1024;

    #[test]
    fn fills_missing_percentages() {
        let r = parse_bssplit("4k/10:8k:16k", K).unwrap();
        assert_eq!(
            r[0],
            vec![
                BsSplit { bs: 4096, perc: 10 },
                BsSplit { bs: 8192, perc: 45 },
                BsSplit {
                    bs: 16384,
                    perc: 45
                }
            ]
        );
        assert_eq!(r[1], r[0]);
        assert_eq!(r[2], r[0]);
    }

    #[test]
    fn blank_percentages_share_the_rest() {
        let r = parse_bssplit("512/25:1k/:2k/:4k/", K).unwrap();
        let percs: Vec<(u64, u32)> = r[0].iter().map(|e| (e.bs, e.perc)).collect();
        assert_eq!(percs, vec![(512, 25), (1024, 25), (2048, 25), (4096, 25)]);
        assert_eq!(parse_bssplit("4k/:8k/", K).unwrap()[1][1].perc, 50);
    }

    #[test]
    fn per_direction_lists() {
        let r = parse_bssplit("4k/50:8k/50,16k/100", K).unwrap();
        assert_eq!(r[0].len(), 2);
        assert_eq!(
            r[1],
            vec![BsSplit {
                bs: 16384,
                perc: 100
            }]
        );
        assert_eq!(r[2], r[1]);
    }

    #[test]
    fn rejects_over_100() {
        assert!(parse_bssplit("4k/50:64k/60", K).is_err());
        assert!(parse_bssplit("4k/x", K).is_err());
        assert!(parse_bssplit("", K).is_err());
    }
}
