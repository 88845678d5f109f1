//! Non-uniform block distributions (`random_distribution=`), as fio draws them:
//!
//! * `zipf:θ`, `pareto:h`, `normal:σ` — fio's own generators ([`crate::fileservice::FioGen`]:
//!   Gray et al.'s zipf, the power law rank/N = U^p with p = ln(h) / ln(1-h), the mean of
//!   12 uniform draws), one per file with a tausworthe stream seeded from the file's name,
//!   over the file's blocks. The rank drawn is hashed to a block and `:c` (center, 0..1)
//!   moves it; without a center a random offset does. The same job draws the same blocks
//!   as fio (3.33 under `--compat=3.33`, the newest fio's seeds otherwise).
//! * `zoned` / `zoned_abs` — the given share of accesses goes to each zone (size in percent
//!   of the range, or absolute), uniformly within the zone: parsed here, drawn by the
//!   generator as fio draws them (`gen/zoned.rs`).

use crate::fileservice::{FileDist, FioGen};

/// Uniform double in [0, 1) from a 32-bit draw.
#[inline]
pub fn unit(r: u32) -> f64 {
    r as f64 / 4294967296.0
}

/// One zone of `zoned` / `zoned_abs`: share of accesses (percent) and size (percent of the
/// range, or bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zone {
    pub access_pct: u32,
    pub size: u64,
}

/// A distribution over the blocks of one direction.
#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    Uniform,
    /// `center` here and below: fio's `:c` (0..1), negative when not given.
    Zipf {
        theta: f64,
        center: f64,
    },
    Pareto {
        h: f64,
        center: f64,
    },
    Normal {
        dev_pct: f64,
        center: f64,
    },
    /// Zone sizes in percent of the range.
    Zoned(Vec<Zone>),
    /// Zone sizes in bytes.
    ZonedAbs(Vec<Zone>),
    /// The newest fio's `sequence:i0,i1,…`: the n-th I/O of a direction uses block
    /// `seq[n % len]` (plus `(n / len) * len` with `random_sequence_stride`); no randomness.
    /// Drawn by the generator itself, never by a [`Sampler`].
    Sequence(Vec<u64>),
}

impl Dist {
    /// Whether fio's own generators draw it (zipf, pareto, normal): one per file.
    pub fn is_fio_gen(&self) -> bool {
        matches!(
            self,
            Dist::Zipf { .. } | Dist::Pareto { .. } | Dist::Normal { .. }
        )
    }
}

/// Most elements of a `sequence:` distribution (fio's limit).
pub const SEQUENCE_MAX: usize = 64;

/// Parse the element list of `random_distribution=sequence:i0,i1,…` (the part after the
/// colon; decimal block indices only).
pub fn parse_sequence(list: &str) -> Result<Vec<u64>, String> {
    if list.trim().is_empty() {
        return Err("missing pattern in sequence distribution".into());
    }
    let items: Vec<&str> = list.split(',').collect();
    if items.len() > SEQUENCE_MAX {
        return Err(format!(
            "sequence distribution supports up to {SEQUENCE_MAX} elements (got {})",
            items.len()
        ));
    }
    items
        .iter()
        .map(|x| {
            let t = x.trim();
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!(
                    "invalid or negative element {t} in random_sequence"
                ));
            }
            t.parse::<u64>()
                .map_err(|_| format!("invalid or negative element {t} in random_sequence"))
        })
        .collect()
}

/// Parse `random_distribution`'s value for one direction.
pub fn parse_dist(s: &str, kb1024: bool) -> Result<Dist, String> {
    let mut parts = s.split(':');
    let name = parts.next().unwrap_or("");
    let num = |p: Option<&str>, what: &str| -> Result<Option<f64>, String> {
        match p {
            None | Some("") => Ok(None),
            Some(v) => v
                .parse::<f64>()
                .map(Some)
                .map_err(|_| format!("'{v}' is not a valid {what}")),
        }
    };
    // fio's center: -1 when not given (then a random offset moves the ranks).
    let center = |p: Option<&str>| -> Result<f64, String> {
        let Some(c) = num(p, "center")? else {
            return Ok(-1.0);
        };
        if !(0.0..=1.0).contains(&c) {
            return Err(format!("center {c} must be within [0, 1]"));
        }
        Ok(c)
    };
    match name {
        "random" => Ok(Dist::Uniform),
        "zipf" => {
            let theta = num(parts.next(), "zipf theta")?.ok_or("zipf needs a theta: zipf:1.2")?;
            if !(theta > 0.0 && theta.is_finite()) {
                return Err(format!("zipf theta {theta} must be positive"));
            }
            // fio's generator divides by 1 - θ.
            if theta == 1.0 {
                return Err("zipf theta must be different than 1.0".into());
            }
            Ok(Dist::Zipf { theta, center: center(parts.next())? })
        }
        "pareto" => {
            let h = num(parts.next(), "pareto h")?.ok_or("pareto needs h: pareto:0.2")?;
            if !(h > 0.0 && h < 1.0) {
                return Err(format!("pareto h {h} must be within (0, 1)"));
            }
            Ok(Dist::Pareto { h, center: center(parts.next())? })
        }
        "normal" => {
            let dev = num(parts.next(), "normal deviation")?.ok_or("normal needs a deviation in percent: normal:10")?;
            if !(dev > 0.0 && dev <= 100.0) {
                return Err(format!("normal deviation {dev}% must be within (0, 100]"));
            }
            Ok(Dist::Normal { dev_pct: dev, center: center(parts.next())? })
        }
        "zoned" | "zoned_abs" => {
            let mut zones = Vec::new();
            for z in parts {
                let (a, sz) = z.split_once('/').ok_or_else(|| format!("zone '{z}' must be access%/size"))?;
                let access_pct: u32 = a.parse().map_err(|_| format!("'{a}' is not a percentage"))?;
                // zoned: a blank size (`20/`) shares what the others leave, evenly (as fio).
                let size = if name == "zoned" && sz.is_empty() {
                    u64::MAX
                } else if name == "zoned" {
                    sz.parse::<u64>().map_err(|_| format!("'{sz}' is not a percentage"))?
                } else {
                    parse_abs(sz, kb1024)?
                };
                if size == 0 {
                    return Err(format!("zone '{z}' has no size"));
                }
                zones.push(Zone { access_pct, size });
            }
            if zones.is_empty() {
                return Err(format!("{name} needs zones: {name}:60/10:40/90"));
            }
            fill_blank_sizes(&mut zones)?;
            let acc: u32 = zones.iter().map(|z| z.access_pct).sum();
            if acc != 100 {
                return Err(format!("{name}: access percentages add up to {acc}%, not 100%"));
            }
            if name == "zoned" {
                let sz: u64 = zones.iter().map(|z| z.size).sum();
                if sz != 100 {
                    return Err(format!("zoned: zone sizes add up to {sz}%, not 100%"));
                }
                Ok(Dist::Zoned(zones))
            } else {
                Ok(Dist::ZonedAbs(zones))
            }
        }
        "sequence" => parse_sequence(parts.next().unwrap_or("")).map(Dist::Sequence),
        other => Err(format!("'{other}' is not a valid distribution; valid: random, zipf, pareto, normal, zoned, zoned_abs, sequence")),
    }
}

/// Zones of `zoned` with a blank size (`u64::MAX` here) share the percentage the others
/// leave evenly; the division's remainder goes to the last of them so the sizes add up to
/// 100% (the sampler gives the last zone the rounding remainder anyway).
fn fill_blank_sizes(zones: &mut [Zone]) -> Result<(), String> {
    let blank = zones.iter().filter(|z| z.size == u64::MAX).count() as u64;
    if blank == 0 {
        return Ok(());
    }
    let given: u64 = zones
        .iter()
        .filter(|z| z.size != u64::MAX)
        .map(|z| z.size)
        .sum();
    let left = 100u64
        .checked_sub(given)
        .filter(|l| *l >= blank)
        .ok_or_else(|| format!("zoned: zone sizes add up to {given}%, leaving too little for the zones without a size"))?;
    let mut n = 0;
    for z in zones.iter_mut().filter(|z| z.size == u64::MAX) {
        n += 1;
        z.size = if n == blank {
            left - (left / blank) * (blank - 1)
        } else {
            left / blank
        };
    }
    Ok(())
}

fn parse_abs(s: &str, kb1024: bool) -> Result<u64, String> {
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: u64 = s[..digits]
        .parse()
        .map_err(|_| format!("'{s}' is not a size"))?;
    let base: u64 = if kb1024 { 1024 } else { 1000 };
    let mult = match s[digits..].to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => base,
        "m" | "mb" => base.pow(2),
        "g" | "gb" => base.pow(3),
        "t" | "tb" => base.pow(4),
        _ => return Err(format!("'{s}' has an unknown size suffix")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// Per-file sampler state for a distribution.
#[derive(Clone, Debug)]
pub struct Sampler {
    dist: Dist,
    n: u64,
    /// fio's generator of a zipf, pareto or normal distribution.
    fio: Option<FioGen>,
}

impl Sampler {
    /// A sampler over `n` blocks. fio's generators (zipf, pareto, normal)
    /// draw over `nranges` ranges (fio: the file's size in units of the smallest block
    /// size of reads and writes) from `seed`, whatever `n` is (their values are bounded by
    /// the caller); for the others a value past the last block is the last.
    pub fn new(dist: &Dist, n: u64, nranges: u64, seed: u32) -> Self {
        let n = n.max(1);
        let fio_dist = match *dist {
            Dist::Zipf { theta, center } => Some(FileDist::Zipf { theta, center }),
            Dist::Pareto { h, center } => Some(FileDist::Pareto { h, center }),
            Dist::Normal { dev_pct, center } => Some(FileDist::Gauss {
                dev: dev_pct,
                center,
            }),
            _ => None,
        };
        Sampler {
            fio: fio_dist.map(|d| FioGen::new(d, nranges, seed, true)),
            dist: dist.clone(),
            n,
        }
    }

    /// The next block; `u` yields uniforms in [0, 1) (for the uniform distribution; fio's
    /// generators draw from their own streams; the zoned ones are the generator's own). fio's generators
    /// draw ranges of the job's smallest block size: a direction whose blocks are `scale`
    /// ranges long (writes of 64 KiB where reads are of 4 KiB: 16) takes `value / scale`,
    /// so its draws spread over its blocks rather than piling on the last one.
    pub fn next(&mut self, scale: u64, mut u: impl FnMut() -> f64) -> u64 {
        let n = self.n;
        if let Some(g) = &mut self.fio {
            // One such generator serves every direction of the file (fio keeps one per
            // file), so the caller bounds the value by its own direction's blocks.
            return g.next_value() / scale.max(1);
        }
        match &self.dist {
            // Never built for a sequence (the generator walks it); stay total anyway.
            Dist::Sequence(s) => s.first().copied().unwrap_or(0).min(n - 1),
            _ => ((n as f64 * u()) as u64).min(n - 1),
        }
    }
}

/// Chi-square critical value for `df` degrees of freedom at significance 0.001
/// (Wilson–Hilferty approximation).
pub fn chi2_critical_001(df: usize) -> f64 {
    let k = df as f64;
    let z = 3.090_232; // standard normal quantile of 0.999
    k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
}

/// Pearson's chi-square statistic of observed counts against expected probabilities,
/// merging neighbouring bins until each expects at least 5; returns (statistic, df).
pub fn chi2(observed: &[u64], expected_p: &[f64]) -> (f64, usize) {
    let total: u64 = observed.iter().sum();
    let mut stat = 0.0;
    let mut bins = 0usize;
    let (mut o, mut e) = (0.0f64, 0.0f64);
    for (ob, p) in observed.iter().zip(expected_p) {
        o += *ob as f64;
        e += p * total as f64;
        if e >= 5.0 {
            stat += (o - e) * (o - e) / e;
            bins += 1;
            o = 0.0;
            e = 0.0;
        }
    }
    if e > 0.0 {
        stat += (o - e) * (o - e) / e.max(1e-9);
        bins += 1;
    }
    (stat, bins.saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRAWS: usize = 400_000;

    #[test]
    fn zoned_blank_sizes_share_the_rest() {
        let sizes = |s: &str| match parse_dist(s, true).unwrap() {
            Dist::Zoned(z) => z.iter().map(|z| (z.access_pct, z.size)).collect::<Vec<_>>(),
            d => panic!("{d:?}"),
        };
        assert_eq!(
            sizes("zoned:50/5:30/15:20/"),
            vec![(50, 5), (30, 15), (20, 80)]
        );
        assert_eq!(
            sizes("zoned:50/:30/:20/"),
            vec![(50, 33), (30, 33), (20, 34)]
        );
        assert!(parse_dist("zoned:50/60:50/50", true).is_err());
        assert!(parse_dist("zoned:50/100:50/", true).is_err());
    }

    /// The first 16 blocks fio 3.33 reads of `--name=j --ioengine=null --rw=randread
    /// --bs=4k --size=1m --random_distribution=D`: 256 ranges, the file j.0.0's seed
    /// (fio 3.33, repeatable: the jhash of its name, 0xd646691e, times thread number 1).
    #[test]
    fn fio_generators_draw_fio_333s_blocks() {
        let cases = [
            (
                "zipf:1.2",
                "127 161 203 244 161 186 203 203 214 64 182 203 144 165 32 203",
            ),
            (
                "zipf:0.8",
                "218 165 140 41 228 248 203 203 116 113 77 203 164 206 132 161",
            ),
            (
                "pareto:0.2",
                "47 203 203 63 203 102 203 203 163 198 203 203 39 81 40 203",
            ),
            (
                "normal:10",
                "170 212 191 132 65 69 18 66 99 195 161 170 74 23 220 61",
            ),
            (
                "zipf:1.2:0.3",
                "0 34 76 117 34 59 76 76 87 193 55 76 17 38 161 76",
            ),
            (
                "pareto:0.3:0.5",
                "80 153 107 138 216 131 128 128 234 210 65 128 47 89 57 128",
            ),
            (
                "normal:5:0.25",
                "215 127 43 110 236 131 189 153 207 68 160 148 161 173 30 81",
            ),
        ];
        assert_eq!(crate::rng::fio_jhash(b"j.0.0"), 0xd646_691e);
        for (d, want) in cases {
            let mut s = Sampler::new(&parse_dist(d, true).unwrap(), 256, 256, 0xd646_691e);
            let got: Vec<u64> = (0..16).map(|_| s.next(1, || unreachable!())).collect();
            let want: Vec<u64> = want.split(' ').map(|b| b.parse().unwrap()).collect();
            assert_eq!(got, want, "{d}");
        }
    }

    /// The shapes: zipf's hottest block takes the first rank's share (1 / the sum of
    /// k^-θ), pareto:0.2 puts 80 % of the draws on the first 20 % of the ranks, and normal
    /// keeps most draws within a band of the range (the hash scatters where that band
    /// lands). The hash maps ranks to blocks many-to-one (like a random mapping, it leaves
    /// about 1/e of the blocks without a rank), so the hottest fifth of the blocks holds
    /// somewhat more than the hottest fifth of the ranks.
    #[test]
    fn fio_generators_have_their_shapes() {
        let n = 10_000u64;
        let counts = |d: &str| {
            let mut s = Sampler::new(&parse_dist(d, true).unwrap(), n, n, 12345);
            let mut c = vec![0u64; n as usize];
            for _ in 0..DRAWS {
                c[s.next(1, || unreachable!()) as usize] += 1;
            }
            c.sort_unstable_by(|a, b| b.cmp(a));
            c
        };
        let c = counts("zipf:1.2");
        let zetan: f64 = (1..=n).map(|k| (k as f64).powf(-1.2)).sum();
        let top = c[0] as f64 / DRAWS as f64;
        assert!(
            (top - 1.0 / zetan).abs() < 0.01,
            "{top} against {}",
            1.0 / zetan
        );
        let c = counts("pareto:0.2");
        let hot: u64 = c[..(n as usize / 5)].iter().sum();
        let share = hot as f64 / DRAWS as f64;
        assert!((0.8..=0.92).contains(&share), "{share}");
        // normal:10: about 68 % of the draws within one deviation (2,000 values) of the
        // mean, which the hash spreads over distinct blocks.
        let c = counts("normal:10");
        let band: u64 = c[..2000].iter().sum();
        let share = band as f64 / DRAWS as f64;
        assert!((0.6..=0.8).contains(&share), "{share}");
    }

    /// normal over two or three ranges: fio's loop would spin on a draw of n with no
    /// deviation left; every draw ends and names a block.
    #[test]
    fn normal_over_a_few_ranges_ends() {
        for n in [1u64, 2, 3] {
            let mut s = Sampler::new(&parse_dist("normal:10", true).unwrap(), n, n, 7);
            for _ in 0..10_000 {
                assert!(s.next(1, || unreachable!()) < n);
            }
        }
    }

    /// A direction with larger blocks than the ranges (writes of 64 KiB where the job's
    /// smallest block is 4 KiB) gets the values scaled to its blocks, not piled on the last.
    #[test]
    fn larger_blocks_scale_the_values() {
        let (ranges, blocks) = (256u64, 16u64);
        let mut s = Sampler::new(&parse_dist("zipf:0.8", true).unwrap(), blocks, ranges, 9);
        let mut c = vec![0u32; blocks as usize];
        for _ in 0..16_000 {
            c[s.next(ranges / blocks, || unreachable!()) as usize] += 1;
        }
        let last = c[blocks as usize - 1];
        assert!(last < 4_000, "{c:?}");
        assert!(c.iter().filter(|x| **x > 0).count() > 8, "{c:?}");
    }

    #[test]
    fn parse_errors() {
        assert!(parse_dist("zipf", true).is_err());
        assert!(parse_dist("zipf:1", true).is_err());
        assert!(parse_dist("pareto:1.5", true).is_err());
        assert!(parse_dist("zoned:60/10:30/20", true).is_err());
        assert!(parse_dist("zoned:60/10:40/10", true).is_err());
        assert!(parse_dist("normal:0", true).is_err());
        assert!(parse_dist("gamma:3", true).is_err());
        assert_eq!(
            parse_dist("zipf:1.1:0.5", true).unwrap(),
            Dist::Zipf {
                theta: 1.1,
                center: 0.5
            }
        );
    }
}
