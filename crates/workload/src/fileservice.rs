//! fio's non-uniform generators (zipf, pareto, gauss), for `file_service_type=zipf|pareto|
//! normal|gauss` (which file the next I/O goes to) and `random_distribution=zipf|pareto|
//! normal` (which block), so that both sequences are fio's for the same seed.
//!
//! Each generator draws a value in `0..nranges` from a tausworthe stream of its own and
//! works as described on each type below. For file service fio takes
//! `nranges = nr_files << 10`, the file `value >> 10`, and leaves the values unhashed; for
//! block offsets `nranges` is the file's blocks, and the rank drawn is hashed
//! (multiplied by 2^64 / φ) before the offset is added, which scatters the hot ranks
//! over the file (two ranks may land on one block: fio's distribution, not an exact one).

use crate::rng::Taus88;

/// fio's FIO_FSERVICE_SHIFT: each file owns 1024 consecutive values.
pub const SHIFT: u32 = 10;

/// The kind of non-uniform file selection and its parameter; `center` is fio's optional
/// `:center` (0..1), negative when not given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FileDist {
    Zipf { theta: f64, center: f64 },
    Pareto { h: f64, center: f64 },
    Gauss { dev: f64, center: f64 },
}

/// The largest count of terms fio sums for the zipf normalisation (ZIPF_MAX_GEN).
const ZIPF_MAX_GEN: u64 = 10_000_000;

/// A uniform double in [0, 1] as fio makes it: the 32-bit draw over 2^32 - 1.
fn unit_closed(r: u32) -> f64 {
    r as f64 / u32::MAX as f64
}

/// fio's file chooser for one of the non-uniform file service types.
#[derive(Clone, Debug)]
pub struct FileSampler(FioGen);

impl FileSampler {
    /// The chooser over `nfiles` files, seeded with the job's file-selection seed.
    pub fn new(dist: FileDist, nfiles: usize, seed: u64) -> FileSampler {
        FileSampler(FioGen::new(
            dist,
            (nfiles as u64) << SHIFT,
            seed as u32,
            false,
        ))
    }

    /// The next file index.
    pub fn next_file(&mut self) -> usize {
        (self.0.next_value() >> SHIFT) as usize
    }
}

/// fio's hash of a drawn rank (`__hash_u64`): a multiplication by 2^64 / φ.
const GOLDEN_RATIO_64: u64 = 0x61c8_8646_80b5_83eb;

/// One of fio's non-uniform generators over `0..nranges`.
#[derive(Clone, Debug)]
pub struct FioGen {
    kind: Kind,
    rng: Taus88,
    nranges: u64,
    rand_off: u64,
    hash: bool,
}

#[derive(Clone, Debug)]
enum Kind {
    /// Gray et al.'s zipf generator: zetan is the sum of k^-theta over the first
    /// min(n, 10^7) ranks, in rank order.
    Zipf { theta: f64, zeta2: f64, zetan: f64 },
    /// rank = (n - 1) * U^p with p = ln(h) / ln(1 - h).
    Pareto { pow: f64 },
    /// The mean of 12 uniform draws, moved by a draw of +-stddev/2, halved until it fits.
    Gauss { stddev: u32 },
}

impl FioGen {
    /// The generator over `0..nranges` (at least 1) from `seed`; `hash` scatters the ranks
    /// (block offsets) or not (file service).
    pub fn new(dist: FileDist, nranges: u64, seed: u32, hash: bool) -> FioGen {
        let nranges = nranges.max(1);
        let mut rng = Taus88::new(seed);
        match dist {
            FileDist::Zipf { theta, center } => {
                // The offset draw comes first, even when a center replaces it.
                let mut rand_off = rng.next_u32() as u64;
                if center >= 0.0 {
                    rand_off = (nranges as f64 * center) as u64;
                }
                let mut zetan = 0.0f64;
                for i in 0..nranges.min(ZIPF_MAX_GEN) {
                    zetan += (1.0 / (i + 1) as f64).powf(theta);
                }
                FioGen {
                    hash,
                    kind: Kind::Zipf {
                        theta,
                        zeta2: 1.0f64.powf(theta) + 0.5f64.powf(theta),
                        zetan,
                    },
                    rng,
                    nranges,
                    rand_off,
                }
            }
            FileDist::Pareto { h, center } => {
                let mut rand_off = rng.next_u32() as u64;
                if center >= 0.0 {
                    rand_off = (nranges as f64 * center) as u64;
                }
                FioGen {
                    hash,
                    kind: Kind::Pareto {
                        pow: h.ln() / (1.0 - h).ln(),
                    },
                    rng,
                    nranges,
                    rand_off,
                }
            }
            FileDist::Gauss { dev, center } => {
                let mut stddev = 0u32;
                if dev != 0.0 {
                    stddev = ((nranges as f64 * dev) / 100.0).ceil() as u32;
                    stddev = stddev.min(u32::try_from(nranges / 2).unwrap_or(u32::MAX));
                }
                // fio stores the center's offset in an unsigned int.
                let rand_off = if center >= 0.0 {
                    ((nranges as f64 * (center - 0.5)) as i64) as u32 as u64
                } else {
                    0
                };
                FioGen {
                    hash,
                    kind: Kind::Gauss { stddev },
                    rng,
                    nranges,
                    rand_off,
                }
            }
        }
    }

    /// The number of ranges values are drawn from.
    pub fn nranges(&self) -> u64 {
        self.nranges
    }

    /// The next value in `0..nranges`.
    pub fn next_value(&mut self) -> u64 {
        let n = self.nranges;
        let v = match self.kind {
            Kind::Zipf {
                theta,
                zeta2,
                zetan,
            } => {
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let u = unit_closed(self.rng.next_u32());
                let z = u * zetan;
                let val: u64 = if z < 1.0 {
                    1
                } else if z < 1.0 + 0.5f64.powf(theta) {
                    2
                } else {
                    1 + (n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                val - 1
            }
            Kind::Pareto { pow } => {
                let u = unit_closed(self.rng.next_u32());
                ((n - 1) as f64 * u.powf(pow)) as u64
            }
            Kind::Gauss { stddev } => {
                let mut sum = 0u64;
                for _ in 0..12 {
                    sum = sum.wrapping_add(self.rng.next_u32() as u64 % (n + 1));
                }
                sum = sum.div_ceil(12);
                if stddev > 0 {
                    let r = self.rng.next_u32();
                    let vr = (stddev as f64 * (r as f64 / 4294967296.0)) as i32;
                    let mut dev = vr - (stddev / 2) as i32;
                    // (fio's loop never ends for a deviation of 0 and a sum of n, which
                    // two or three ranges make likely; such a draw wraps to 0 instead.)
                    while dev != 0 && (dev as i64 as u64).wrapping_add(sum) >= n {
                        dev /= 2;
                    }
                    sum = sum.wrapping_add(dev as i64 as u64);
                }
                sum
            }
        };
        let v = if self.hash {
            v.wrapping_mul(GOLDEN_RATIO_64)
        } else {
            v
        };
        v.wrapping_add(self.rand_off) % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(d: FileDist, n: usize) -> Vec<u32> {
        let mut s = FileSampler::new(d, n, 12345);
        let mut c = vec![0u32; n];
        for _ in 0..20000 {
            c[s.next_file()] += 1;
        }
        c
    }

    #[test]
    fn every_draw_names_a_file() {
        for d in [
            FileDist::Zipf {
                theta: 1.2,
                center: -1.0,
            },
            FileDist::Pareto {
                h: 0.2,
                center: 0.3,
            },
            FileDist::Gauss {
                dev: 10.0,
                center: -1.0,
            },
            FileDist::Gauss {
                dev: 0.0,
                center: 0.9,
            },
        ] {
            let c = counts(d, 7);
            assert_eq!(c.iter().sum::<u32>(), 20000, "{d:?}");
        }
    }

    #[test]
    fn zipf_and_pareto_concentrate_on_one_file() {
        // Without hashing the hot ranks are consecutive: most draws land in one file.
        for d in [
            FileDist::Zipf {
                theta: 1.2,
                center: 0.0,
            },
            FileDist::Pareto {
                h: 0.1,
                center: 0.0,
            },
        ] {
            let c = counts(d, 8);
            assert!(c[0] > 15000, "{d:?}: {c:?}");
        }
    }

    #[test]
    fn gauss_centres_on_the_middle_file_by_default() {
        let c = counts(
            FileDist::Gauss {
                dev: 5.0,
                center: -1.0,
            },
            9,
        );
        let max = c.iter().enumerate().max_by_key(|(_, v)| **v).unwrap().0;
        assert_eq!(max, 4, "{c:?}");
    }
}
