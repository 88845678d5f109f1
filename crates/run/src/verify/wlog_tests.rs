use super::*;

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Overlapping random writes of random sizes, completing out of order: the log keeps
/// exactly the writes no later write touched, disjoint, in offset order, each owning all
/// its bytes, and remembers the newest write each one evicted.
#[test]
fn last_write_wins_on_overlapping_random_writes() {
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    for round in 0..50 {
        let mut log = WriteLog::new(Order::Offset);
        let region = 64 * 1024u64;
        let mut owner = vec![u64::MAX; region as usize];
        let mut writes = Vec::new();
        let mut pending: Vec<(u32, u64, u64)> = Vec::new();
        for n in 0..300u64 {
            let len = 512 * (1 + r.below(16));
            let off = 512 * r.below((region - len) / 512 + 1);
            let file = r.below(2) as u32;
            log.issue(file, off, len, n * 3, n);
            writes.push((file, off, len, n));
            if file == 0 {
                owner[off as usize..(off + len) as usize].fill(n);
            }
            pending.push((file, off, n));
            // Complete a random pending write now and then (out of order).
            while !pending.is_empty() && r.below(3) != 0 {
                let k = r.below(pending.len() as u64) as usize;
                let (f, o, num) = pending.swap_remove(k);
                log.complete(f, o, num);
            }
        }
        for (f, o, num) in pending.drain(..) {
            log.complete(f, o, num);
        }
        assert_eq!(log.in_flight(), 0, "round {round}");
        let kept = log.entries();
        // Kept iff no later write of the same file overlaps it.
        for &(f, o, l, n) in &writes {
            let overwritten = writes
                .iter()
                .any(|&(f2, o2, l2, n2)| f2 == f && n2 > n && o2 < o + l && o < o2 + l2);
            let logged = kept.iter().any(|e| e.numberio == n);
            assert_eq!(logged, !overwritten, "round {round} write {n}");
        }
        // Disjoint, sorted, and (file 0) owning every byte: the numberio check passes.
        for w in kept.windows(2) {
            assert!((w[0].file, w[0].offset + w[0].len) <= (w[1].file, w[1].offset));
        }
        for e in kept.iter().filter(|e| e.file == 0) {
            assert!(owner[e.offset as usize..(e.offset + e.len) as usize]
                .iter()
                .all(|&o| o == e.numberio));
            assert_eq!(e.seed, e.numberio * 3);
            if let Some(p) = e.prev {
                // The newest earlier write that overlapped it.
                let want = writes
                    .iter()
                    .filter(|&&(f2, o2, l2, n2)| {
                        f2 == 0 && n2 < e.numberio && o2 < e.offset + e.len && e.offset < o2 + l2
                    })
                    .map(|w| w.3)
                    .max();
                assert!(want.is_some() && p.numberio <= want.unwrap());
            }
        }
        // Draining yields them in the same order.
        let mut drained = Vec::new();
        while let Some(e) = log.next_write() {
            drained.push(e);
        }
        assert_eq!(drained, kept);
        assert!(log.is_empty());
    }
}

#[test]
fn in_flight_entries_are_skipped_and_failed_writes_dropped() {
    let mut log = WriteLog::new(Order::Offset);
    log.issue(0, 0, 4096, 1, 0);
    log.issue(0, 4096, 4096, 2, 1);
    log.issue(0, 8192, 4096, 3, 2);
    assert_eq!(log.in_flight(), 3);
    assert!(log.next_write().is_none(), "nothing completed yet");
    log.complete(0, 4096, 1);
    assert_eq!(
        log.next_write().map(|e| e.numberio),
        Some(1),
        "first completed, in-flight skipped"
    );
    log.fail(0, 0, 0);
    assert_eq!(log.failed(), &[0]);
    assert!(log.is_failed(0) && !log.is_failed(2));
    assert_eq!((log.len(), log.in_flight()), (1, 1));
    // A newer write evicts an in-flight older one; its completion is then ignored.
    log.issue(0, 8192, 4096, 9, 3);
    assert!(!log.complete(0, 8192, 2));
    assert!(log.complete(0, 8192, 3));
    let e = log.next_write().unwrap();
    assert_eq!((e.numberio, e.prev.map(|p| p.numberio)), (3, Some(2)));
    assert_eq!(log.in_flight(), 0);
    // Write order: entries verified as written, in-flight ones skipped.
    let mut l = WriteLog::new(Order::Written);
    l.issue(0, 8192, 512, 0, 0);
    l.issue(0, 0, 512, 0, 1);
    l.complete(0, 0, 1);
    assert_eq!(l.next_write().map(|e| e.offset), Some(0));
    l.complete(0, 8192, 0);
    assert_eq!(l.next_write().map(|e| e.offset), Some(8192));
}

#[test]
fn writes_above_a_limit_stay_logged() {
    for order in [Order::Offset, Order::Written] {
        let mut log = WriteLog::new(order);
        // Numbered 0..4, issued from the highest offset down.
        for n in 0..4u64 {
            log.issue(0, (3 - n) * 4096, 4096, n, n);
            log.complete(0, (3 - n) * 4096, n);
        }
        let mut got: Vec<u64> = Vec::new();
        while let Some(e) = log.next_write_below(2) {
            got.push(e.numberio);
        }
        got.sort_unstable();
        assert_eq!(got, vec![0, 1], "{order:?}");
        assert_eq!(log.len(), 2, "{order:?}: writes 2 and 3 are still logged");
        assert!(log.next_write_below(0).is_none());
        assert_eq!(log.next_write_below(3).map(|e| e.numberio), Some(2));
    }
}

#[test]
fn checks_switch_off_as_fio_does() {
    let write = JobFacts {
        writes: true,
        fixed_bs: true,
        ..JobFacts::default()
    };
    let on = Checks {
        header_seed: true,
        write_sequence: true,
    };
    let g = Generation::Latest;
    assert_eq!(checks(g, &write), on);
    // Header seed off: read-only, backlog, zone resets, overlap risk, verify_only.
    for f in [
        JobFacts {
            writes: false,
            ..write
        },
        JobFacts {
            verify_backlog: true,
            ..write
        },
        JobFacts {
            zone_reset_frequency: true,
            ..write
        },
        JobFacts {
            norandommap: true,
            ..write
        },
        JobFacts {
            softrandommap: true,
            ..write
        },
        JobFacts {
            seq_holes: true,
            ..write
        },
        JobFacts {
            rand_multi: true,
            ..write
        },
        JobFacts {
            io_size_over_size: true,
            ..write
        },
        JobFacts {
            verify_only: true,
            ..write
        },
    ] {
        assert!(!checks(g, &f).header_seed, "{f:?}");
    }
    // ... unless set explicitly.
    let f = JobFacts {
        norandommap: true,
        header_seed: Some(true),
        ..write
    };
    assert!(checks(g, &f).header_seed);
    // Write sequence off: verify_only; norandommap with async depth; experimental verify
    // at overlap risk; and never without writes, with variable bs or time_based.
    for f in [
        JobFacts {
            verify_only: true,
            ..write
        },
        JobFacts {
            norandommap: true,
            async_depth: true,
            ..write
        },
        JobFacts {
            experimental_verify: true,
            io_size_over_size: true,
            ..write
        },
        JobFacts {
            fixed_bs: false,
            ..write
        },
        JobFacts {
            time_based: true,
            ..write
        },
        JobFacts {
            write_sequence: Some(true),
            writes: false,
            ..write
        },
    ] {
        assert!(!checks(g, &f).write_sequence, "{f:?}");
    }
    assert!(
        checks(
            g,
            &JobFacts {
                norandommap: true,
                ..write
            }
        )
        .write_sequence
    );
    // fio 3.33: the seed only for mixed jobs without backlog; numberio as before.
    let g = Generation::Fio333;
    assert!(!checks(g, &write).header_seed);
    assert!(
        checks(
            g,
            &JobFacts {
                mixed: true,
                ..write
            }
        )
        .header_seed
    );
    assert!(
        !checks(
            g,
            &JobFacts {
                mixed: true,
                verify_backlog: true,
                ..write
            }
        )
        .header_seed
    );
    assert!(checks(g, &write).write_sequence);
    // fio 3.33's verify_only replays do not check the write sequence.
    assert!(
        !checks(
            g,
            &JobFacts {
                verify_only: true,
                ..write
            }
        )
        .write_sequence
    );
    // Log order.
    let rand = JobFacts {
        random: true,
        ..write
    };
    assert_eq!(order(Generation::Fio333, &rand), Order::Written);
    let again = JobFacts {
        io_size_over_size: true,
        ..rand
    };
    assert_eq!(
        order(Generation::Fio333, &again),
        Order::Offset,
        "one pass, sorted"
    );
    assert_eq!(order(Generation::Fio333, &write), Order::Offset);
    assert_eq!(order(Generation::Latest, &rand), Order::Written);
    assert_eq!(
        order(
            Generation::Latest,
            &JobFacts {
                io_size_over_size: true,
                ..rand
            }
        ),
        Order::Offset
    );
    assert_eq!(
        order(
            Generation::Latest,
            &JobFacts {
                norandommap: true,
                ..rand
            }
        ),
        Order::Offset
    );
}

#[test]
fn seed_replay_is_a_function_of_the_numberio() {
    // A failed write changes nothing for the writes after it.
    let seeds: Vec<u64> = (0..10).map(|n| replay_seed(5, n)).collect();
    assert_eq!(replay_seed(5, 7), seeds[7]);
    assert_ne!(seeds[6], seeds[7]);
    assert_ne!(replay_seed(6, 7), seeds[7], "another job, other seeds");
}

#[test]
fn seeds_are_fios() {
    // Header rand_seed of the first writes of `fio --name=x --rw=write --bs=4k
    // --verify=crc32c` (thread 1, default seed), read from fio 3.33's blocks; and the first
    // with --random_generator=tausworthe64.
    use flexio_workload::rng::{fio_seeds, slot};
    let s = fio_seeds(0x89, 1, true);
    let ver = s[slot::BS + 3];
    let mut g = SeedGen::new(ver, false);
    let got: Vec<u64> = (0..4).map(|_| g.next_seed()).collect();
    assert_eq!(
        got,
        vec![
            46386204153304124,
            9852480210356360750,
            4726550845720924880,
            1763778943062938676
        ]
    );
    let mut g = SeedGen::new(ver, true);
    assert_eq!(g.next_seed(), 1376551349165771642);
    assert_eq!(g.next_seed(), 17629557187480396817);
}
