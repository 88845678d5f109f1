//! `flexio pts` (docs/studies/pts.md) end to end on loop devices of the test's own: short
//! rounds, the verdict checked against the PTS rule computed here by hand from the
//! rounds it reports, and its refusals (no consent, a mounted device).

use crate::common;

use common::loopdev::LoopDev;
use common::*;
use std::io::{Read, Seek, SeekFrom, Write};

fn marker(dev: &str) -> Vec<u8> {
    let mut f = std::fs::File::open(dev).unwrap();
    f.seek(SeekFrom::Start(1 << 20)).unwrap();
    let mut b = vec![0u8; 16];
    f.read_exact(&mut b).unwrap();
    b
}

#[test]
fn runs_to_a_verdict_that_follows_the_pts_rule() {
    let Some(lo) = LoopDev::new(32 << 20) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&lo.dev)
            .unwrap();
        f.seek(SeekFrom::Start(1 << 20)).unwrap();
        f.write_all(b"flexio-pts-mark!").unwrap();
        f.sync_all().unwrap();
    }
    // Without consent nothing is written, and it says how much it would write.
    let r = run_bounded(&flexio_bin(), &["pts", lo.path()], d.path(), &[], 30);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("2 x 32.0 MiB of preconditioning writes"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("--i-understand-this-erases"),
        "{}",
        r.stderr
    );
    assert_eq!(marker(lo.path()), b"flexio-pts-mark!");

    let json = d.path().join("pts.json");
    let r = run_bounded(
        &flexio_bin(),
        &[
            "pts",
            lo.path(),
            "--i-understand-this-erases",
            "--round-time=1s",
            "--max-rounds=6",
            "--bs=4k,64k",
            "--mixes=100,0",
            "--ioengine=psync",
            &format!("--json={}", json.display()),
        ],
        d.path(),
        &[],
        120,
    );
    assert!(r.code == 0 || r.code == 1, "{}{}", r.stdout, r.stderr);
    assert_ne!(
        marker(lo.path()),
        b"flexio-pts-mark!",
        "purged and overwritten"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rounds = doc["rounds"].as_array().unwrap();
    assert!((5..=6).contains(&rounds.len()), "{doc}");
    for r in rounds {
        assert_eq!(r["cells"].as_array().unwrap().len(), 4);
    }
    let track: Vec<f64> = rounds
        .iter()
        .map(|r| r["tracking"].as_f64().unwrap())
        .collect();
    assert!(track.iter().all(|v| *v > 0.0), "{track:?}");
    // The rule by hand on the last 5 rounds: range within 20% of the average and the
    // least-squares line's rise over the window within 10%.
    let y = &track[track.len() - 5..];
    let avg = y.iter().sum::<f64>() / 5.0;
    let range =
        y.iter().cloned().fold(f64::MIN, f64::max) - y.iter().cloned().fold(f64::MAX, f64::min);
    let slope = y
        .iter()
        .enumerate()
        .map(|(i, v)| (i as f64 - 2.0) * (v - avg))
        .sum::<f64>()
        / 10.0;
    let steady = range <= 0.2 * avg && slope.abs() * 4.0 <= 0.1 * avg;
    let ss = &doc["steady_state"];
    assert_eq!(ss["reached"], steady, "{ss} from {track:?}");
    assert_eq!(r.code == 0, steady);
    assert!((ss["range_pct"].as_f64().unwrap() - 100.0 * range / avg).abs() < 1e-6);
    assert!((ss["average"].as_f64().unwrap() - avg).abs() < 1e-6 * avg);
    // A steady verdict ends the rounds there; otherwise all 6 ran.
    assert!(rounds.len() == 6 || steady, "{track:?}");
    assert!(
        r.stdout
            .contains("not as the PTS: each cell runs 1 s, not 60 s"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("\n     4 KiB "), "{}", r.stdout);
    // flexio report draws it.
    let html = d.path().join("r.html");
    let r = run_bounded(
        &flexio_bin(),
        &[
            "report",
            json.to_str().unwrap(),
            "-o",
            html.to_str().unwrap(),
        ],
        d.path(),
        &[],
        30,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let h = std::fs::read_to_string(&html).unwrap();
    assert!(
        h.contains("PTS iops test") && h.contains("Steady-state convergence"),
        "{h}"
    );
}

#[test]
fn a_mounted_device_is_refused() {
    let Some(mut lo) = LoopDev::new(32 << 20) else {
        return;
    };
    if !lo.mount() {
        eprintln!("SKIP: cannot make and mount a file system on a loop device here");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let r = run_bounded(
        &flexio_bin(),
        &["pts", lo.path(), "--i-understand-this-erases"],
        d.path(),
        &[],
        30,
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("holds a mounted file system"),
        "{}",
        r.stderr
    );
}
