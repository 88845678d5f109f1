#!/usr/bin/env python3
"""Scaling curves: fio and flexio on the same workload as one parameter grows, in the same run.

Each point runs the tools alternately (fio, flexio, fio, flexio, ...; --runs pairs) and prints
the medians: throughput, the ratio flexio/fio, CPU seconds per million I/Os and the peak
proportional memory (PSS) of each tool's process tree. The cost per I/O of a tool that scales
stays flat along a curve; the table shows where it does not.

Curves (--only picks some):

* numjobs: psync 4 KiB random reads of one 256 MiB file on tmpfs with numjobs 1, 4, 16, 64,
  256, as fio's processes (the default) and as threads (--thread). flexio always runs jobs
  as threads; its column is the same run in both tables, so the process table shows what
  fio's forking costs.
* nrfiles: one job reading 4 KiB at random from 10, 1,000 and 100,000 files of 4 KiB on
  tmpfs, every file open (openfiles unset), and with openfiles=64 (files closed and opened
  as the job moves between them). Every file open needs as many descriptors: the script
  raises its RLIMIT_NOFILE (the tools inherit it) up to the hard limit, and a point the hard
  limit cannot hold is skipped with the reason printed.
* runlength: the null engine with per-I/O latency logs (log_avg_msec=0), at 100,000 IOPS
  (rate_iops) for 5 s against 60 s with the logs on the machine's disk, and without a rate
  limit for 5 s against 20 s with the logs on tmpfs (millions of lines a second). Peak memory
  must not grow with the run (fio keeps its log samples in memory until the job ends);
  `wall` is the whole command, writing the logs included, and the IOPS of the unlimited
  rows are the I/Os over that wall time.
* iodepth: the null engine with iodepth 1, 4, 16, 64, 256 (batches of iodepth/4).

`--quick` runs every curve at small sizes (a smoke test of the script: 1-second points, the
smallest numbers of jobs, files and depths, and short run lengths).

`--cores[=N]` pins each job to one core, the same way for both tools: the first N cores of
the script's CPU affinity (all of them without N) become `cpus_allowed` with
`cpus_allowed_policy=split`, which puts job i (counted from 0 in the order the tool numbers
its jobs) on core i mod N. Jobs then cannot migrate, so on a machine with many cores a curve
shows what each tool does with one core per job rather than what the scheduler does; the
numjobs curve gains a point at N jobs (one per core) when N is not already one of its points.

Usage: python3 bench/scaling.py [--runs 3] [--runtime 3] [--quick] [--only numjobs,nrfiles,...]
                                [--cores[=N]] [--json FILE] [--cgroup]
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (the shared runner: run(), tmpfs_dir(), make_file())

# --cores: the options that pin job i to core i mod N, given to both tools (empty: unpinned).
PIN = []


def pin_args(cores):
    """fio's and flexio's options that put job i on cores[i mod len(cores)]: the set as
    cpus_allowed, split one core per job (round robin over the set in job order)."""
    return [f"--cpus_allowed={','.join(str(c) for c in cores)}", "--cpus_allowed_policy=split"]


def cores_of(n):
    """The first `n` cores (all with n == 0) of this process's CPU affinity."""
    mine = sorted(os.sched_getaffinity(0))
    if n < 0 or n > len(mine):
        sys.exit(f"--cores={n}: this process may run on {len(mine)} cores ({mine})")
    return mine[:n] if n else mine


def measure(tool, args, runtime, cwd, fixed=False, wall_rate=False, after=None):
    """One run of a tool: IOPS (with `wall_rate`: I/Os over the command's wall time), I/Os,
    CPU s per million I/Os, peak PSS MiB, wall s. `after` runs when the tool has ended."""
    exe = "fio" if tool == "fio" else compare.FLEXIO
    timing = [] if fixed else ["--time_based", f"--runtime={runtime}"]
    r = compare.run([exe, "--name=bench", *args, *PIN, *timing, "--output-format=json"], cwd)
    if after:
        after()
    doc = json.loads(r["out"][r["out"].index("{"):])
    ios = sum(j[d]["total_ios"] for j in doc["jobs"] for d in ("read", "write", "trim"))
    iops = sum(j[d]["iops"] for j in doc["jobs"] for d in ("read", "write", "trim"))
    if wall_rate:
        iops = ios / r["wall"]
    return {"iops": iops, "ios": ios, "cpu": r["cpu"] / ios * 1e6 if ios else 0.0,
            "pss": r["pss_kib"] / 1024, "wall": r["wall"]}


def point(args, runs, runtime, cwd, fio_args=(), flexio_args=(), fixed=False, wall_rate=False,
          after=None):
    """Alternating runs of both tools; the medians per tool."""
    res = {"fio": [], "flexio": []}
    for _ in range(runs):
        res["fio"].append(measure("fio", [*args, *fio_args], runtime, cwd, fixed, wall_rate, after))
        res["flexio"].append(measure("flexio", [*args, *flexio_args], runtime, cwd, fixed, wall_rate,
                                     after))
    return {t: {k: statistics.median(x[k] for x in v) for k in v[0]} for t, v in res.items()}


def want_files(n):
    """Raise RLIMIT_NOFILE (soft, up to the hard limit) for `n` files open at once plus
    the tools' own descriptors; the reason it cannot be done, or None."""
    need = n + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            return f"RLIMIT_NOFILE's hard limit is {hard}, {need} descriptors are needed"
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
        except (ValueError, OSError) as e:
            return f"cannot raise RLIMIT_NOFILE to {need}: {e}"
    return None


def table(title, label, rows):
    print(f"\n{title}")
    print(f"{label:>14}{'fio IOPS':>13}{'flexio IOPS':>13}{'ratio':>7}"
          f"{'fio CPU':>9}{'fx CPU':>8}{'fio PSS':>9}{'fx PSS':>8}{'fio wall':>9}{'fx wall':>8}")
    print(f"{'':>14}{'':>13}{'':>13}{'':>7}{'s/M I/O':>9}{'s/M I/O':>8}{'MiB':>9}{'MiB':>8}{'s':>9}{'s':>8}")
    for key, m in rows:
        f, x = m["fio"], m["flexio"]
        ratio = x["iops"] / f["iops"] if f["iops"] else 0.0
        print(f"{key:>14}{f['iops']:>13.0f}{x['iops']:>13.0f}{ratio:>7.2f}{f['cpu']:>9.2f}{x['cpu']:>8.2f}"
              f"{f['pss']:>9.1f}{x['pss']:>8.1f}{f['wall']:>9.1f}{x['wall']:>8.1f}")


def curve_numjobs(a, tmp, out):
    path = os.path.join(tmp, "bench.file")
    if not (os.path.exists(path) and os.path.getsize(path) == 256 << 20):
        compare.make_file(path, 256 << 20)
    base = ["--ioengine=psync", "--bs=4k", "--rw=randread", "--size=256m", f"--filename={path}",
            "--group_reporting"]
    for mode, extra in (("processes", []), ("threads", ["--thread"])):
        rows = []
        points = [1, 4] if a.quick else [1, 4, 16, 64, 256]
        if a.cores_list and len(a.cores_list) not in points:
            points = sorted(points + [len(a.cores_list)])
        for n in points:
            rows.append((n, point([*base, f"--numjobs={n}"], a.runs, a.runtime, tmp, fio_args=extra)))
        table(f"numjobs, fio as {mode} (psync 4 KiB random reads, 256 MiB file on tmpfs)", "numjobs", rows)
        out[f"numjobs-{mode}"] = rows


def curve_nrfiles(a, tmp, out):
    for n in ((10, 1000) if a.quick else (10, 1000, 100000)):
        d = os.path.join(tmp, f"files{n}")
        os.makedirs(d, exist_ok=True)
        args = ["--ioengine=psync", "--bs=4k", "--rw=randread", f"--nrfiles={n}", "--filesize=4k",
                f"--directory={d}"]
        why = want_files(n)
        # Both tools name files <job>.<n>.<file>: lay them out once, for both (64 open at a
        # time, whatever the descriptor limit).
        compare.run([compare.FLEXIO, "--name=bench", *args, "--openfiles=64", "--create_only=1"], tmp,
                    sample=False)
        rows = []
        for cap in ("all open", "openfiles=64"):
            if cap == "all open" and why:
                print(f"nrfiles={n}, every file open: skipped: {why}", flush=True)
                continue
            extra = [] if cap == "all open" else ["--openfiles=64"]
            rows.append((cap, point([*args, *extra], a.runs, a.runtime, tmp)))
        table(f"nrfiles={n} (4 KiB random reads over files of 4 KiB on tmpfs)", "files", rows)
        out[f"nrfiles-{n}"] = rows
        shutil.rmtree(d, ignore_errors=True)


def curve_runlength(a, tmp, out):
    base = ["--ioengine=null", "--bs=4k", "--rw=read", "--size=100g", "--write_lat_log=run",
            "--log_avg_msec=0"]
    for what, where, extra, lengths, wall_rate in (
            ("at 100,000 IOPS, logs on the machine's disk", os.path.join(compare.DISK, "scaling-logs"),
             ["--rate_iops=100000"], (1, 2) if a.quick else (5, 60), False),
            ("without a rate limit, logs on tmpfs; IOPS over the wall time", os.path.join(tmp, "logs"),
             [], (1, 2) if a.quick else (5, 20), True)):
        def clean():
            shutil.rmtree(where, ignore_errors=True)
            os.makedirs(where)
        rows = []
        for secs in lengths:
            clean()
            m = point([*base, *extra], a.runs, secs, where, wall_rate=wall_rate, after=clean)
            rows.append((f"{secs} s", m))
        shutil.rmtree(where, ignore_errors=True)
        key = "runlength" if extra else "runlength-unlimited"
        table(f"run length with per-I/O latency logs (null engine {what})", "runtime", rows)
        out[key] = rows


def curve_iodepth(a, tmp, out):
    rows = []
    for qd in ((1, 4) if a.quick else (1, 4, 16, 64, 256)):
        batch = max(1, qd // 4)
        args = ["--ioengine=null", "--bs=4k", "--rw=read", "--size=100g", f"--iodepth={qd}",
                f"--iodepth_batch_submit={batch}", f"--iodepth_batch_complete_min={batch}"]
        rows.append((qd, point(args, a.runs, a.runtime, tmp)))
    table("iodepth (null engine, batches of iodepth/4)", "iodepth", rows)
    out["iodepth"] = rows


CURVES = {"numjobs": curve_numjobs, "nrfiles": curve_nrfiles, "runlength": curve_runlength,
          "iodepth": curve_iodepth}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=3)
    ap.add_argument("--only", default=None, help="comma-separated: " + ",".join(CURVES))
    ap.add_argument("--quick", action="store_true", help="every curve at small sizes (a smoke test)")
    ap.add_argument("--cgroup", action="store_true",
                    help="run the tools in a CPU cgroup of their own (see compare.py; root)")
    ap.add_argument("--cores", type=int, nargs="?", const=0, default=None, metavar="N",
                    help="pin job i to core i mod N (the first N cores of the script's "
                         "affinity; all of them without N), both tools alike")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    a.cores_list = cores_of(a.cores) if a.cores is not None else []
    PIN[:] = pin_args(a.cores_list) if a.cores_list else []
    if a.quick:
        a.runtime = min(a.runtime, 1)
    if not shutil.which("fio"):
        sys.exit("fio is not installed (apt-get install -y fio)")
    if not os.path.exists(compare.FLEXIO):
        sys.exit("build first: cargo build --release")
    os.makedirs(compare.DISK, exist_ok=True)
    fio_ver = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"fio: {fio_ver}   flexio: {os.path.relpath(compare.FLEXIO)}   "
          f"{a.runs} x {a.runtime} s per tool and point, alternating")
    if a.cores_list:
        print(f"pinned: job i on core i mod {len(a.cores_list)} of {a.cores_list} "
              f"({' '.join(PIN)}, both tools)")
    if a.cgroup:
        compare.cgroup_setup()
    tmp, mounted = compare.tmpfs_dir()
    out = {}
    try:
        for name, f in CURVES.items():
            if a.only and name not in a.only.split(","):
                continue
            f(a, tmp, out)
    finally:
        if mounted:
            subprocess.run(["umount", mounted])
            os.rmdir(mounted)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
        compare.cgroup_cleanup()
    print("\nratio: flexio/fio IOPS; CPU: user+system of the process tree per million I/Os; "
          "PSS: peak proportional memory of the process tree; wall: the whole command")
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            json.dump({"fio": fio_ver, "cores": a.cores_list, "curves": {k: [[str(p), m] for p, m in v] for k, v in out.items()}},
                      f, indent=2)
        os.replace(a.json + ".tmp", a.json)


if __name__ == "__main__":
    main()
