#!/usr/bin/env python3
"""Differential comparison of flexio's output layouts with fio's.

Draws random jobs (one or two sections, random output formats and reporting options), runs
each in fio and in `flexio --compat=3.33`, one after the other in the same scratch
directory, and compares what a script reading the output would see:

* the exit codes;
* the normal output line by line: numbers masked, unit prefixes and number-width padding
  dropped, a run of percentile rows or latency-bucket lines counted as one line;
* JSON and JSON+ line by line (fio's `"key" : value` layout), values masked;
* terse lines field by field, numbers masked.

Lines that only flexio prints, by design (README: `rms:`, `few samples:`, the sched_lat
block, the `"flexio"` JSON object, `behind schedule:`), are left out, and so are fio's notes
beside a machine format (flexio writes them to stderr there). Jobs that both tools refuse
with the same exit code are not compared further (fio prints the header lines of the jobs
before the one it refuses). Pairs that make fio 3.33's empty phantom unit (a
group_reporting job after one without it) are not drawn. A differing job is kept under the
output directory (`N/fio.out`, `N/flexio.out`, `N/args`, the arguments shell-quoted) and
listed at the end; `--one ARGS...` runs one command line in both tools and prints the diff.

    tools/fio-diff/fio_diff.py [--seed S] [--jobs N] [--wide] [--flexio PATH] [--fio PATH] [--out DIR]
    tools/fio-diff/fio_diff.py --one --name=j0 --ioengine=null --size=1m ...

Needs fio 3.33 on PATH (or --fio). Writes only under a temporary directory and --out.
"""

import argparse
import difflib
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

FORMATS = ["normal", "json", "json+", "terse", "normal,json", "json,terse", "normal,terse",
           "normal,json+"]


def draw_job(rng, idx, rw_hint=None, wide=False):
    """One job section's options as `--key=value` strings (the first is --name)."""
    engine = rng.choice(["null", "null", "psync", "sync", "libaio", "io_uring", "posixaio",
                         "mmap", "pvsync2", "vsync"])
    rws = ["read", "write", "randread", "randwrite", "rw", "randrw"]
    if engine == "null":
        rws += ["trim", "randtrim", "trimwrite"]
    rw = rw_hint or rng.choice(rws)
    o = [f"--name=j{idx}", f"--ioengine={engine}", f"--rw={rw}"]
    o.append("--bs=" + rng.choice(["512", "4k", "4k", "8k", "16k", "64k"]))
    o.append("--size=" + rng.choice(["256k", "1m", "2m", "4m"]))
    if engine in ("libaio", "io_uring", "posixaio"):
        o.append(f"--iodepth={rng.choice([1, 2, 4, 8])}")
        o.append("--direct=1")
    elif engine in ("psync", "sync") and rng.random() < 0.2:
        o.append("--direct=1")
    if engine == "null" and rng.random() < 0.3:
        o.append(f"--iodepth={rng.choice([2, 8])}")
    r = rng.random
    if rw in ("rw", "randrw") and r() < 0.4:
        o.append(f"--rwmixread={rng.choice([10, 50, 90])}")
    if r() < 0.1:
        o.append("--bssplit=" + rng.choice(["4k/50:16k/50", "4k/80:64k/20"]))
    if r() < 0.1:
        o.append(f"--nrfiles={rng.choice([2, 4])}")
    if r() < 0.08:
        o.append("--thinktime=" + rng.choice(["100", "1ms"]))
    if r() < 0.08:
        o += ["--rate=" + rng.choice(["1m", "4m"]), "--time_based", "--runtime=1"]
    if r() < 0.08:
        o.append("--offset=" + rng.choice(["64k", "25%"]))
    if r() < 0.05:
        o += ["--latency_target=" + rng.choice(["10ms", "100us"]), "--latency_window=500ms",
              "--time_based", "--runtime=1"]
    if r() < 0.3:
        o.append(f"--numjobs={rng.choice([2, 3])}")
    if r() < 0.3:
        o.append("--group_reporting")
    if idx > 0 and r() < 0.2:
        o.append("--new_group")
    if idx > 0 and r() < 0.2:
        o.append("--stonewall")
    if r() < 0.2:
        o.append(f"--clat_percentiles={rng.choice([0, 1])}")
    if r() < 0.2:
        o.append("--lat_percentiles=1")
    if r() < 0.15:
        o.append("--slat_percentiles=1")
    if r() < 0.15:
        o.append("--percentile_list=" + rng.choice(["50:99", "1:50:99.9", "99.5"]))
    for opt in ["disable_lat", "disable_clat", "disable_slat", "disable_bw_measurement",
                "gtod_reduce"]:
        if r() < 0.08:
            o.append(f"--{opt}=1")
    if r() < 0.2:
        o.append("--unified_rw_reporting=" + rng.choice(["0", "1", "mixed", "both"]))
    if r() < 0.15:
        o.append(f"--kb_base={rng.choice([1000, 1024])}")
    if r() < 0.1:
        o.append(f"--unit_base={rng.choice([0, 1, 8])}")
    if r() < 0.1:
        o.append(f"--significant_figures={rng.randint(1, 10)}")
    if r() < 0.1:
        o.append("--description=drawn job")
    writes = "write" in rw or rw in ("rw", "randrw")
    if writes and r() < 0.15:
        o.append("--verify=" + rng.choice(["crc32c", "md5"]))
    if writes and engine != "null" and r() < 0.2:
        o.append(f"--{rng.choice(['fsync', 'fdatasync'])}={rng.choice([1, 4])}")
    if writes and r() < 0.1:
        o.append("--end_fsync=1")
    if r() < 0.15 and "--time_based" not in o:
        o += ["--time_based", "--runtime=1"]
        if r() < 0.5:
            o.append(f"--rate_iops={rng.choice([200, 1000])}")
    if r() < 0.05:
        o.append("--ramp_time=1")
    if r() < 0.1:
        o.append(f"--number_ios={rng.choice([5, 50])}")
    if r() < 0.15:
        o.append("--thread")
    if wide:
        o += draw_wide(rng, engine, rw)
    return o


def draw_wide(rng, engine, rw):
    """--wide: workload options beyond the reporting ones (offsets, distributions, zones,
    sizes), each drawn rarely so that a job holds a few of them."""
    r = rng.random
    o = []
    rand = rw.startswith("rand")
    if r() < 0.1:
        o.append(f"--rw={rw}:{rng.choice([2, 8])}k")  # holes; this later --rw wins
    if r() < 0.1:
        o.append("--io_size=" + rng.choice(["512k", "8m"]))
    if r() < 0.08:
        o.append("--bsrange=" + rng.choice(["512-8k", "4k-64k"]))
    if r() < 0.06:
        o.append("--blockalign=" + rng.choice(["4k", "8k"]))
    if rand and r() < 0.15:
        o.append("--random_distribution=" + rng.choice(
            ["zipf:1.2", "pareto:0.9", "normal:20", "random:50:random:50"]))
    if rand and r() < 0.1:
        o.append("--norandommap")
    if rand and r() < 0.08:
        o.append(f"--percentage_random={rng.choice([10, 50, 90])}")
    if r() < 0.06:
        o.append("--random_generator=" + rng.choice(["lfsr", "tausworthe64"]))
    if r() < 0.08:
        o.append("--file_service_type=" + rng.choice(["random", "sequential", "roundrobin:2"]))
        o.append("--nrfiles=3")
    if r() < 0.06:
        o += ["--zonemode=strided", "--zonesize=64k", "--zoneskip=64k"]
    if r() < 0.06:
        o.append(f"--loops={rng.choice([2, 3])}")
    if r() < 0.05 and engine in ("libaio", "io_uring"):
        o.append("--io_submit_mode=offload")
    if r() < 0.06 and engine in ("libaio", "io_uring", "posixaio"):
        o += [f"--iodepth_batch_submit={rng.choice([1, 2])}",
              f"--iodepth_batch_complete_min={rng.choice([0, 1])}"]
    if r() < 0.05:
        o.append("--create_on_open=1")
    if r() < 0.05 and engine != "null":
        o.append("--fsync_on_close=1")
    if r() < 0.05:
        o.append(f"--rate_process={rng.choice(['linear', 'poisson'])}")
        o += ["--rate_iops=500", "--time_based", "--runtime=1"]
    return o


def draw(rng, wide=False):
    args = ["--output-format=" + rng.choice(FORMATS)]
    if "terse" in args[0]:
        args.append(f"--terse-version={rng.choice([2, 3, 4, 5])}")
    j0 = draw_job(rng, 0, wide=wide)
    if rng.random() < 0.5:
        j1 = draw_job(rng, 1, wide=wide)
        # fio 3.33 prints an empty phantom unit where a group_reporting job follows one
        # without it in the same group (README); such pairs are not drawn.
        if ("--group_reporting" in j1 and "--group_reporting" not in j0
                and "--new_group" not in j1 and "--stonewall" not in j1):
            j0.append("--group_reporting")
        return args + j0 + j1
    return args + j0


def run(tool, args, cwd, timeout):
    try:
        p = subprocess.run([tool] + args, cwd=cwd, capture_output=True, text=True,
                           timeout=timeout, errors="replace")
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else ""
        return "timeout", out or "", ""


NUM = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
DATE = re.compile(r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \w{3} +\d+ [\d:]+ \d{4}")


def mask_normal(line):
    s = DATE.sub("DATE", line)
    s = re.sub(r"\b(fio|flexio)-[\w.+-]+", "VERSION", s)
    s = NUM.sub("N", s)
    s = re.sub(r"(?<=N)\s*[kKMGTPE]?i?(?=[Bb])", "", s)  # 9600KiB, 13.0MiB -> NB
    s = re.sub(r"(?<=N)[kMGTP](?=\b|,|\))", "", s)  # IOPS=12.3k -> N
    s = re.sub(r"\((nsec|usec|msec|sec)\)", "(T)", s)
    s = re.sub(r"\(\s*[kKM]i?B/s\)", "(B/s)", s)  # the bw sample line's unit
    s = re.sub(r"(?<=N)(nsec|usec|msec|sec|ns|us|ms|s)\b", "", s)
    s = re.sub(r"([=\[])\s+", r"\1", s)  # padding of narrow numbers: avg= N, [  N]
    return " ".join(s.split())


def mask_json(line):
    s = line.strip()
    m = re.match(r'^("[^"]*") : (.*?)(,?)$', s)
    if m:
        v = m.group(2)
        if v in ("{", "["):
            return f"{m.group(1)} : {v}"
        return f"{m.group(1)} : V{m.group(3)}"
    if re.match(r"^-?[\d.eE+-]+,?$", s):
        return "V," if s.endswith(",") else "V"
    return s


def is_json_line(line):
    s = line.strip()
    return bool(re.match(r'^"[^"]*" : ', s)) or s in ("{", "}", "},", "[", "]", "],") \
        or bool(re.match(r"^-?[\d.eE+-]+,?$", s))


def mask_terse(line):
    return ";".join(NUM.sub("N", f) for f in line.split(";")[2:])


def normalise(text):
    """The lines a layout-reading script depends on, masked."""
    out = []
    skip_depth = None  # inside the "flexio" JSON object: the brace depth it opened at
    depth = 0
    in_sched = False
    after_skip = False
    for raw in text.splitlines():
        line = raw.rstrip()
        s = line.strip()
        if skip_depth is not None:
            depth += s.count("{") - s.count("}")
            if depth <= skip_depth:
                skip_depth = None
                after_skip = True
            continue
        if re.match(r'^"flexio" : \{', s):
            skip_depth = depth
            depth += 1
            continue
        if is_json_line(line):
            depth += s.count("{") - s.count("}")
            t = mask_json(line)
            if after_skip and t[:1] in ("}", "]") and out and out[-1].endswith(","):
                out[-1] = out[-1][:-1]  # the member before the dropped object was last
            after_skip = False
            # JSON+ bins and latency maps: a run of `"number" : V` lines counts as one
            if re.match(r'^"[\d.]+" : V,?$', t) or t in ("V", "V,"):
                t = "NUMKEYS"
                if out and out[-1] == t:
                    continue
            out.append(t)
            continue
        if re.match(r"^\d;[^;]*;", s) and s.count(";") > 20:
            out.append("TERSE " + mask_terse(s))
            continue
        if s.startswith("sched_lat"):
            in_sched = True
            continue
        if in_sched and s.startswith("|"):
            continue
        in_sched = False
        if s.startswith(("rms:", "few samples:", "behind schedule:")):
            continue
        t = mask_normal(line)
        if not t:
            continue
        if t.startswith("|"):
            t = "PERCENTILE ROWS"
        elif re.match(r"^lat \(T\) : N=N%", t) or (out and out[-1] == "LAT BUCKETS"
                                                   and re.match(r"^lat \(T\) :", t)):
            t = "LAT BUCKETS"
        if out and out[-1] == t and t in ("PERCENTILE ROWS", "LAT BUCKETS"):
            continue
        out.append(t)
    return out


def compare(fio, flexio, args, work, timeout):
    for f in os.listdir(work):
        p = os.path.join(work, f)
        shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
    a = run(fio, args, work, timeout)
    for f in os.listdir(work):
        p = os.path.join(work, f)
        shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
    b = run(flexio, ["--compat=3.33"] + args, work, timeout)
    diffs = []
    if a[0] != b[0]:
        diffs.append(f"exit code: fio {a[0]}, flexio {b[0]}")
    if a[0] == b[0] and a[0] not in (0, "timeout"):
        # Both refused the job: fio may have printed the header lines of the jobs it read
        # before the one it refused; flexio checks every job before it prints anything.
        return diffs, a, b
    na, nb = normalise(a[1]), normalise(b[1])
    if any(f in args[0] for f in ("json", "terse")):
        # flexio's notes go to stderr beside a machine format (README); fio's to stdout
        na = [x for x in na if not x.startswith("fio: ")]
    if na != nb:
        diffs += list(difflib.unified_diff(na, nb, "fio", "flexio", n=1, lineterm=""))
    return diffs, a, b


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=40)
    ap.add_argument("--fio", default=shutil.which("fio") or "fio")
    ap.add_argument("--flexio", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "../../target/release/flexio"))
    ap.add_argument("--out", default=None, help="where differing jobs are kept")
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--one", action="store_true", help="run the remaining arguments once")
    ap.add_argument("--wide", action="store_true",
                    help="draw workload options too (offsets, distributions, zones, sizes)")
    opts, rest = ap.parse_known_args()
    if not shutil.which(opts.fio) and not os.path.exists(opts.fio):
        sys.exit("fio_diff: fio not found (--fio)")
    out = opts.out or tempfile.mkdtemp(prefix="fio-diff-")
    work = tempfile.mkdtemp(prefix="fio-diff-work-")
    try:
        if opts.one:
            diffs, a, b = compare(opts.fio, opts.flexio, rest, work, opts.timeout)
            print("\n".join(diffs) if diffs else "same")
            return 1 if diffs else 0
        rng = random.Random(opts.seed)
        bad = []
        for n in range(opts.jobs):
            args = draw(rng, opts.wide)
            diffs, a, b = compare(opts.fio, opts.flexio, args, work, opts.timeout)
            if diffs:
                d = os.path.join(out, str(n))
                os.makedirs(d, exist_ok=True)
                for name, r in (("fio", a), ("flexio", b)):
                    with open(os.path.join(d, name + ".out"), "w") as f:
                        f.write(f"# exit {r[0]}\n{r[1]}\n# stderr\n{r[2]}")
                with open(os.path.join(d, "args"), "w") as f:
                    f.write(shlex.join(args) + "\n")
                bad.append(n)
                print(f"--- job {n}: {shlex.join(args)}")
                print("\n".join(diffs[:40]))
        print(f"seed {opts.seed}: {len(bad)} of {opts.jobs} jobs differed"
              + (f" (kept in {out})" if bad else ""))
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
