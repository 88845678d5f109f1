use super::*;
use crate::verify::kind::CHECKSUMS;

const AT: Place = Place {
    file: "f",
    flags: "88",
};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn write(off: u64, n: u64) -> WriteRef {
    WriteRef {
        offset: off,
        len: 4096,
        seed: crate::verify::wlog::replay_seed(42, n),
        numberio: n,
    }
}

fn stamp(w: &WriteRef, t: u32) -> Stamp {
    Stamp {
        seed: w.seed,
        numberio: w.numberio,
        time: (1_700_000_000 + t, t * 7),
    }
}

/// 1,000 corruptions of each kind (a changed byte, a stale block: the previous write of
/// the block whole, a torn block: part one write, part the other), across generations,
/// checksums, intervals and header offsets: every one found, at its exact offset (the
/// byte, the block, the tear), with the right class.
#[test]
fn a_thousand_injected_corruptions_of_each_kind_found_and_classified() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut counts = [0usize; 3];
    for t in 0..3000u64 {
        let gen = if r.below(2) == 0 {
            Generation::Fio333
        } else {
            Generation::Latest
        };
        let mut kind = CHECKSUMS[r.below(CHECKSUMS.len() as u64) as usize];
        if gen == Generation::Fio333 && kind == Kind::Sha512 {
            // fio 3.33's sha512 does not cover the middle of the data.
            kind = Kind::Sha3_512;
        }
        let fmt = Format {
            interval: [0, 1024][r.below(2) as usize],
            hdr_offset: [0, 300][r.below(2) as usize],
            ..Format::new(gen, kind, 2)
        };
        let off = r.below(1 << 20) * 4096;
        let (n_old, n_new) = (r.below(1000), 1000 + r.below(1000));
        let (old, new) = (write(off, n_old), write(off, n_new));
        let a = fmt.regenerate(4096, off, stamp(&new, 2));
        let b = fmt.regenerate(4096, off, stamp(&old, 1));
        let exp = Expect {
            last: Some(new),
            prev: Some(old),
            check_seed: true,
            check_numberio: true,
        };
        let what = (t % 3) as usize;
        counts[what] += 1;
        let ctx = format!(
            "case {t}: {gen:?} {kind:?} interval {} offset {}",
            fmt.interval, fmt.hdr_offset
        );
        let mut blk = match what {
            0 => {
                let mut c = a.clone();
                let x = r.below(4096) as usize;
                c[x] ^= 1 + r.below(255) as u8;
                let m = fmt.check(&mut c.clone(), off, &exp, &AT).expect_err(&ctx);
                assert_eq!(m.class, Class::Corrupt, "{ctx}: {:?}", m.lines(gen));
                let fb = m
                    .first_bad
                    .as_ref()
                    .unwrap_or_else(|| panic!("{ctx}: {:?}", m.lines(gen)));
                assert_eq!(fb.offset, off + x as u64, "{ctx}: {:?}", m.lines(gen));
                assert_eq!((fb.found, fb.expected), (c[x], a[x]), "{ctx}");
                continue;
            }
            1 => b.clone(),
            _ => {
                let k = 512 * (1 + r.below(7) as usize);
                let new_first = r.below(2) == 0;
                let (x, y) = if new_first { (&a, &b) } else { (&b, &a) };
                let mut c = x[..k].to_vec();
                c.extend_from_slice(&y[k..]);
                let m = fmt.check(&mut c, off, &exp, &AT).expect_err(&ctx);
                assert_eq!(
                    m.class,
                    Class::Torn,
                    "{ctx} k {k} new first {new_first}: {:?}",
                    m.lines(gen)
                );
                assert_eq!(m.tear, Some(off + k as u64), "{ctx}: {:?}", m.lines(gen));
                continue;
            }
        };
        let m = fmt.check(&mut blk, off, &exp, &AT).expect_err(&ctx);
        assert_eq!(m.class, Class::Stale, "{ctx}: {:?}", m.lines(gen));
        assert_eq!((m.offset, m.block_offset), (off, off), "{ctx}");
        assert!(
            m.why.contains(&format!("#{}", old.numberio as u16 as u64))
                || gen == Generation::Latest
        );
    }
    assert_eq!(counts, [1000, 1000, 1000]);
}

#[test]
fn foreign_and_other_generation() {
    let fmt = Format::new(Generation::Latest, Kind::Crc32c, 1);
    let w = write(8192, 5);
    let exp = Expect {
        last: Some(w),
        ..Expect::default()
    };
    // Another job's block at the right offset.
    let other = Format::new(Generation::Latest, Kind::Crc32c, 9);
    let mut b = other.regenerate(4096, 8192, stamp(&w, 1));
    let m = fmt.check(&mut b, 8192, &exp, &AT);
    // fio does not check the thread: the block verifies, as in fio.
    assert!(m.is_ok());
    let m = report_of(
        &fmt,
        &other.regenerate(4096, 8192, stamp(&w, 1)),
        8192,
        &exp,
    );
    assert_eq!(m.class, Class::Foreign);
    assert!(m.why.contains("thread 9"), "{}", m.why);
    // A block written for another offset.
    let mut b = fmt.regenerate(4096, 0, stamp(&w, 1));
    let m = fmt.check(&mut b, 8192, &exp, &AT).unwrap_err();
    assert_eq!(m.class, Class::Foreign);
    assert!(m.why.contains("offset 0"), "{}", m.why);
    // A 3.33-format block read by the newest format, and the reverse.
    let old = Format::new(Generation::Fio333, Kind::Crc32c, 1);
    let mut b = old.regenerate(4096, 8192, stamp(&w, 1));
    let m = fmt.check(&mut b, 8192, &exp, &AT).unwrap_err();
    assert_eq!(m.class, Class::OtherGeneration);
    assert!(m
        .lines(Generation::Latest)
        .last()
        .unwrap()
        .contains("a 3.33-format writer"));
    let mut b = fmt.regenerate(4096, 8192, stamp(&w, 1));
    let m = old
        .check(&mut b, 8192, &Expect::default(), &AT)
        .unwrap_err();
    assert_eq!(m.class, Class::OtherGeneration);
    assert!(m.why.contains("newest-format writer"), "{}", m.why);
}

fn report_of(fmt: &Format, b: &[u8], off: u64, exp: &Expect) -> Mismatch {
    analyse(fmt, b, off, 0, vec![], exp, &AT)
}

#[test]
fn report_lines_show_fields_byte_and_class() {
    let fmt = Format::new(Generation::Latest, Kind::Md5, 1);
    let w = write(4096, 3);
    let mut b = fmt.regenerate(4096, 4096, stamp(&w, 1));
    b[3000] ^= 0x10;
    let exp = Expect {
        last: Some(w),
        ..Expect::default()
    };
    let m = fmt.check(&mut b, 4096, &exp, &AT).unwrap_err();
    let l = m.lines(Generation::Latest);
    assert!(l[0].starts_with("md5: verify failed at file f offset 4096, length 4096"));
    assert!(l.iter().any(|x| x.starts_with(
        "flexio: found header:    magic=acca version=81 type=2 len=4096 offset=4096"
    )));
    assert!(l.iter().any(|x| x.starts_with("flexio: expected header: ")));
    assert!(l
        .iter()
        .any(|x| x.contains("first bad byte at offset 7096 (block offset +3000)")));
    assert!(l.iter().any(|x| x.contains("received:") && x.contains('[')));
    assert_eq!(
        l.last().unwrap(),
        &format!("flexio: classification: corrupt: {}", m.why)
    );
    assert_eq!(m.expected_data.as_ref().map(|e| e.len()), Some(4096));
}

#[test]
fn data_from_another_generator_is_reported_from_headers() {
    // Random bytes under a valid header: not rebuildable, no invented first bad byte.
    let fmt = Format::new(Generation::Fio333, Kind::Crc32c, 1);
    let mut b = vec![0u8; 4096];
    fmt.fill(&mut b, 0, Stamp::default());
    for (i, x) in b.iter_mut().enumerate().skip(44) {
        *x = (i * 31 % 251) as u8;
    }
    let m = fmt.check(&mut b, 0, &Expect::default(), &AT).unwrap_err();
    assert_eq!(m.class, Class::Corrupt);
    assert!(m.first_bad.is_none());
    assert!(m.why.contains("cannot be rebuilt"), "{}", m.why);
}

#[test]
fn one_byte_header_repair() {
    let gen = Generation::Latest;
    let fmt = Format::new(gen, Kind::Crc32c, 1);
    let w = write(0, 1);
    let b = fmt.regenerate(4096, 0, stamp(&w, 3));
    let good = Header::decode(gen, &b).unwrap();
    for p in 0..48 {
        let mut c = b.clone();
        c[p] ^= 0x81;
        let h = repair(gen, &c, 0, 4096).unwrap_or_else(|| panic!("byte {p}"));
        assert_eq!(
            (h.time_sec, h.time_nsec, h.numberio),
            (good.time_sec, good.time_nsec, 1),
            "byte {p}"
        );
    }
}

#[test]
fn a_block_fio_wrote_is_rebuilt_with_fios_data() {
    // fio's data under fio's header, one byte changed, no log entry (a read-only check):
    // the expected interval is the block as written, header included, and the first bad
    // byte is the changed one.
    for gen in [Generation::Fio333, Generation::Latest] {
        for interval in [0, 1024] {
            let fmt = Format {
                interval,
                ..Format::new(gen, Kind::Md5, 1)
            };
            let w = write(8192, 3);
            let orig = fmt.regenerate_with(4096, 8192, stamp(&w, 9), Data::Fio);
            assert_ne!(
                orig,
                fmt.regenerate(4096, 8192, stamp(&w, 9)),
                "two generators"
            );
            let mut b = orig.clone();
            b[2500] ^= 0x10;
            let m = fmt
                .check(&mut b, 8192, &Expect::default(), &AT)
                .unwrap_err();
            let step = if interval == 0 { 4096 } else { 1024 };
            let lo = 2500 / step * step;
            assert_eq!(m.offset, 8192 + lo as u64, "{gen:?} {interval}");
            assert_eq!(
                m.expected_data.as_deref(),
                Some(&orig[lo..lo + step]),
                "{gen:?} {interval}"
            );
            assert_eq!(m.first_bad.map(|f| f.offset), Some(8192 + 2500));
            assert_eq!(m.class, Class::Corrupt);
        }
    }
}
