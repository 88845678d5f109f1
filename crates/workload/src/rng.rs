//! Random number generation: L'Ecuyer's combined Tausworthe generator (taus88), the
//! generator fio uses by default, with fio's seeding.

/// taus88 state.
#[derive(Clone, Debug)]
pub struct Taus88 {
    s1: u32,
    s2: u32,
    s3: u32,
}

#[inline]
fn step(s: u32, a: u32, b: u32, c: u32, d: u32) -> u32 {
    ((s & c) << d) ^ (((s << a) ^ s) >> b)
}

#[inline]
fn seed_min(x: u32, m: u32) -> u32 {
    if x < m {
        x.wrapping_add(m)
    } else {
        x
    }
}

impl Taus88 {
    /// Seed as fio's `__init_rand32`: an LCG spreads the seed over the three components
    /// (each forced above its minimum), then six warm-up steps.
    pub fn new(seed: u32) -> Self {
        let lcg = |x: u32| x.wrapping_mul(69069) ^ seed;
        // fio writes the start constant as (2^31) + (2^17) + (2^7) in C, where ^ is XOR:
        // 29 + 19 + 5 = 53.
        let s1 = seed_min(lcg(53), 1);
        let s2 = seed_min(lcg(s1), 7);
        let s3 = seed_min(lcg(s2), 15);
        let mut t = Taus88 { s1, s2, s3 };
        for _ in 0..6 {
            t.next_u32();
        }
        t
    }

    /// Largest value `next_u32` returns.
    pub const MAX: u32 = u32::MAX;

    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        self.s1 = step(self.s1, 13, 19, 4294967294, 12);
        self.s2 = step(self.s2, 2, 25, 4294967288, 4);
        self.s3 = step(self.s3, 3, 11, 4294967280, 17);
        self.s1 ^ self.s2 ^ self.s3
    }

    /// Uniform value in `0..n` as fio scales it: `n * (r / (MAX + 1.0))`.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        let r = self.next_u32() as f64;
        ((n as f64) * (r / (Self::MAX as f64 + 1.0))) as u64
    }

    /// Uniform integer in `lo..=hi` (fio's `rand_between`).
    #[inline]
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// A 64-bit value from two draws (buffer filling).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        ((self.next_u32() as u64) << 32) | self.next_u32() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_spread() {
        let mut a = Taus88::new(1234);
        let mut b = Taus88::new(1234);
        let mut c = Taus88::new(1235);
        let va: Vec<u32> = (0..100).map(|_| a.next_u32()).collect();
        let vb: Vec<u32> = (0..100).map(|_| b.next_u32()).collect();
        let vc: Vec<u32> = (0..100).map(|_| c.next_u32()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
        // Roughly uniform over 16 bins.
        let mut r = Taus88::new(7);
        let mut bins = [0u32; 16];
        for _ in 0..160_000 {
            bins[r.below(16) as usize] += 1;
        }
        for b in bins {
            assert!((9_000..11_000).contains(&b), "{bins:?}");
        }
    }

    #[test]
    fn between_is_inclusive() {
        let mut r = Taus88::new(1);
        let mut seen = [false; 3];
        for _ in 0..1000 {
            let v = r.between(1, 3);
            assert!((1..=3).contains(&v));
            seen[(v - 1) as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }
}
