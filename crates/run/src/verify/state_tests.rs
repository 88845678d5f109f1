use super::*;

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// `local-st-0-verify.state` as fio 3.33 wrote it for an interrupted
/// `--rw=randwrite --bs=4k --iodepth=4 --ioengine=libaio --verify=crc32c` job.
fn fio333_file() -> Vec<u8> {
    let mut b = unhex(
        "0300000000000000 d800000000000000 2072a37300000000 0400000000000000
         04000000 01000000 6802000000000000 0000000000000000 0000000000000000
         7ef3db49 b7c5ff9a 2e9a51a9 00000000",
    );
    b.resize(0x70, 0);
    b.extend_from_slice(b"st");
    b.resize(0xb0, 0);
    for off in [0x01e9_d000u64, 0x0301_1000, 0x0116_d000, 0x03c3_9000] {
        b.extend_from_slice(&0u64.to_le_bytes());
        b.extend_from_slice(&off.to_le_bytes());
    }
    b
}

#[test]
fn fio333_state_file_read_and_written_byte_for_byte() {
    let f = fio333_file();
    assert_eq!(f.len(), 240);
    let s = decode(Generation::Fio333, &f, 4).unwrap();
    let VerifyState::V3(v) = &s else { panic!() };
    assert_eq!(
        (v.depth, v.nofiles, v.numberio, v.index, v.name.as_str()),
        (4, 1, 616, 0, "st")
    );
    assert_eq!(
        v.rand,
        RandState::Taus88([0x49db_f37e, 0x9aff_c5b7, 0xa951_9a2e])
    );
    assert_eq!(v.comps[0], (0, 0x01e9_d000));
    assert_eq!(s.encode(), f, "the same bytes, crc included");
    // The newest format refuses it, naming the reason.
    let e = decode(Generation::Latest, &f, 4).unwrap_err();
    assert!(
        e.starts_with("fio: unsupported (3) version in verify state header"),
        "{e}"
    );
    let mut bad = f.clone();
    bad[100] ^= 1;
    assert_eq!(
        decode(Generation::Fio333, &bad, 4).unwrap_err(),
        "fio: verify state is corrupt"
    );
    assert_eq!(
        decode(Generation::Fio333, &f[..20], 4).unwrap_err(),
        "fio: failed reading verify state header"
    );
    assert_eq!(
        decode(Generation::Fio333, &f[..200], 4).unwrap_err(),
        "fio: failed reading verity state"
    );
}

#[test]
fn newest_state_layout_field_by_field() {
    let s = VerifyState::V7(StateV7 {
        numberio: 0x1234,
        index: 2,
        rand: RandState::Taus258([1, 2, 3, 4, 5]),
        name: "job/a".into(),
        inflight: vec![0x1233, EMPTY],
        failed: vec![7],
    });
    let b = s.encode();
    // header {u64 version, u64 size, u64 crc}
    assert_eq!(&b[0..8], &7u64.to_le_bytes());
    let size = 4 + 4 + 8 + 8 + 56 + 64 + 3 * 8;
    assert_eq!(&b[8..16], &(size as u64).to_le_bytes());
    assert_eq!(
        &b[16..24],
        &(crate::verify::sum::crc32c(&b[24..]) as u64).to_le_bytes()
    );
    let r = &b[24..];
    assert_eq!(r.len(), size);
    assert_eq!(
        &r[0..4],
        &3u32.to_le_bytes(),
        "u32 depth: iodepth slots + failed"
    );
    assert_eq!(&r[4..8], &[0; 4], "pad");
    assert_eq!(&r[8..16], &0x1234u64.to_le_bytes(), "numberio");
    assert_eq!(&r[16..24], &2u64.to_le_bytes(), "index");
    assert_eq!(&r[24..32], &1u64.to_le_bytes(), "use64");
    assert_eq!(&r[32..40], &1u64.to_le_bytes(), "s[0]");
    assert_eq!(&r[64..72], &5u64.to_le_bytes(), "s[4]");
    assert_eq!(&r[72..80], &0u64.to_le_bytes(), "s[5] = 0");
    assert_eq!(&r[80..85], b"job/a", "name[64]");
    assert!(r[85..144].iter().all(|&c| c == 0));
    assert_eq!(&r[144..152], &0x1233u64.to_le_bytes(), "inflight[0]");
    assert_eq!(&r[152..160], &u64::MAX.to_le_bytes(), "inflight[1]: empty");
    assert_eq!(
        &r[160..168],
        &7u64.to_le_bytes(),
        "failed write after the iodepth slots"
    );
    assert_eq!(decode(Generation::Latest, &b, 2).unwrap(), s);
    assert!(decode(Generation::Fio333, &b, 2)
        .unwrap_err()
        .starts_with("fio: unsupported (7) version"));
    assert_eq!(file_name("job/a", 2), "local-job.a-2-verify.state");
    assert_eq!(
        path(Some(Path::new("/x")), "j", 0),
        PathBuf::from("/x/local-j-0-verify.state")
    );
}

#[test]
fn stop_rules_of_both_generations() {
    let s7 = StateV7 {
        numberio: 100,
        inflight: vec![97, EMPTY, 99],
        failed: vec![50],
        ..StateV7::default()
    };
    assert_eq!(decide(&s7, 10), Decision::Verify);
    assert_eq!(decide(&s7, 50), Decision::Skip);
    assert_eq!(
        decide(&s7, 97),
        Decision::Stop(Some(
            "Stop verify because seq 97 was an inflight write".into()
        ))
    );
    assert_eq!(decide(&s7, 98), Decision::Verify);
    assert_eq!(
        decide(&s7, 100),
        Decision::Stop(Some("Stop verify because seq 100 >= 100".into()))
    );
    // fio 3.33: 40 sequential writes, depth 1, last completed at block 39.
    let s3 = StateV3 {
        depth: 1,
        numberio: 40,
        comps: vec![(0, 39 * 4096)],
        ..StateV3::default()
    };
    for k in 0..39u64 {
        assert!(!should_stop(&s3, k, 0, k * 4096), "read {k}");
    }
    assert!(!should_stop(&s3, 39, 0, 39 * 4096));
    assert!(should_stop(&s3, 40, 0, 40 * 4096));
    // Fewer writes than the depth: every read must be a completed one.
    let s3 = StateV3 {
        depth: 4,
        numberio: 2,
        comps: vec![(0, 4096), (0, 0)],
        ..StateV3::default()
    };
    assert!(!should_stop(&s3, 0, 0, 0) && !should_stop(&s3, 1, 0, 4096));
    assert!(should_stop(&s3, 2, 0, 8192));
}

#[test]
fn save_and_load_through_a_file() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let p = path(Some(d), "w", 0);
    let s = VerifyState::V7(StateV7 {
        numberio: 3,
        name: "w".into(),
        inflight: vec![EMPTY],
        ..StateV7::default()
    });
    save(&p, &s).unwrap();
    assert_eq!(load(&p, Generation::Latest, 1).unwrap(), s);
    let e = load(&d.join("missing"), Generation::Latest, 1).unwrap_err();
    assert!(e.starts_with("fio: open state file:"), "{e}");
}
