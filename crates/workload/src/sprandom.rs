//! `sprandom` (fio 3.41+): SSD preconditioning. The job writes the device's physical
//! capacity once (logical size plus over-provisioning), choosing offsets so that equal
//! regions of the write stream end with the invalid-block distribution a device reaches
//! under steady random writes.
//!
//! Per region `r` a share `p_r` of the writes is kept and written again in the next region
//! (which invalidates the first copy); fresh offsets come from an LFSR over the file's blocks
//! (each block once). The shares follow fio's model: WAF = 0.5 / op + 0.7, garbage-collection
//! validity g = 1 − 1 / WAF, validity v falling linearly from 1 to g, resampled at equal
//! steps of the cumulative 1 / v and reversed.

use crate::rng::{Lfsr, Taus88};

/// The parameters, resolved by the planner.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SprSpec {
    /// Physical capacity in blocks (logical + over-provisioning, rounded down to blocks).
    pub phys_blocks: u64,
    /// `spr_num_regions`.
    pub regions: u32,
    /// `spr_op`.
    pub op: f64,
    /// `spr_cs > 0`: a region's rewrites are issued at the end of the next region.
    pub defer: bool,
    /// Seed of the LFSR and of the keep draws.
    pub seed: u64,
}

/// Physical capacity of `logical` bytes with over-provisioning `op`, rounded down to `bs`.
pub fn physical_bytes(logical: u64, op: f64, bs: u64) -> u64 {
    let extra = (logical as f64 * op).ceil().max(0.0) as u64;
    let p = logical.saturating_add(extra);
    p / bs.max(1) * bs.max(1)
}

/// Invalid-block probabilities per region, in 1/10000.
pub fn keep_probabilities(regions: u32, op: f64) -> Vec<u32> {
    let n = regions.max(1) as usize;
    let waf = 0.5 / op + 0.7;
    let g = 1.0 - 1.0 / waf;
    let v: Vec<f64> = (0..n)
        .map(|i| {
            if n == 1 {
                1.0
            } else {
                1.0 + (g - 1.0) * i as f64 / (n - 1) as f64
            }
        })
        .collect();
    let mut x = Vec::with_capacity(n);
    let mut acc = 0.0;
    for vi in &v {
        acc += 1.0 / vi;
        x.push(acc);
    }
    let resampled: Vec<f64> = (0..n)
        .map(|j| {
            let xj = if n == 1 {
                x[0]
            } else {
                x[0] + (x[n - 1] - x[0]) * j as f64 / (n - 1) as f64
            };
            // Linear interpolation of v over x (x is increasing).
            let k = x.iter().position(|xi| *xi >= xj).unwrap_or(n - 1);
            if k == 0 {
                v[0]
            } else {
                let (x0, x1, v0, v1) = (x[k - 1], x[k], v[k - 1], v[k]);
                if x1 == x0 {
                    v1
                } else {
                    v0 + (v1 - v0) * (xj - x0) / (x1 - x0)
                }
            }
        })
        .collect();
    resampled
        .iter()
        .rev()
        .map(|vr| ((1.0 - vr) * 10000.0).round().clamp(0.0, 10000.0) as u32)
        .collect()
}

/// The write-offset source of a sprandom job (block numbers of its one file).
#[derive(Clone, Debug)]
pub struct Sprandom {
    spec: SprSpec,
    blocks: u64,
    lfsr: Option<Lfsr>,
    rng: Taus88,
    keep: Vec<u32>,
    per_region: u64,
    region: usize,
    in_region: u64,
    /// Offsets kept in the current region (rewritten in the next).
    kept: Vec<u64>,
    /// Rewrites owed in the current region, and how many were issued.
    owed: Vec<u64>,
    owed_done: usize,
}

impl Sprandom {
    /// Over a file of `blocks` blocks. Buffers are sized once (no allocation per I/O).
    pub fn new(spec: SprSpec, blocks: u64) -> Self {
        let regions = spec.regions.max(1) as u64;
        let per_region = (spec.phys_blocks / regions).max(1);
        let cap = per_region.min(1 << 24) as usize;
        Sprandom {
            spec,
            blocks,
            // A seed the LFSR cannot start from is moved into its period (as for
            // random_generator=lfsr by default; sprandom has no fio 3.33 side).
            lfsr: Lfsr::new(
                blocks.max(1),
                Lfsr::usable_seed(blocks.max(1), spec.seed),
                0,
            ),
            rng: Taus88::new(spec.seed as u32 ^ 0x5350_5241),
            keep: keep_probabilities(spec.regions, spec.op),
            per_region,
            region: 0,
            in_region: 0,
            kept: Vec::with_capacity(cap),
            owed: Vec::with_capacity(cap),
            owed_done: 0,
        }
    }

    /// Start over (a new loop).
    pub fn reset(&mut self) {
        *self = Sprandom::new(self.spec, self.blocks);
    }

    fn maybe_keep(&mut self, b: u64) {
        let p = self.keep[self.region.min(self.keep.len() - 1)] as u64;
        if p > 0 && self.rng.between(0, 10000) <= p {
            self.kept.push(b);
        }
    }

    fn next_region(&mut self) {
        self.region += 1;
        self.in_region = 0;
        std::mem::swap(&mut self.owed, &mut self.kept);
        self.kept.clear();
        self.owed_done = 0;
    }

    /// The next block to write; `None` when every region is written or the LFSR is spent.
    pub fn next_block(&mut self) -> Option<u64> {
        loop {
            if self.region >= self.keep.len() {
                return None;
            }
            if self.in_region >= self.per_region {
                self.next_region();
                continue;
            }
            let owed_left = (self.owed.len() - self.owed_done) as u64;
            let fresh_left =
                self.per_region - self.in_region - owed_left.min(self.per_region - self.in_region);
            // Rewrites first; with a device cache (spr_cs) after the region's fresh writes.
            let rewrite = owed_left > 0 && (!self.spec.defer || fresh_left == 0);
            let b = if rewrite {
                let b = self.owed[self.owed_done];
                self.owed_done += 1;
                b
            } else {
                self.lfsr.as_mut()?.next_value()?
            };
            self.maybe_keep(b);
            self.in_region += 1;
            return Some(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_fall_from_the_oldest_region() {
        let p = keep_probabilities(10, 0.15);
        assert_eq!(p.len(), 10);
        // g = 1 - 1/(0.5/0.15 + 0.7): the first region keeps ~24.8%, the last none.
        assert!((2470..=2490).contains(&p[0]), "{p:?}");
        assert_eq!(p[9], 0);
        assert!(p.windows(2).all(|w| w[0] >= w[1]), "{p:?}");
    }

    #[test]
    fn writes_the_physical_capacity_once() {
        // The delta's verified case: 16 MiB, op 0.15, 10 regions → 4706 writes of 4 KiB.
        let bs = 4096;
        let logical = 16 << 20;
        let phys = physical_bytes(logical, 0.15, bs);
        assert_eq!(phys / bs, 4710);
        let spec = SprSpec {
            phys_blocks: phys / bs,
            regions: 10,
            op: 0.15,
            defer: false,
            seed: 0x1234,
        };
        for defer in [false, true] {
            let mut s = Sprandom::new(SprSpec { defer, ..spec }, logical / bs);
            let mut seen = vec![0u32; (logical / bs) as usize];
            let mut n = 0;
            while let Some(b) = s.next_block() {
                seen[b as usize] += 1;
                n += 1;
            }
            // (With the device cache the last region's owed rewrites may stay unissued.)
            let lo = if defer { 4600 } else { 4660 };
            assert!((lo..=4710).contains(&n), "defer={defer}: {n} writes");
            // Every block written at least once (the LFSR covers the file), rewrites on top.
            let fresh = seen.iter().filter(|c| **c > 0).count() as u64;
            assert!(fresh >= logical / bs - 10, "defer={defer}: {fresh}");
            assert!(seen.iter().all(|c| *c <= 1 + 10));
        }
    }
}
