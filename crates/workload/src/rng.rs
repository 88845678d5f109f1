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

    /// The three components (s1, s2, s3), as fio's verify state file records them.
    pub fn state(&self) -> [u32; 3] {
        [self.s1, self.s2, self.s3]
    }

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
        let r = self.next_u32();
        Self::scale(n, r)
    }

    /// A draw `r` scaled to `0..n`, as [`Taus88::below`] does it.
    #[inline(always)]
    pub fn scale(n: u64, r: u32) -> u64 {
        if n <= 1 << 21 {
            // n * r < 2^53: the floating-point product is exact, so its truncation equals
            // this integer form (same values, without the conversions).
            return (n * r as u64) >> 32;
        }
        below_f64(n, r)
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

/// fio's scaling of a 32-bit draw: `n * (r / 2^32)` in double precision, truncated.
#[inline]
fn below_f64(n: u64, r: u32) -> u64 {
    ((n as f64) * (r as f64 / (Taus88::MAX as f64 + 1.0))) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The integer form of `below` gives fio's floating-point values wherever it is used.
    #[test]
    fn integer_scaling_equals_fio_float_scaling() {
        let mut r = Taus88::new(99);
        let edges = [0u32, 1, 2, u32::MAX, u32::MAX - 1, 1 << 31, (1 << 31) - 1];
        let ns = [
            1u64,
            2,
            3,
            7,
            4096,
            65536,
            65537,
            1_000_003,
            (1 << 21) - 1,
            1 << 21,
        ];
        for &n in &ns {
            for &x in &edges {
                assert_eq!((n * x as u64) >> 32, below_f64(n, x), "n={n} r={x}");
            }
        }
        for _ in 0..2_000_000 {
            let n = 1 + r.next_u32() as u64 % (1 << 21);
            let x = r.next_u32();
            assert_eq!((n * x as u64) >> 32, below_f64(n, x), "n={n} r={x}");
        }
        let mut a = Taus88::new(5);
        let mut b = Taus88::new(5);
        for n in [10u64, 1 << 21, (1 << 21) + 1, 1 << 40] {
            for _ in 0..1000 {
                assert_eq!(a.below(n), below_f64(n, b.next_u32()));
            }
        }
    }

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

/// A Tausworthe generator's state: taus88's three components or taus258's five.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TausState {
    T32([u32; 3]),
    T64([u64; 5]),
}

/// 64-bit combined Tausworthe generator (taus258, fio's `tausworthe64`).
#[derive(Clone, Debug)]
pub struct Taus258 {
    s: [u64; 5],
}

impl Taus258 {
    /// Seeded as fio's `__init_rand64`: an LCG (multiplier 6906969069) spreads the seed
    /// over five components, each forced above its minimum, then six warm-up steps.
    pub fn new(seed: u64) -> Self {
        let lcg = |x: u64| x.wrapping_mul(6906969069) ^ seed;
        let min = |x: u64, m: u64| if x < m { x.wrapping_add(m) } else { x };
        let s1 = min(lcg(53), 1);
        let s2 = min(lcg(s1), 7);
        let s3 = min(lcg(s2), 15);
        let s4 = min(lcg(s3), 33);
        let s5 = min(lcg(s4), 49);
        let mut t = Taus258 {
            s: [s1, s2, s3, s4, s5],
        };
        for _ in 0..6 {
            t.next_u64();
        }
        t
    }

    /// The five components (s1..s5), as fio's verify state file records them.
    pub fn state(&self) -> [u64; 5] {
        self.s
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let x = ((s[0] << 1) ^ s[0]) >> 53;
        s[0] = ((s[0] & 18446744073709551614) << 10) ^ x;
        let x = ((s[1] << 24) ^ s[1]) >> 50;
        s[1] = ((s[1] & 18446744073709551104) << 5) ^ x;
        let x = ((s[2] << 3) ^ s[2]) >> 23;
        s[2] = ((s[2] & 18446744073709547520) << 29) ^ x;
        let x = ((s[3] << 5) ^ s[3]) >> 24;
        s[3] = ((s[3] & 18446744073709420544) << 23) ^ x;
        let x = ((s[4] << 3) ^ s[4]) >> 33;
        s[4] = ((s[4] & 18446744073701163008) << 8) ^ x;
        s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4]
    }

    /// `n * (r / 2^64)`, as fio scales a 64-bit draw.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        let r = self.next_u64();
        Self::scale(n, r)
    }

    /// A draw `r` scaled to `0..n`, as [`Taus258::below`] does it.
    #[inline]
    pub fn scale(n: u64, r: u64) -> u64 {
        ((n as f64) * (r as f64 / 18446744073709551616.0)) as u64
    }
}

/// Tap positions of maximal-length LFSRs, by register width (3..=63 bits); the values are
/// the published table fio uses.
const LFSR_TAPS: [&[u8]; 64] = [
    &[],
    &[],
    &[],
    &[3, 2],
    &[4, 3],
    &[5, 3],
    &[6, 5],
    &[7, 6],
    &[8, 6, 5, 4],
    &[9, 5],
    &[10, 7],
    &[11, 9],
    &[12, 6, 4, 1],
    &[13, 4, 3, 1],
    &[14, 5, 3, 1],
    &[15, 14],
    &[16, 15, 13, 4],
    &[17, 14],
    &[18, 11],
    &[19, 6, 2, 1],
    &[20, 17],
    &[21, 19],
    &[22, 21],
    &[23, 18],
    &[24, 23, 22, 17],
    &[25, 22],
    &[26, 6, 2, 1],
    &[27, 5, 2, 1],
    &[28, 25],
    &[29, 27],
    &[30, 6, 4, 1],
    &[31, 28],
    &[32, 31, 29, 1],
    &[33, 20],
    &[34, 27, 2, 1],
    &[35, 33],
    &[36, 25],
    &[37, 5, 4, 3, 2, 1],
    &[38, 6, 5, 1],
    &[39, 35],
    &[40, 38, 21, 19],
    &[41, 38],
    &[42, 41, 20, 19],
    &[43, 42, 38, 37],
    &[44, 43, 18, 17],
    &[45, 44, 42, 41],
    &[46, 45, 26, 25],
    &[47, 42],
    &[48, 47, 21, 20],
    &[49, 40],
    &[50, 49, 24, 23],
    &[51, 50, 36, 35],
    &[52, 49],
    &[53, 52, 38, 37],
    &[54, 53, 18, 17],
    &[55, 31],
    &[56, 55, 35, 34],
    &[57, 50],
    &[58, 39],
    &[59, 58, 38, 37],
    &[60, 59],
    &[61, 60, 46, 45],
    &[62, 61, 6, 5],
    &[63, 62],
];

/// fio's block-number LFSR (`random_generator=lfsr`): a Galois register of the smallest
/// width that covers `nums` values, stepped `spin + 1` times per output (one step more at
/// the end of each cycle that `spin` would otherwise make repeat early), skipping values
/// above the range. Every value in `0..nums` comes out exactly once.
#[derive(Clone, Debug)]
pub struct Lfsr {
    last: u64,
    max_val: u64,
    xormask: u64,
    cached_bit: u64,
    num_vals: u64,
    spin: u32,
    cycle_length: u64,
    cached_cycle_length: u64,
    seed: u64,
}

impl Lfsr {
    /// `None` when `nums` needs more than 63 bits or the seed hits the forbidden state.
    pub fn new(nums: u64, seed: u64, spin: u32) -> Option<Self> {
        if spin > 15 || nums == 0 {
            return None;
        }
        let width = (3..64).find(|&i| (1u64 << i) > nums)?;
        let taps = LFSR_TAPS[width];
        let xormask = taps.iter().fold(0u64, |m, t| m | (1u64 << (t - 1)));
        let cached_bit = 1u64 << (taps[0] - 1);
        // Early-repetition guard for spins (period 2^n - 1 sharing a factor with spin + 1).
        let max = (cached_bit << 1) - 1;
        let (x, y) = (max / (spin as u64 + 1), max % (spin as u64 + 1));
        let mut cycle = 0;
        for i in 1..=spin as u64 {
            if (y * i) % (spin as u64 + 1) == 0 {
                cycle = x * i + (y * i) / (spin as u64 + 1);
                break;
            }
        }
        let mut l = Lfsr {
            last: 0,
            max_val: nums - 1,
            xormask,
            cached_bit,
            num_vals: 0,
            spin,
            // As fio: the first output takes the extra step too.
            cycle_length: cycle + 1,
            cached_cycle_length: cycle,
            seed,
        };
        l.reset().then_some(l)
    }

    /// `seed` moved into the period of the LFSR that covers `nums` values: the register
    /// starts from the seed's low bits, and all ones there is the one state outside the
    /// register's single cycle (fio refuses such a seed: "fio: failed initializing LFSR",
    /// and the job does no I/O). Clearing the register's top bit gives a state inside the
    /// cycle; every other seed is returned unchanged, so its sequence stays fio's.
    pub fn usable_seed(nums: u64, seed: u64) -> u64 {
        let Some(width) = (3..64).find(|&i| (1u64 << i) > nums) else {
            return seed;
        };
        let bitmask = (1u64 << LFSR_TAPS[width][0]) - 1;
        if seed & bitmask == bitmask {
            seed & !(1u64 << (LFSR_TAPS[width][0] - 1))
        } else {
            seed
        }
    }

    /// Restart the sequence from the seed; false if the seed is the forbidden all-ones state.
    /// As fio's lfsr_reset, the count to the next extra step goes on: only a new register
    /// gives its first output the extra step, so a file started over whose seed state is
    /// in range puts that block first (fio's later passes start with the block the first
    /// one ended with).
    pub fn reset(&mut self) -> bool {
        let bitmask = (self.cached_bit << 1) - 1;
        self.num_vals = 0;
        self.last = self.seed & bitmask;
        self.last != bitmask
    }

    #[inline]
    fn step(&mut self) {
        let v = self.last;
        self.last = ((v >> 1) | self.cached_bit) ^ ((v & 1).wrapping_sub(1) & self.xormask);
    }

    /// The next value in `0..nums`, or `None` once all of them have come out.
    #[inline]
    pub fn next_value(&mut self) -> Option<u64> {
        if self.num_vals > self.max_val {
            return None;
        }
        self.num_vals += 1;
        loop {
            let steps = if self.cycle_length != 0 {
                self.cycle_length -= 1;
                if self.cycle_length == 0 {
                    self.cycle_length = self.cached_cycle_length;
                    self.spin + 2
                } else {
                    self.spin + 1
                }
            } else {
                self.spin + 1
            };
            for _ in 0..steps {
                self.step();
            }
            if self.last <= self.max_val {
                return Some(self.last);
            }
        }
    }
}

/// fio's random-state slots (fio.h, FIO_RAND_*).
pub mod slot {
    pub const BS: usize = 0;
    pub const MIX: usize = 4;
    pub const FILE: usize = 5;
    pub const BLOCK: usize = 6;
    pub const FILE_SIZE: usize = 7;
    pub const TRIM: usize = 8;
    pub const BUF: usize = 9;
    pub const SEQ_RAND: usize = 10;
    pub const START_DELAY: usize = 13;
    pub const POISSON: usize = 15;
    pub const ZONE: usize = 16;
    pub const POISSON2: usize = 17;
    pub const POISSON3: usize = 18;
    pub const PRIO: usize = 19;
    pub const COUNT: usize = 21;
}

/// How many seed slots the newest fio has (`FIO_RAND_NR_OFFS`): fio 3.33's 21 and three
/// appended after them (FDP, sprandom, write mode), so the old slots keep their values.
pub const NEWEST_SLOTS: usize = 24;

/// The first `n` slot seeds of thread `thread_number` from `rand_seed`, before fio 3.33's
/// repeatable-job replacements (see [`fio_seeds`]): what the newest fio uses and prints.
pub fn fio_seed_list(rand_seed: u64, thread_number: u32, n: usize) -> Vec<u64> {
    let mut seed = rand_seed;
    for _ in 0..4 {
        seed = seed.wrapping_mul(0x9e370001);
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(
            seed.wrapping_mul(thread_number as u64)
                .wrapping_add(i as u64),
        );
        seed = seed.wrapping_mul(0x9e370001);
    }
    out
}

/// fio's `jhash` of a file name (Bob Jenkins' lookup3 hash with the initial value
/// 2^32 / φ plus the length, `initval` 0): the seed of the file's zipf, pareto and normal
/// offset generators.
pub fn fio_jhash(key: &[u8]) -> u32 {
    fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(4);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(6);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(8);
        *b = b.wrapping_add(*a);
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(16);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(19);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(4);
        *b = b.wrapping_add(*a);
    }
    fn last(a: &mut u32, b: &mut u32, c: &mut u32) {
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(14));
        *a ^= *c;
        *a = a.wrapping_sub(c.rotate_left(11));
        *b ^= *a;
        *b = b.wrapping_sub(a.rotate_left(25));
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(16));
        *a ^= *c;
        *a = a.wrapping_sub(c.rotate_left(4));
        *b ^= *a;
        *b = b.wrapping_sub(a.rotate_left(14));
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(24));
    }
    let word = |k: &[u8]| {
        let mut w = [0u8; 4];
        w[..k.len()].copy_from_slice(k);
        u32::from_le_bytes(w)
    };
    let init = 0x61c8_8647u32.wrapping_add(key.len() as u32);
    let (mut a, mut b, mut c) = (init, init, init);
    let mut k = key;
    // fio's own copy adds one byte of each word of the leading 12-byte blocks, not the
    // word (its pointer is to bytes); what it hashes is what is matched here.
    while k.len() > 12 {
        a = a.wrapping_add(u32::from(k[0]));
        b = b.wrapping_add(u32::from(k[4]));
        c = c.wrapping_add(u32::from(k[8]));
        mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    // The last 1-12 bytes, little-endian into a, b and c.
    a = a.wrapping_add(word(&k[..k.len().min(4)]));
    if k.len() > 4 {
        b = b.wrapping_add(word(&k[4..k.len().min(8)]));
    }
    if k.len() > 8 {
        c = c.wrapping_add(word(&k[8..]));
    }
    last(&mut a, &mut b, &mut c);
    c
}

/// fio's fixed seed for the block-offset generator of repeatable jobs.
pub const FIO_RANDSEED: u64 = 0xb1899bed;

/// fio 3.33's seed of every random stream of thread `thread_number` (1-based): the user's
/// (or default 0x89) seed is stirred four times by multiplying with 0x9e370001, then slot
/// `i` gets `base * thread_number + i` and the base is stirred again. With `randrepeat`
/// the block-offset slot is replaced by `0xb1899bed * thread_number`.
pub fn fio_seeds(rand_seed: u64, thread_number: u32, randrepeat: bool) -> [u64; slot::COUNT] {
    let mut out = [0u64; slot::COUNT];
    out.copy_from_slice(&fio_seed_list(rand_seed, thread_number, slot::COUNT));
    if randrepeat {
        out[slot::BLOCK] = FIO_RANDSEED.wrapping_mul(thread_number as u64);
    }
    out
}

#[cfg(test)]
mod fio_tests {
    use super::*;

    #[test]
    fn tausworthe_offsets_equal_fio() {
        // fio 3.33 --ioengine=null --size=1g --bs=4k --rw=randread --norandommap (thread 1).
        let seeds = fio_seeds(0x89, 1, true);
        let mut r = Taus88::new(seeds[slot::BLOCK] as u32);
        let got: Vec<u64> = (0..5).map(|_| r.below(262144) * 4096).collect();
        assert_eq!(
            got,
            vec![64757760, 794877952, 905359360, 504672256, 431546368]
        );
        // --randrepeat=0 --randseed=1234
        let seeds = fio_seeds(1234, 1, false);
        let mut r = Taus88::new(seeds[slot::BLOCK] as u32);
        let got: Vec<u64> = (0..5).map(|_| r.below(262144) * 4096).collect();
        assert_eq!(
            got,
            vec![80080896, 463732736, 78143488, 283205632, 273477632]
        );
    }

    #[test]
    fn lfsr_offsets_equal_fio() {
        // fio 3.33 --random_generator=lfsr, same job.
        let seeds = fio_seeds(0x89, 1, true);
        let mut l = Lfsr::new(262144, seeds[slot::BLOCK], 0).unwrap();
        let got: Vec<u64> = (0..5).map(|_| l.next_value().unwrap() * 4096).collect();
        assert_eq!(
            got,
            vec![644710400, 322236416, 1016827904, 790941696, 734724096]
        );
    }

    /// Every seed, once made usable, gives the full sequence: each of the `n` values once.
    /// The seeds fio refuses are exactly those whose register bits are all ones.
    #[test]
    fn every_usable_seed_covers_every_value_once() {
        for n in [1u64, 4, 7, 8, 9, 100, 1000, 5000] {
            let width = (3..64).find(|&i| (1u64 << i) > n).unwrap();
            let mask = (1u64 << width) - 1;
            let mut refused = 0;
            let forbidden = [mask, 2 * mask + 1, 7 * (mask + 1) + mask, u64::MAX];
            let others = [u64::MAX - 1, 0x89 << 40, 0x89 * 1000];
            for seed in (0..(3 * (mask + 1)).min(200))
                .chain(forbidden)
                .chain(others)
            {
                let fio_refuses = Lfsr::new(n, seed, 0).is_none();
                assert_eq!(fio_refuses, seed & mask == mask, "n={n} seed={seed:#x}");
                refused += fio_refuses as u64;
                let usable = Lfsr::usable_seed(n, seed);
                if !fio_refuses {
                    assert_eq!(usable, seed, "a seed fio takes is kept");
                }
                let mut l = Lfsr::new(n, usable, 0).expect("usable");
                let mut seen = vec![false; n as usize];
                for _ in 0..n {
                    let v = l.next_value().expect("a full period") as usize;
                    assert!(!seen[v], "n={n} seed={seed:#x}: {v} repeated");
                    seen[v] = true;
                }
                assert!(l.next_value().is_none());
                assert!(l.reset(), "the sequence restarts from the usable seed");
                assert_eq!(l.next_value().map(|v| v < n), Some(true));
            }
            assert!(refused >= 4, "n={n}: the forbidden seeds were tried");
        }
    }

    #[test]
    fn lfsr_covers_every_value_once() {
        for n in [5u64, 100, 1000, 4096, 5000] {
            let mut l = Lfsr::new(n, 12345, 0).unwrap();
            let mut seen = vec![false; n as usize];
            for _ in 0..n {
                let v = l.next_value().unwrap() as usize;
                assert!(!seen[v], "n={n}: {v} repeated");
                seen[v] = true;
            }
            assert!(l.next_value().is_none());
        }
    }
}
