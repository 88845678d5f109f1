#!/usr/bin/env python3
"""Run fio and flexio on the same workloads in the same run and print the ratio.

Each workload runs fio, flexio, fio, flexio, ... (--runs pairs), so both tools see the
same machine state; the table shows each tool's median IOPS, the ratio flexio/fio and the
CPU time each spent per I/O (user + system, from the JSON report). The table is also
written as JSON (--json).

Usage: python3 bench/compare.py [--runs 5] [--runtime 5] [--only NAME] [--json FILE]
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
FLEXIO = os.path.join(HERE, "..", "target", "release", "flexio")
# Files "on the machine's disk" live here (not tmpfs); kept between runs.
DISK = os.environ.get("FLEXIO_BENCH_DISK_DIR", os.path.join(HERE, "..", "target", "bench-disk"))


def tmpfs_dir():
    """A directory on tmpfs: /dev/shm if it is tmpfs, else a fresh tmpfs mount (root)."""
    try:
        fs = subprocess.run(["stat", "-f", "-c", "%T", "/dev/shm"], capture_output=True, text=True).stdout.strip()
    except OSError:
        fs = ""
    if fs == "tmpfs":
        return tempfile.mkdtemp(prefix="flexio-bench-", dir="/dev/shm"), None
    d = tempfile.mkdtemp(prefix="flexio-bench-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1g", "tmpfs", d], check=True)
    return d, d


def make_file(path, size):
    with open(path, "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(size >> 20):
            f.write(chunk)


WORKLOADS = [
    {
        "name": "null-4k-qd1",
        "what": "null engine, 4 KiB reads, iodepth 1: pure tool overhead",
        "args": ["--ioengine=null", "--bs=4k", "--size=100g", "--rw=read"],
    },
    {
        "name": "psync-4k-randread-tmpfs",
        "what": "psync 4 KiB random reads from a 256 MiB file on tmpfs (system-call bound)",
        "args": ["--ioengine=psync", "--bs=4k", "--rw=randread", "--size=256m", "--filename={tmpfs}/bench.file"],
        "file": ("{tmpfs}/bench.file", 256 << 20),
    },
    {
        "name": "io_uring-4k-randread-qd32",
        "what": "io_uring 4 KiB random reads, O_DIRECT, iodepth 32, 1 GiB file on the machine's disk",
        "args": ["--ioengine=io_uring", "--iodepth=32", "--direct=1", "--bs=4k", "--rw=randread", "--size=1g", "--filename={disk}/bench.disk"],
        "file": ("{disk}/bench.disk", 1 << 30),
    },
    {
        "name": "libaio-4k-randread-qd32",
        "what": "libaio 4 KiB random reads, O_DIRECT, iodepth 32, 1 GiB file on the machine's disk",
        "args": ["--ioengine=libaio", "--iodepth=32", "--direct=1", "--bs=4k", "--rw=randread", "--size=1g", "--filename={disk}/bench.disk"],
        "file": ("{disk}/bench.disk", 1 << 30),
    },
]


def run_one(tool, w, runtime, tmp):
    exe = "fio" if tool == "fio" else FLEXIO
    args = [a.replace("{tmpfs}", tmp).replace("{disk}", DISK) for a in w["args"]]
    cmd = [exe, "--name=bench", *args, "--time_based", f"--runtime={runtime}", "--output-format=json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{tool} failed on {w['name']}: {p.stderr}")
    doc = json.loads(p.stdout[p.stdout.index("{"):])
    job = doc["jobs"][0]
    ios = sum(job[d]["total_ios"] for d in ("read", "write", "trim"))
    iops = sum(job[d]["iops"] for d in ("read", "write", "trim"))
    cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100.0 * job["job_runtime"] / 1000.0
    # CPU seconds per million I/Os.
    return iops, (cpu_s / ios * 1e6 if ios else 0.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--only", default=None, help="comma-separated workload names")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    if not shutil.which("fio"):
        sys.exit("fio is not installed (apt-get install -y fio)")
    if not os.path.exists(FLEXIO):
        sys.exit("build flexio first: cargo build --release")
    os.makedirs(DISK, exist_ok=True)
    tmp, mounted = tmpfs_dir()
    rows = []
    try:
        for w in WORKLOADS:
            if a.only and w["name"] not in a.only.split(","):
                continue
            if "file" in w:
                path, size = w["file"]
                real = path.replace("{tmpfs}", tmp).replace("{disk}", DISK)
                if not (os.path.exists(real) and os.path.getsize(real) == size):
                    make_file(real, size)
            res = {"fio": [], "flexio": []}
            for _ in range(a.runs):
                for tool in ("fio", "flexio"):
                    res[tool].append(run_one(tool, w, a.runtime, tmp))
            med = {t: statistics.median(x[0] for x in res[t]) for t in res}
            cpu = {t: statistics.median(x[1] for x in res[t]) for t in res}
            rows.append(
                {
                    "workload": w["name"],
                    "what": w["what"],
                    "runs": a.runs,
                    "runtime_s": a.runtime,
                    "fio_iops_median": med["fio"],
                    "flexio_iops_median": med["flexio"],
                    "ratio": med["flexio"] / med["fio"] if med["fio"] else 0.0,
                    "fio_cpu_s_per_million_ios": cpu["fio"],
                    "flexio_cpu_s_per_million_ios": cpu["flexio"],
                    "fio_iops_all": [x[0] for x in res["fio"]],
                    "flexio_iops_all": [x[0] for x in res["flexio"]],
                }
            )
    finally:
        if mounted:
            subprocess.run(["umount", mounted])
            os.rmdir(mounted)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    fio_ver = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"fio: {fio_ver}   flexio: {os.path.relpath(FLEXIO)}   runs: {a.runs} x {a.runtime}s each, alternating")
    print(f"{'workload':<26}{'fio IOPS':>12}{'flexio IOPS':>14}{'ratio':>8}{'fio CPU s/M':>13}{'flexio CPU s/M':>16}")
    for r in rows:
        print(
            f"{r['workload']:<26}{r['fio_iops_median']:>12.0f}{r['flexio_iops_median']:>14.0f}{r['ratio']:>8.2f}"
            f"{r['fio_cpu_s_per_million_ios']:>13.2f}{r['flexio_cpu_s_per_million_ios']:>16.2f}"
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"fio": fio_ver, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
