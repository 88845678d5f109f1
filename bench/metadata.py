#!/usr/bin/env python3
"""Metadata operations: flexio's mdtree next to bonnie++ and the bare system-call loop.

For each file system (a fresh tmpfs, and ext4 on a fresh loop device over a sparse file on the
machine's disk) the script runs, in alternating rounds so all three see the same machine state:

* flexio's `mdtree` engine: a tree of FANOUT subdirectories under its root, one level deep,
  FILES files in every directory, the whole life cycle (mkdir, create, close, dirfsync, stat,
  access, chmod, open, readdir, link, symlink, rename, unlink, rmdir);
* `flexio-refloop meta`: the same system calls in the same order on the same tree, each timed
  alone with nothing else around it (the limit a tool can reach);
* bonnie++ `-s 0 -n K:0:0:16` (K*1024 empty files in 16 directories), whose sequential and
  random create/read(stat)/delete rates it reports.

The tree has about as many files as bonnie++'s test (17 directories of FILES files, FILES =
K*1024/17 by default). Two rates per operation: `op/s`, operations per second of time spent in
the operation (fileop's figure; the bare loop's is the limit), and `phase/s`, the operations
over the wall time from the first to the last one of the kind (mdtest's and bonnie++'s kind
of figure: the tool's own time between operations counts). bonnie++'s create is creat+close,
its read a stat of each file, its delete an unlink: they are set beside flexio's and the bare
loop's create, stat and unlink phase rates. Each figure is the median over the rounds.

Needs root (mounts, loop devices), bonnie++ (`apt-get install -y bonnie++`), and release
builds: `cargo build --release -p flexio -p flexio-refloop`.

A warm-up round (discarded) comes first: a fresh file system's first use is slower.

Usage: python3 bench/metadata.py [--rounds 3] [--warmup 1] [--kfiles 256] [--fs tmpfs,ext4]
                                 [--json FILE]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
FLEXIO = os.environ.get("FLEXIO_BENCH_BIN", os.path.join(ROOT, "target", "release", "flexio"))
REFLOOP = os.path.join(ROOT, "target", "release", "flexio-refloop")
DISK = os.environ.get("FLEXIO_BENCH_DISK_DIR", os.path.join(ROOT, "target", "bench-disk"))

KINDS = ["mkdir", "create", "close", "dirfsync", "stat", "access", "chmod", "open", "readdir",
         "link", "symlink", "rename", "unlink", "rmdir"]
# bonnie++'s figures beside flexio's operations: (sequential, random) CSV fields of 1.98.
BONNIE = {"create": (26, 32), "stat": (28, 34), "unlink": (30, 36)}
FANOUT = 16


def sh(*cmd):
    r = subprocess.run(list(cmd), capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()[-2000:]}")
    return r


class Target:
    """A fresh, mounted file system; removed by close()."""

    def __init__(self, kind, size):
        self.kind, self.loop, self.backing = kind, None, None
        self.mnt = tempfile.mkdtemp(prefix=f"flexio-md-{kind}-")
        if kind == "tmpfs":
            sh("mount", "-t", "tmpfs", "-o", f"size={size}", "flexio-md", self.mnt)
        elif kind == "ext4":
            os.makedirs(DISK, exist_ok=True)
            self.backing = os.path.join(DISK, "metadata-ext4.img")
            with open(self.backing, "wb") as f:
                f.truncate(size)
            self.loop = sh("losetup", "-f", "--show", self.backing).stdout.strip()
            # Inodes for the files, their symlinks and bonnie++'s files (default: 1 per 16 KiB).
            sh("mkfs.ext4", "-q", "-F", "-i", "4096", self.loop)
            sh("mount", self.loop, self.mnt)
        else:
            raise SystemExit(f"unknown file system {kind}")

    def close(self):
        subprocess.run(["umount", self.mnt], check=False)
        if self.loop:
            subprocess.run(["losetup", "-d", self.loop], check=False)
        if self.backing:
            os.unlink(self.backing)
        os.rmdir(self.mnt)


def run_flexio(d, files):
    out = sh(FLEXIO, "--name=md", "--ioengine=mdtree", f"--directory={d}", f"--fanout={FANOUT}",
             "--tree_depth=1", f"--files_per_dir={files}", "--output-format=json").stdout
    ops = json.loads(out)["jobs"][0]["flexio"]["ops"]
    return {k: (v["ops_per_s"], v["span_ops_per_s"]) for k, v in ops.items() if v["count"] > 0}


def run_bare(d, files):
    out = sh(REFLOOP, "meta", d, str(FANOUT), "1", str(files), "all").stdout
    res = {}
    for k, v in json.loads(out).items():
        if v["count"] > 0:
            op = v["count"] * 1e9 / v["total_ns"] if v["total_ns"] else 0.0
            ph = v["count"] * 1e9 / v["span_ns"] if v["span_ns"] else 0.0
            res[k] = (op, ph)
    return res


def run_bonnie(d, kfiles):
    out = sh("bonnie++", "-d", d, "-s", "0", "-n", f"{kfiles}:0:0:16", "-u", "root", "-q").stdout
    line = [l for l in out.splitlines() if l.startswith("1.9")][-1].split(",")
    if line[0] != "1.98":
        raise SystemExit(f"bonnie++ CSV format {line[0]} is not 1.98's")

    def num(i):
        # "+++++": bonnie++ found the phase too short to give a figure.
        return float(line[i]) if line[i] and line[i][0].isdigit() else None
    return {k: (num(s), num(r)) for k, (s, r) in BONNIE.items()}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, ratio=False):
    if x is None:
        return "-"
    return f"{x:.2f}" if ratio else f"{x:,.0f}"


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def study(kind, rounds, kfiles, size, warmup):
    files = kfiles * 1024 // (FANOUT + 1)
    t = Target(kind, size)
    try:
        fx, bare, bon = [], [], []
        for r in range(warmup + rounds):
            for name, fn, acc in (("bare", lambda: run_bare(t.mnt, files), bare),
                                  ("flexio", lambda: run_flexio(t.mnt, files), fx),
                                  ("bonnie++", lambda: run_bonnie(t.mnt, kfiles), bon)):
                what = "warm-up" if r < warmup else f"round {r - warmup + 1}/{rounds}"
                print(f"  {kind} {what}: {name}", file=sys.stderr, flush=True)
                res = fn()
                if r >= warmup:
                    acc.append(res)
                if os.listdir(t.mnt) not in ([], ["lost+found"]):
                    raise SystemExit(f"{name} left {os.listdir(t.mnt)} behind")
    finally:
        t.close()
    rows = []
    for k in KINDS:
        f_op = med(x.get(k, (None, None))[0] for x in fx)
        f_ph = med(x.get(k, (None, None))[1] for x in fx)
        b_op = med(x.get(k, (None, None))[0] for x in bare)
        b_ph = med(x.get(k, (None, None))[1] for x in bare)
        seq = med(x[k][0] for x in bon) if k in BONNIE else None
        rnd = med(x[k][1] for x in bon) if k in BONNIE else None
        if k == "close":
            # Closes follow both create and open: their span is not one phase.
            f_ph = b_ph = None
        ratio = lambda a, b: a / b if a and b else None
        rows.append({"op": k, "flexio_op": f_op, "flexio_phase": f_ph, "bonnie_seq": seq,
                     "bonnie_rand": rnd, "bare_op": b_op, "bare_phase": b_ph,
                     "fx_bare_op": ratio(f_op, b_op), "fx_bare_phase": ratio(f_ph, b_ph),
                     "fx_bonnie": ratio(f_ph, seq)})
    return {"fs": kind, "files": files * (FANOUT + 1), "bonnie_files": kfiles * 1024,
            "rows": rows, "rounds": {"flexio": fx, "bare": bare, "bonnie": bon}}


def show(res):
    print(f"\n{res['fs']}: flexio and the bare loop on {res['files']} files in {FANOUT + 1} "
          f"directories, bonnie++ on {res['bonnie_files']} files in 16 directories (ops/s)")
    head = ["operation", "flexio op/s", "flexio phase/s", "bonnie++ seq/s", "bonnie++ rnd/s",
            "bare op/s", "bare phase/s", "fx/bare op", "fx/bare phase", "fx/bonnie"]
    w = [10, 13, 15, 15, 15, 13, 13, 11, 13, 10]
    print("  ".join(h.rjust(n) if i else h.ljust(n) for i, (h, n) in enumerate(zip(head, w))))
    for r in res["rows"]:
        cells = [r["op"], fmt(r["flexio_op"]), fmt(r["flexio_phase"]), fmt(r["bonnie_seq"]),
                 fmt(r["bonnie_rand"]), fmt(r["bare_op"]), fmt(r["bare_phase"]),
                 fmt(r["fx_bare_op"], True), fmt(r["fx_bare_phase"], True),
                 fmt(r["fx_bonnie"], True)]
        print("  ".join(c.rjust(n) if i else c.ljust(n) for i, (c, n) in enumerate(zip(cells, w))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1,
                    help="rounds run first and discarded (a fresh file system's first use)")
    ap.add_argument("--kfiles", type=int, default=256,
                    help="bonnie++'s -n (thousands of files, 1024 each); the tree matches it")
    ap.add_argument("--fs", default="tmpfs,ext4")
    ap.add_argument("--size", default=str(4 << 30), help="bytes of each file system")
    ap.add_argument("--json", help="write the results here too")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench/metadata.py needs root (mounts and loop devices)")
    for p in (FLEXIO, REFLOOP):
        if not os.path.exists(p):
            raise SystemExit(f"{p} is missing: cargo build --release -p flexio -p flexio-refloop")
    if not shutil.which("bonnie++"):
        raise SystemExit("bonnie++ is not installed: apt-get install -y bonnie++")
    print(f"load average before: {load()}; {os.cpu_count()} CPUs; {a.warmup} warm-up + "
          f"{a.rounds} rounds, alternating bare, flexio, bonnie++", flush=True)
    results = []
    for kind in a.fs.split(","):
        res = study(kind, a.rounds, a.kfiles, int(a.size), a.warmup)
        show(res)
        results.append(res)
    print(f"\nload average after: {load()}")
    print("op/s: per second of time in the operation; phase/s: over the span from the first to "
          "the last operation of the kind; fx/bare: flexio / bare loop (1.00 = the limit); "
          "fx/bonnie: flexio's phase rate / bonnie++'s sequential rate")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
