//! Non-uniform block distributions (`random_distribution=`), exact samplers with fio's
//! parameter meanings:
//!
//! * `zipf:θ` — P(rank k) ∝ k^-θ over the N blocks (rejection-inversion sampling,
//!   Hörmann & Derflinger 1996: exact, O(1) per draw, any θ > 0).
//! * `pareto:h` — fio's power law: rank/N = U^p with p = ln(h) / ln(1-h), so a fraction
//!   1-h of the accesses goes to the first h of the ranks (pareto:0.2 is the 80/20 rule).
//!   CDF of rank/N: F(y) = y^(1/p).
//! * `normal:σ` — Gaussian with standard deviation σ percent of N around the center,
//!   truncated to the range (redrawn outside it).
//! * `zoned` / `zoned_abs` — the given share of accesses goes to each zone (size in percent
//!   of the range, or absolute), uniformly within the zone.
//!
//! Ranks are mapped to blocks by a permutation, so the hot blocks are spread over the file
//! as fio spreads them (fio hashes ranks, which is not one-to-one and therefore changes the
//! distribution; a permutation keeps it exact). `:c` (center, 0..1) rotates the blocks.

/// Uniform double in [0, 1) from a 32-bit draw.
#[inline]
pub fn unit(r: u32) -> f64 {
    r as f64 / 4294967296.0
}

fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

/// Zipf sampler over ranks 1..=n by rejection-inversion.
#[derive(Clone, Debug)]
pub struct Zipf {
    n: f64,
    s: f64,
    h_int_x1: f64,
    h_int_n: f64,
    cut: f64,
}

impl Zipf {
    pub fn new(n: u64, s: f64) -> Self {
        let mut z = Zipf {
            n: n as f64,
            s,
            h_int_x1: 0.0,
            h_int_n: 0.0,
            cut: 0.0,
        };
        z.h_int_x1 = z.h_integral(1.5) - 1.0;
        z.h_int_n = z.h_integral(n as f64 + 0.5);
        z.cut = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }
    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.s) * lx) * lx
    }
    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (helper1(t) * x).exp()
    }
    /// A rank in 0..n (0 = hottest), drawing uniforms from `u`.
    pub fn sample(&self, mut u: impl FnMut() -> f64) -> u64 {
        loop {
            let v = self.h_int_n + u() * (self.h_int_x1 - self.h_int_n);
            let x = self.h_integral_inverse(v);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.cut || v >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64 - 1;
            }
        }
    }
    /// P(rank k), k in 0..n (for tests and documentation).
    pub fn pmf(n: u64, s: f64, k: u64) -> f64 {
        let norm: f64 = (1..=n).map(|i| (i as f64).powf(-s)).sum();
        ((k + 1) as f64).powf(-s) / norm
    }
}

/// fio's Pareto power: rank/N = U^p.
pub fn pareto_pow(h: f64) -> f64 {
    h.ln() / (1.0 - h).ln()
}

/// A standard normal deviate from two uniforms (Box–Muller).
pub fn std_normal(u1: f64, u2: f64) -> f64 {
    let u1 = u1.max(f64::MIN_POSITIVE);
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A bijection on 0..n: multiply-add modulo the next power of two, walking the cycle until
/// the value falls below n. Spreads neighbouring ranks over the whole range.
#[derive(Clone, Copy, Debug)]
pub struct Permute {
    n: u64,
    mask: u64,
    mul: u64,
    add: u64,
}

impl Permute {
    pub fn new(n: u64, salt: u64) -> Self {
        let m = n.max(1).next_power_of_two();
        // Odd multiplier: a bijection modulo any power of two.
        Permute {
            n: n.max(1),
            mask: m - 1,
            mul: 0x9e37_79b9_7f4a_7c15 | 1,
            add: salt.wrapping_mul(0xbf58_476d_1ce4_e5b9),
        }
    }
    #[inline]
    pub fn apply(&self, x: u64) -> u64 {
        let mut v = x;
        loop {
            v = v.wrapping_mul(self.mul).wrapping_add(self.add) & self.mask;
            if v < self.n {
                return v;
            }
        }
    }
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
    let center = |p: Option<&str>| -> Result<f64, String> {
        let c = num(p, "center")?.unwrap_or(0.0);
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
            Ok(Dist::Zipf { theta, center: center(parts.next())? })
        }
        "pareto" => {
            let h = num(parts.next(), "pareto h")?.ok_or("pareto needs h: pareto:0.2")?;
            if !(h > 0.0 && h < 1.0) || (h - 0.5).abs() < 1e-12 {
                return Err(format!("pareto h {h} must be within (0, 1) and not 0.5"));
            }
            Ok(Dist::Pareto { h, center: center(parts.next())? })
        }
        "normal" => {
            let dev = num(parts.next(), "normal deviation")?.ok_or("normal needs a deviation in percent: normal:10")?;
            if !(dev > 0.0 && dev <= 100.0) {
                return Err(format!("normal deviation {dev}% must be within (0, 100]"));
            }
            Ok(Dist::Normal { dev_pct: dev, center: if let Some(c) = parts.next() { center(Some(c))? } else { 0.5 } })
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
    zipf: Option<Zipf>,
    perm: Permute,
    rot: u64,
    /// Zone boundaries in blocks: (first block, number of blocks, cumulative access %).
    zones: Vec<(u64, u64, u32)>,
}

impl Sampler {
    /// A sampler over `n` blocks of `block` bytes.
    pub fn new(dist: &Dist, n: u64, block: u64, salt: u64) -> Self {
        let n = n.max(1);
        let center = match dist {
            Dist::Zipf { center, .. } | Dist::Pareto { center, .. } => *center,
            _ => 0.0,
        };
        let mut zones = Vec::new();
        let mut cum = 0u32;
        let mut first = 0u64;
        let zone_list: Vec<(u32, u64)> = match dist {
            Dist::Zoned(z) => z
                .iter()
                .map(|z| (z.access_pct, (n as u128 * z.size as u128 / 100) as u64))
                .collect(),
            Dist::ZonedAbs(z) => z
                .iter()
                .map(|z| (z.access_pct, z.size / block.max(1)))
                .collect(),
            _ => Vec::new(),
        };
        let zl = zone_list.len();
        for (i, (pct, mut blocks)) in zone_list.into_iter().enumerate() {
            if i + 1 == zl && matches!(dist, Dist::Zoned(_)) {
                blocks = n - first; // rounding remainder to the last zone
            }
            let blocks = blocks.min(n.saturating_sub(first)).max(1);
            cum += pct;
            zones.push((first.min(n - 1), blocks, cum));
            first += blocks;
        }
        Sampler {
            zipf: match dist {
                Dist::Zipf { theta, .. } => Some(Zipf::new(n, *theta)),
                _ => None,
            },
            perm: Permute::new(n, salt),
            rot: (center * n as f64) as u64 % n,
            dist: dist.clone(),
            n,
            zones,
        }
    }

    /// Map a rank (0 = hottest) to a block.
    #[inline]
    pub fn block_of_rank(&self, rank: u64) -> u64 {
        (self.perm.apply(rank) + self.rot) % self.n
    }

    /// The next block; `u` yields uniforms in [0, 1).
    pub fn next(&self, mut u: impl FnMut() -> f64) -> u64 {
        let n = self.n;
        match &self.dist {
            Dist::Uniform => ((n as f64 * u()) as u64).min(n - 1),
            Dist::Zipf { .. } => {
                let z = self.zipf.as_ref().expect("zipf sampler");
                self.block_of_rank(z.sample(&mut u))
            }
            Dist::Pareto { h, .. } => {
                let p = pareto_pow(*h);
                let rank = ((n as f64 * u().powf(p)) as u64).min(n - 1);
                self.block_of_rank(rank)
            }
            Dist::Normal { dev_pct, center } => {
                let sigma = dev_pct / 100.0 * n as f64;
                let mean = center * n as f64;
                loop {
                    let x = mean + sigma * std_normal(u(), u());
                    if x >= 0.0 && x < n as f64 {
                        // Gaussian locality is the point of this distribution: blocks near
                        // the center are hit most, so no scrambling here.
                        return x as u64;
                    }
                }
            }
            // Never built for a sequence (the generator walks it); stay total anyway.
            Dist::Sequence(s) => s.first().copied().unwrap_or(0).min(n - 1),
            Dist::Zoned(_) | Dist::ZonedAbs(_) => {
                let r = (u() * 100.0) as u32 + 1;
                let (first, blocks, _) = *self
                    .zones
                    .iter()
                    .find(|z| r <= z.2)
                    .unwrap_or(self.zones.last().expect("zones"));
                (first + ((blocks as f64 * u()) as u64).min(blocks - 1)).min(n - 1)
            }
        }
    }

    /// The zones as (first block, blocks, cumulative access %) (for tests).
    pub fn zones(&self) -> &[(u64, u64, u32)] {
        &self.zones
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
    use crate::rng::Taus88;

    fn uniforms(seed: u32) -> impl FnMut() -> f64 {
        let mut r = Taus88::new(seed);
        move || unit(r.next_u32())
    }

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

    fn assert_fits(name: &str, observed: &[u64], expected: &[f64]) {
        let (stat, df) = chi2(observed, expected);
        let crit = chi2_critical_001(df);
        assert!(
            stat < crit,
            "{name}: chi-square {stat:.1} with {df} df exceeds the 0.1% critical value {crit:.1}"
        );
    }

    #[test]
    fn zipf_block_hits_fit_zipf() {
        for theta in [0.8, 1.2, 2.0] {
            let n = 1000u64;
            let s = Sampler::new(&Dist::Zipf { theta, center: 0.0 }, n, 4096, 7);
            let mut u = uniforms(11);
            let mut hits = vec![0u64; n as usize];
            for _ in 0..DRAWS {
                hits[s.next(&mut u) as usize] += 1;
            }
            // Expected probability of each block: that of the rank mapped to it.
            let mut expected = vec![0.0; n as usize];
            for rank in 0..n {
                expected[s.block_of_rank(rank) as usize] = Zipf::pmf(n, theta, rank);
            }
            assert_fits(&format!("zipf:{theta}"), &hits, &expected);
        }
    }

    #[test]
    fn pareto_ranks_fit_the_power_law() {
        let n = 10_000u64;
        for h in [0.2, 0.3] {
            let s = Sampler::new(&Dist::Pareto { h, center: 0.0 }, n, 4096, 3);
            let mut u = uniforms(5);
            // Observed rank histogram in 50 bins of equal expected probability.
            let p = pareto_pow(h);
            let bins = 50;
            let edges: Vec<f64> = (0..=bins)
                .map(|i| n as f64 * (i as f64 / bins as f64).powf(p))
                .collect();
            let mut inv = vec![0u64; n as usize];
            for r in 0..n {
                inv[s.block_of_rank(r) as usize] = r;
            }
            let mut hits = vec![0u64; bins];
            for _ in 0..DRAWS {
                let rank = inv[s.next(&mut u) as usize] as f64;
                let b = edges
                    .partition_point(|e| *e <= rank)
                    .saturating_sub(1)
                    .min(bins - 1);
                hits[b] += 1;
            }
            // Integer ranks: the expected mass of bin i is F(ceil(edge_{i+1})) - F(ceil(edge_i)).
            let cdf = |x: f64| (x.ceil().min(n as f64) / n as f64).powf(1.0 / p);
            let expected: Vec<f64> = (0..bins)
                .map(|i| cdf(edges[i + 1]) - cdf(edges[i]))
                .collect();
            assert_fits(&format!("pareto:{h}"), &hits, &expected);
            // The 80/20 rule for h=0.2.
            if h == 0.2 {
                let hot: u64 = hits[..].iter().take(bins * 8 / 10).sum();
                let share = hot as f64 / DRAWS as f64;
                assert!((share - 0.8).abs() < 0.01, "{share}");
            }
        }
    }

    #[test]
    fn normal_fits_a_truncated_gaussian() {
        let n = 10_000u64;
        let (dev, center) = (10.0, 0.5);
        let s = Sampler::new(
            &Dist::Normal {
                dev_pct: dev,
                center,
            },
            n,
            4096,
            1,
        );
        let mut u = uniforms(9);
        let bins = 100usize;
        let mut hits = vec![0u64; bins];
        for _ in 0..DRAWS {
            hits[(s.next(&mut u) * bins as u64 / n) as usize] += 1;
        }
        // Normal CDF by erf (Abramowitz–Stegun 7.1.26 is too coarse; use a series).
        let phi = |x: f64| 0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2));
        let (mu, sd) = (center * n as f64, dev / 100.0 * n as f64);
        let total = phi((n as f64 - mu) / sd) - phi(-mu / sd);
        let expected: Vec<f64> = (0..bins)
            .map(|i| {
                let a = (i as f64 * n as f64 / bins as f64 - mu) / sd;
                let b = ((i + 1) as f64 * n as f64 / bins as f64 - mu) / sd;
                (phi(b) - phi(a)) / total
            })
            .collect();
        assert_fits("normal:10", &hits, &expected);
    }

    /// erf by its Taylor series (|x| small) and continued fraction otherwise; 1e-12 accurate.
    fn erf(x: f64) -> f64 {
        if x.abs() < 3.0 {
            let mut sum = x;
            let mut term = x;
            let mut k = 0;
            while term.abs() > 1e-17 * sum.abs().max(1e-300) && k < 200 {
                k += 1;
                term *= -x * x / k as f64;
                sum += term / (2 * k + 1) as f64;
            }
            2.0 / std::f64::consts::PI.sqrt() * sum
        } else {
            // erfc continued fraction.
            let t = x.abs();
            let mut f = 0.0;
            for k in (1..60).rev() {
                f = (k as f64 / 2.0) / (t + f);
            }
            let erfc = (-t * t).exp() / std::f64::consts::PI.sqrt() / (t + f);
            (1.0 - erfc) * x.signum()
        }
    }

    #[test]
    fn zoned_access_shares() {
        let d = parse_dist("zoned:60/10:30/20:10/70", true).unwrap();
        let n = 10_000u64;
        let s = Sampler::new(&d, n, 4096, 0);
        let mut u = uniforms(2);
        let mut hits = vec![0u64; 3];
        let mut cells = vec![0u64; 100];
        for _ in 0..DRAWS {
            let b = s.next(&mut u);
            let z = if b < 1000 {
                0
            } else if b < 3000 {
                1
            } else {
                2
            };
            hits[z] += 1;
            cells[(b * 100 / n) as usize] += 1;
        }
        assert_fits("zoned shares", &hits, &[0.6, 0.3, 0.1]);
        // Uniform within zones: cell probability = zone share / cells in the zone.
        let expected: Vec<f64> = (0..100)
            .map(|c| {
                if c < 10 {
                    0.06
                } else if c < 30 {
                    0.015
                } else {
                    0.1 / 70.0
                }
            })
            .collect();
        assert_fits("zoned cells", &cells, &expected);
        let d = parse_dist("zoned_abs:50/1m:50/3m", true).unwrap();
        let s = Sampler::new(&d, 1024, 4096, 0);
        assert_eq!(s.zones(), &[(0, 256, 50), (256, 768, 100)]);
    }

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 7, 1000, 4097] {
            let p = Permute::new(n, 42);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let v = p.apply(x) as usize;
                assert!(!seen[v]);
                seen[v] = true;
            }
        }
    }

    #[test]
    fn parse_errors() {
        assert!(parse_dist("zipf", true).is_err());
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
