use super::*;

fn spec(random: bool, size: u64) -> Spec {
    Spec {
        dirs: [true, false, false],
        random,
        rwmixread: 50,
        rw_nr: 0,
        rw_back: 0,
        identical: false,
        bs: [
            BsPolicy::Fixed(4096),
            BsPolicy::Fixed(4096),
            BsPolicy::Fixed(4096),
        ],
        bs_by_pattern: false,
        align: [4096; 3],
        rw_min_bs: 4096,
        random_map: true,
        files: vec![Region {
            start: 0,
            len: size,
        }],
        select: FileSelect::RoundRobin,
        select_nr: 1,
        open_limit: 0,
        wrap: false,
        zone_eof_pass: false,
        zbd_last_file_ends: false,
        seeds: crate::rng::fio_seeds(0x89, 1, true),
        gen: RandGen::Tausworthe,
        lfsr_usable_seed: true,
        trace: None,
        off64: false,
        dist: [Dist::Uniform, Dist::Uniform, Dist::Uniform],
        dist_seeds: Vec::new(),
        seq_stride: false,
        sprandom: None,
        file_sizes: Vec::new(),
        start_later: Vec::new(),
        repeatable: false,
        time_based: false,
        pct_random: [100; 3],
        strided: None,
    }
}

#[test]
fn sequential_covers_the_region_in_order_then_ends() {
    let mut g = Generator::new(spec(false, 16384));
    let offs: Vec<u64> = std::iter::from_fn(|| g.next(0)).map(|n| n.offset).collect();
    assert_eq!(offs, vec![0, 4096, 8192, 12288]);
}

#[test]
fn random_map_covers_every_block_once() {
    let n = 1000u64;
    let mut g = Generator::new(spec(true, n * 4096));
    let mut seen = vec![false; n as usize];
    for _ in 0..n {
        let io = g.next(0).expect("blocks left");
        let b = (io.offset / 4096) as usize;
        assert!(!seen[b], "block {b} repeated");
        seen[b] = true;
    }
    assert!(seen.iter().all(|s| *s));
    assert!(g.next(0).is_none());
}

#[test]
fn same_seed_same_sequence() {
    let a: Vec<NextIo> = {
        let mut g = Generator::new(spec(true, 1 << 20));
        (0..50).filter_map(|_| g.next(0)).collect()
    };
    let b: Vec<NextIo> = {
        let mut g = Generator::new(spec(true, 1 << 20));
        (0..50).filter_map(|_| g.next(0)).collect()
    };
    assert_eq!(a, b);
}

#[test]
fn trimwrite_trims_each_files_block_before_writing_it() {
    let ios = |random: bool, trim: u64, nfiles: usize| {
        let mut s = spec(random, 32768);
        s.dirs = [false, true, true];
        s.bs[2] = BsPolicy::Fixed(trim);
        s.align[2] = trim;
        s.files = vec![
            Region {
                start: 0,
                len: 32768
            };
            nfiles
        ];
        let mut g = Generator::new(s);
        let mut v = Vec::new();
        while let Some(io) = g.next_io() {
            v.push((io.file, io.ddir, io.offset / 1024, io.len / 1024));
        }
        v
    };
    // A trim twice the writes' size: two writes follow it (fio's rule: a trim when the
    // latest write started where the latest trim did).
    assert_eq!(
        ios(false, 8192, 1)[..6],
        [
            (0, 2, 0, 8),
            (0, 1, 0, 4),
            (0, 2, 8, 8),
            (0, 1, 4, 4),
            (0, 1, 8, 4),
            (0, 2, 16, 8)
        ]
    );
    // Files in turn: each one's own trim before its write.
    assert_eq!(
        ios(false, 4096, 2)[..4],
        [(0, 2, 0, 4), (1, 2, 0, 4), (0, 1, 0, 4), (1, 1, 0, 4)]
    );
    let r = ios(true, 4096, 2);
    assert_eq!(r.len(), 32, "every block of both files trimmed and written");
    for p in r.chunks(4) {
        assert_eq!((p[0].0, p[0].1, p[1].0, p[1].1), (0, 2, 1, 2), "{p:?}");
        assert_eq!((p[2].0, p[2].1, p[2].2), (0, 1, p[0].2), "{p:?}");
        assert_eq!((p[3].0, p[3].1, p[3].2), (1, 1, p[1].2), "{p:?}");
    }
}

#[test]
fn mix_ratio_and_split_shares() {
    let mut s = spec(true, 1 << 30);
    s.dirs = [true, true, false];
    s.rwmixread = 70;
    s.random_map = false;
    s.bs[0] = BsPolicy::Split(vec![(4096, 25), (65536, 75)]);
    let mut g = Generator::new(s);
    let mut reads = 0;
    let mut big = 0;
    let n = 20000;
    for _ in 0..n {
        let d = g.next_ddir(0);
        let io = g.next(d).unwrap();
        if d == 0 {
            reads += 1;
            if io.len == 65536 {
                big += 1;
            }
        }
    }
    let rf = reads as f64 / n as f64;
    assert!((rf - 0.7).abs() < 0.02, "read share {rf}");
    let bf = big as f64 / reads as f64;
    assert!((bf - 0.75).abs() < 0.02, "64k share {bf}");
}

#[test]
fn round_robin_over_files_and_holes() {
    let mut s = spec(false, 8192);
    s.files = vec![
        Region {
            start: 0,
            len: 8192,
        },
        Region {
            start: 100,
            len: 8192,
        },
    ];
    let mut g = Generator::new(s.clone());
    let v: Vec<(usize, u64)> = std::iter::from_fn(|| g.next(0))
        .map(|n| (n.file, n.offset))
        .collect();
    assert_eq!(v, vec![(0, 0), (1, 100), (0, 4096), (1, 4196)]);
    s.rw_nr = 4096;
    s.files = vec![Region {
        start: 0,
        len: 32768,
    }];
    let mut g = Generator::new(s.clone());
    let v: Vec<u64> = (0..6).map(|_| g.next(0).unwrap().offset).collect();
    assert_eq!(v, vec![0, 8192, 16384, 24576, 0, 8192]);
    // The last I/O ends at the end: the pass is over (fio 3.33: rw=write:8k of 256k
    // with 4k blocks is 22 writes), unless the job wraps.
    s.files[0].len = 28672;
    let mut g = Generator::new(s.clone());
    let v: Vec<u64> = std::iter::from_fn(|| g.next(0)).map(|n| n.offset).collect();
    assert_eq!(v, vec![0, 8192, 16384, 24576]);
    s.wrap = true;
    let mut g = Generator::new(s);
    let v: Vec<u64> = (0..6).map(|_| g.next(0).unwrap().offset).collect();
    assert_eq!(v, vec![0, 8192, 16384, 24576, 0, 8192]);
}

#[test]
fn bs_is_seq_rand_picks_by_pattern() {
    let mut s = spec(true, 1 << 20);
    s.bs = [
        BsPolicy::Fixed(8192),
        BsPolicy::Fixed(16384),
        BsPolicy::Fixed(4096),
    ];
    s.bs_by_pattern = true;
    let mut g = Generator::new(s.clone());
    assert_eq!(g.next(0).unwrap().len, 16384);
    s.random = false;
    let mut g = Generator::new(s);
    assert_eq!(g.next(0).unwrap().len, 8192);
}

#[test]
fn uniform_random_offsets_are_fio_s() {
    // fio 3.33: --ioengine=null --size=1g --bs=4k --rw=randread --norandommap
    let mut s = spec(true, 1 << 30);
    s.random_map = false;
    let mut g = Generator::new(s.clone());
    let v: Vec<u64> = (0..5).map(|_| g.next(0).unwrap().offset).collect();
    assert_eq!(
        v,
        vec![64757760, 794877952, 905359360, 504672256, 431546368]
    );
    s.gen = RandGen::Lfsr;
    let mut g = Generator::new(s.clone());
    let v: Vec<u64> = (0..5).map(|_| g.next(0).unwrap().offset).collect();
    assert_eq!(
        v,
        vec![644710400, 322236416, 1016827904, 790941696, 734724096]
    );
    s.gen = RandGen::Tausworthe64;
    let mut g = Generator::new(s);
    let v: Vec<u64> = (0..3).map(|_| g.next(0).unwrap().offset).collect();
    assert_eq!(v, vec![1007636480, 28229632, 86614016]);
}

#[test]
fn taus32_limit_is_fios() {
    // 2^32 - 1 blocks fit; one more does not (512-byte blocks: 2 TiB is over).
    assert!(!exceeds_taus32((u32::MAX as u64) * 512, 512));
    assert!(exceeds_taus32((u32::MAX as u64 + 1) * 512, 512));
    assert!(exceeds_taus32(3 << 40, 512));
    assert!(!exceeds_taus32(3 << 40, 4096));
    let mut s = spec(true, 3 << 40);
    s.rw_min_bs = 512;
    assert_eq!(taus32_exceeded(&s), vec![0]);
    s.rw_min_bs = 1024;
    assert!(taus32_exceeded(&s).is_empty());
    s.rw_min_bs = 512;
    s.random = false;
    assert!(taus32_exceeded(&s).is_empty());
    s.random = true;
    s.dist[0] = Dist::Zipf {
        theta: 1.2,
        center: 0.0,
    };
    assert!(taus32_exceeded(&s).is_empty());
    // The switch makes the offset stream 64-bit: tausworthe64's offsets, 32-bit sizes.
    let mut a = spec(true, 3 << 40);
    a.rw_min_bs = 512;
    a.random_map = false;
    a.bs = [0, 1, 2].map(|_| BsPolicy::Fixed(512));
    a.align = [512; 3];
    let mut b = a.clone();
    b.off64 = true;
    let mut c = a.clone();
    c.gen = RandGen::Tausworthe64;
    let offs = |s: Spec| {
        let mut g = Generator::new(s);
        (0..8)
            .map(|_| g.next_io().unwrap().offset)
            .collect::<Vec<_>>()
    };
    assert_eq!(offs(b.clone()), offs(c));
    assert_ne!(offs(a), offs(b));
}

#[test]
fn strided_zones_like_fio() {
    // fio 3.33: --size=1M --rw=read --zonemode=strided --zonesize=8k --zonerange=64k
    //           --zoneskip=128k gives blocks 0 1 48 49 96 97 ... 240 241 0 1 ...
    let mut s = spec(false, 1 << 20);
    s.strided = Some(Strided {
        size: 8192,
        range: 65536,
        skip: 131072,
    });
    s.wrap = true;
    let mut g = Generator::new(s);
    let v: Vec<u64> = (0..14).map(|_| g.next(0).unwrap().offset / 4096).collect();
    assert_eq!(
        v,
        vec![0, 1, 48, 49, 96, 97, 144, 145, 192, 193, 240, 241, 0, 1]
    );
}

#[test]
fn strided_random_zones_roll_over_like_fio() {
    // fio 3.33: --filesize=64k --size=64k --rw=randread --zonemode=strided
    // --zonerange=8k --zonesize=24k: six I/Os per two-block zone, the zone's map
    // starting again when full and at each new zone.
    let mut s = spec(true, 65536);
    s.strided = Some(Strided {
        size: 24576,
        range: 8192,
        skip: 0,
    });
    let mut g = Generator::new(s);
    let v: Vec<u64> = (0..16).map(|_| g.next(0).unwrap().offset / 4096).collect();
    assert_eq!(v, vec![0, 1, 1, 0, 0, 1, 2, 3, 3, 2, 3, 2, 5, 4, 4, 5]);
}

#[test]
fn percentage_random_mixes_sequential_runs() {
    let mut s = spec(true, 1 << 30);
    s.random_map = false;
    s.pct_random = [50; 3];
    let mut g = Generator::new(s);
    let offs: Vec<u64> = (0..20_000).map(|_| g.next(0).unwrap().offset).collect();
    let seq = offs.windows(2).filter(|w| w[1] == w[0] + 4096).count();
    let share = seq as f64 / offs.len() as f64;
    assert!((share - 0.5).abs() < 0.03, "sequential share {share}");
}

#[test]
fn wrap_continues_forever() {
    let mut s = spec(false, 8192);
    s.wrap = true;
    let mut g = Generator::new(s);
    let v: Vec<u64> = (0..5).map(|_| g.next(0).unwrap().offset).collect();
    assert_eq!(v, vec![0, 4096, 0, 4096, 0]);
}

#[test]
fn a_files_state_stays_small() {
    // A job keeps one `FileState` per file (nrfiles=100,000 keeps 100,000): what only some
    // jobs need (an LFSR, non-uniform samplers) is boxed. It was 728 bytes with them inline.
    let n = std::mem::size_of::<FileState>();
    eprintln!("FileState: {n} bytes");
    assert!(n <= 256, "FileState is {n} bytes");
}

/// The zoned distribution as fio draws it: each zone gets its share of the accesses, and
/// within a zone the blocks are uniform; zoned_abs zones are byte ranges.
#[test]
fn zoned_distributions_give_each_zone_its_share() {
    use crate::dist::{chi2, chi2_critical_001, parse_dist};
    let n = 10_000u64;
    let mut s = spec(true, n * 4096);
    s.random_map = false;
    s.dist[0] = parse_dist("zoned:60/10:30/20:10/70", true).unwrap();
    let mut g = Generator::new(s);
    let mut hits = vec![0u64; 3];
    let mut cells = vec![0u64; 100];
    for _ in 0..400_000 {
        let b = g.next(0).expect("no map: never done").offset / 4096;
        hits[usize::from(b >= 1000) + usize::from(b >= 3000)] += 1;
        cells[(b * 100 / n) as usize] += 1;
    }
    let fits = |name: &str, observed: &[u64], expected: &[f64]| {
        let (stat, df) = chi2(observed, expected);
        assert!(
            stat < chi2_critical_001(df),
            "{name}: chi-square {stat:.1}, {df} df"
        );
    };
    fits("zoned shares", &hits, &[0.6, 0.3, 0.1]);
    // Uniform within zones: a cell's probability is its zone's share over its cells.
    let expected: Vec<f64> = (0..100)
        .map(|c| match c {
            0..=9 => 0.06,
            10..=29 => 0.015,
            _ => 0.1 / 70.0,
        })
        .collect();
    fits("zoned cells", &cells, &expected);

    // zoned_abs: the first 1 MiB gets half of the accesses, the next 3 MiB the rest.
    let mut s = spec(true, 1024 * 4096);
    s.random_map = false;
    s.dist[0] = parse_dist("zoned_abs:50/1m:50/3m", true).unwrap();
    let mut g = Generator::new(s);
    let low = (0..10_000)
        .filter(|_| g.next(0).expect("no map").offset < 1 << 20)
        .count();
    assert!(
        (4_700..5_300).contains(&low),
        "{low} of 10000 in the first MiB"
    );
}
