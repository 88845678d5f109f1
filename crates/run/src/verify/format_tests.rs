use super::*;
use crate::verify::report::Class;

const AT: Place = Place {
    file: "f",
    flags: "8",
};

fn st(n: u64) -> Stamp {
    Stamp {
        seed: 1000 + n,
        numberio: n,
        time: (5, 6),
    }
}

fn last(off: u64, len: u64, n: u64) -> Expect {
    Expect {
        last: Some(WriteRef {
            offset: off,
            len,
            seed: 1000 + n,
            numberio: n,
        }),
        prev: None,
        check_seed: true,
        check_numberio: true,
    }
}

#[test]
fn every_kind_round_trips_in_both_generations() {
    for gen in [Generation::Fio333, Generation::Latest] {
        for k in crate::verify::kind::CHECKSUMS {
            let f = Format::new(gen, k, 3);
            let mut b = vec![0u8; 4096];
            f.fill(&mut b, 8192, st(9));
            let h = Header::decode(gen, &b).unwrap();
            assert_eq!(
                (h.kind, h.len, h.offset, h.thread),
                (k.code(), 4096, 8192, 3)
            );
            f.check(&mut b.clone(), 8192, &last(8192, 4096, 9), &AT)
                .unwrap();
            let mut c = b.clone();
            c[4000] ^= 1;
            let skip = gen == Generation::Fio333 && k == Kind::Sha512;
            assert_eq!(
                f.check(&mut c, 8192, &Expect::default(), &AT).is_err(),
                !skip,
                "{gen:?} {k:?}"
            );
        }
    }
}

#[test]
fn checksum_area_starts_after_the_generations_header() {
    let f = Format::new(Generation::Latest, Kind::Crc32c, 1);
    let mut b = vec![0u8; 512];
    f.fill(&mut b, 0, st(1));
    // crc32c field at 48..52 covers bytes 52.. (delta §6.1).
    let crc = u32::from_ne_bytes([b[48], b[49], b[50], b[51]]);
    assert_eq!(crc, sum::crc32c(&b[52..]));
    let f = Format::new(Generation::Fio333, Kind::Crc32c, 1);
    f.fill(&mut b, 0, st(1));
    assert_eq!(
        u32::from_ne_bytes([b[40], b[41], b[42], b[43]]),
        sum::crc32c(&b[44..])
    );
}

#[test]
fn header_checks_in_each_generations_order_and_words() {
    for gen in [Generation::Fio333, Generation::Latest] {
        let f = Format::new(gen, Kind::Md5, 1);
        let mut b = vec![0u8; 4096];
        f.fill(&mut b, 4096, st(7));
        let first = |mut c: Vec<u8>, off: u64, e: &Expect| -> String {
            f.check(&mut c, off, e, &AT).unwrap_err().fio_lines[0].clone()
        };
        let sfx = "at file f offset 4096, length 4096 (requested block: offset=4096, length=4096)";
        let mut c = b.clone();
        c[0] = 0;
        assert_eq!(
            first(c, 4096, &Expect::default()),
            format!("verify: bad magic header ac00, wanted acca {sfx}")
        );
        if gen == Generation::Latest {
            let mut c = b.clone();
            c[2] = 5;
            assert_eq!(
                first(c, 4096, &Expect::default()),
                format!("verify: unsupported header version 5, wanted 81. Are you trying to verify across versions of fio? {sfx}")
            );
        }
        let e = last(4096, 4096, 8);
        assert_eq!(
            first(b.clone(), 4096, &e),
            format!("verify: bad header rand_seed 1007, wanted 1008 {sfx}")
        );
        let e = Expect {
            check_seed: false,
            ..last(4096, 4096, 8)
        };
        assert_eq!(
            first(b.clone(), 4096, &e),
            format!("verify: bad header numberio 7, wanted 8 {sfx}")
        );
        let mut c = b.clone();
        c[24] ^= 1; // time: covered by the header crc only
        let msg = first(c.clone(), 4096, &Expect::default());
        let h = Header::decode(gen, &c).unwrap();
        let calc = Header::computed_crc(gen, &c);
        assert_eq!(
            msg,
            format!(
                "verify: bad header crc {:x}, calculated {calc:x} {sfx}",
                h.crc32
            )
        );
        // Length comes before seed and offset.
        let m = f
            .check(&mut b[..2048].to_vec(), 4096, &last(4096, 4096, 8), &AT)
            .unwrap_err();
        assert!(m.fio_lines[0].starts_with("verify: bad header length 4096, wanted 2048"));
    }
}

#[test]
fn offset_message_names_the_blocks_offset_like_fio() {
    // fio 3.33, verified: interval 1 of block 4096 holding interval 1 of block 0 prints
    // "bad header offset 1024, wanted 4096 at file F offset 5120, length 1024".
    let f = Format {
        interval: 1024,
        ..Format::new(Generation::Fio333, Kind::Crc32c, 1)
    };
    let mut a = vec![0u8; 4096];
    let mut b = vec![0u8; 4096];
    f.fill(&mut a, 0, st(0));
    f.fill(&mut b, 4096, st(1));
    b[1024..2048].copy_from_slice(&a[1024..2048]);
    let m = f.check(&mut b, 4096, &Expect::default(), &AT).unwrap_err();
    assert_eq!(
        m.fio_lines[0],
        "verify: bad header offset 1024, wanted 4096 at file f offset 5120, length 1024 (requested block: offset=4096, length=4096)"
    );
    assert_eq!((m.offset, m.class), (5120, Class::Foreign));
}

#[test]
fn verify_offset_moves_header_and_checksum_field() {
    // fio 3.33, verified: with verify_offset=100 bytes 100..156 hold header + md5.
    let f = Format {
        hdr_offset: 100,
        ..Format::new(Generation::Fio333, Kind::Md5, 1)
    };
    let mut b = vec![0u8; 4096];
    f.fill(&mut b, 0, st(2));
    assert_eq!(u16::from_ne_bytes([b[100], b[101]]), MAGIC);
    let mut un = b.clone();
    f.swap(&mut un);
    let mut s = [0u8; 16];
    sum::field(Generation::Fio333, Kind::Md5, &un[56..], &mut s);
    assert_eq!(&b[140..156], &s);
    f.check(&mut b, 0, &Expect::default(), &AT).unwrap();
    assert!(f.validate(4096).is_ok());
    let bad = Format {
        hdr_offset: 4050,
        ..f.clone()
    };
    assert_eq!(
        bad.validate(4096).unwrap_err(),
        "fio: cannot offset verify header beyond the verify interval."
    );
}

#[test]
fn interval_must_divide_the_block() {
    // fio 3.33, verified: verify_interval=1000 or 1536 with bs=4k gives one header.
    let f = |i| Format {
        interval: i,
        ..Format::new(Generation::Fio333, Kind::Crc32c, 1)
    };
    assert_eq!(f(1000).interval_for(4096), 4096);
    assert_eq!(f(1536).interval_for(4096), 4096);
    assert_eq!(f(1536).interval_for(3072), 1536);
    assert_eq!(f(8192).interval_for(4096), 4096);
    assert_eq!(f(512).interval_for(4096), 512);
}

#[test]
fn patterns_per_generation() {
    let p = flexio_job::pattern::parse_verify_pattern("%o").unwrap();
    // pattern_hdr: header over the pattern, seed 0, pattern checked after the header.
    for gen in [Generation::Fio333, Generation::Latest] {
        let f = Format {
            pattern: Some(p.clone()),
            pattern_interval: 512,
            ..Format::new(gen, Kind::PatternHdr, 1)
        };
        let mut b = vec![0u8; 4096];
        f.fill(&mut b, 0x10000, st(4));
        let h = Header::decode(gen, &b).unwrap();
        assert_eq!((h.kind, h.rand_seed), (17, 0));
        // The newest restarts %o every 512 bytes; fio 3.33 has no pattern interval.
        let want = match gen {
            Generation::Fio333 => 0x10000u64,
            Generation::Latest => 0x10200,
        };
        assert_eq!(&b[512..520], &want.to_le_bytes(), "{gen:?}");
        f.check(&mut b.clone(), 0x10000, &Expect::default(), &AT)
            .unwrap();
        let mut c = b.clone();
        c[1000] ^= 0x40;
        let m = f
            .check(&mut c, 0x10000, &Expect::default(), &AT)
            .unwrap_err();
        let hl = gen.header_len();
        assert_eq!(
            m.fio_lines[0],
            format!(
                "fio: got pattern '{:02x}', wanted '{:02x}'. Bad bits 1",
                c[1000], b[1000]
            )
        );
        // fio 3.33 counts from the data start, the newest from the block start.
        let k = match gen {
            Generation::Fio333 => 1000 - hl,
            Generation::Latest => 1000,
        };
        assert_eq!(m.fio_lines[1], format!("fio: bad pattern block offset {k}"));
        assert_eq!(
            m.fio_lines[2],
            "pattern: verify failed at file f offset 65536, length 4096 (requested block: offset=65536, length=4096, flags=8)"
        );
        assert_eq!(m.first_bad.as_ref().unwrap().offset, 0x10000 + 1000);
    }
    // pattern (no header), newest: block offset and length; 3.33: "header" garbage.
    let p = flexio_job::pattern::parse_verify_pattern("0xdeadbe").unwrap();
    for gen in [Generation::Fio333, Generation::Latest] {
        let f = Format {
            pattern: Some(p.clone()),
            ..Format::new(gen, Kind::Pattern, 1)
        };
        let mut b = vec![0u8; 4096];
        f.fill(&mut b, 4096, st(0));
        b[2104] ^= 0x40;
        let m = f.check(&mut b, 4096, &Expect::default(), &AT).unwrap_err();
        match gen {
            // fio 3.33, verified, for the same corruption.
            Generation::Fio333 => assert_eq!(
                m.fio_lines[2..],
                [
                    "pattern: verify failed at file f offset 4096, length 2917056173 (requested block: offset=4096, length=4096, flags=8)".to_string(),
                    "fio: verify type mismatch (57022 media, 18 given)".to_string()
                ]
            ),
            Generation::Latest => assert_eq!(
                m.fio_lines[2..],
                ["pattern: verify failed at file f offset 4096, length 4096 (requested block: offset=4096, length=4096, flags=8)".to_string()]
            ),
        }
    }
}

#[test]
fn no_panic_on_short_or_odd_buffers() {
    for gen in [Generation::Fio333, Generation::Latest] {
        for k in crate::verify::kind::ALL {
            let f = Format {
                pattern: flexio_job::pattern::parse_verify_pattern("0x01").ok(),
                interval: 7,
                hdr_offset: 3,
                ..Format::new(gen, k, 1)
            };
            for len in [0usize, 1, 39, 48, 100, 1000] {
                let mut b = vec![0xa5u8; len];
                f.fill(&mut b, 0, st(1));
                let _ = f.check(&mut b, 0, &last(0, len as u64, 1), &AT);
                let mut z = vec![0u8; len];
                let _ = f.check(&mut z, 0, &last(0, len as u64, 1), &AT);
            }
        }
    }
}
