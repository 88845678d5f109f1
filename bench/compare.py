#!/usr/bin/env python3
"""Run fio and flexio on the same workloads in the same run and print the ratios.

For each workload the tools run alternately, fio, flexio, fio, flexio, ... (--runs pairs,
at least 5 by default), so both see the same machine state. For each tool the table shows
the median IOPS (or MB/s), the ratio flexio/fio, CPU seconds per million I/Os and the peak
memory of the whole process tree (fio forks a process per job):

* CPU: user + system time of the tool's process tree (getrusage(RUSAGE_CHILDREN) around
  the run), divided by the I/Os the tool reports. Set-up and reporting are included.
* Memory: the process tree is sampled every 50 ms; "RSS" is the peak of the summed VmRSS
  (pages shared between fio's processes count once per process), "PSS" the peak of the
  summed proportional set size (shared pages split between their users). Both are in the
  JSON; the table shows PSS.

Physical references run in the same rounds: `flexio-refloop null` (the loop alone) for the
null-engine workload and `flexio-refloop pread` (random preads, nothing else) for psync on
tmpfs, so the table shows how close each tool gets to the limit.

A workload's `flexio_args` go to flexio only: `psync-1m-direct-4k-pages` runs flexio
with its I/O buffer on 4 KiB pages (`--iomem_thp=0`), the layout fio's malloc gives, next to
the default row where flexio's 1 MiB buffer is on a transparent huge page.

The start-up workload is a job file with 200 jobs; the time from starting the tool to the
first write reaching the target file is measured by watching the file.

`null-4k-lat-log` divides the I/Os by the whole command's wall time (`"wall_rate"`): fio keeps
its per-I/O log in memory and writes it after the run, flexio writes it during the run, and
the rate a user sees includes both. The file-engine rows (`filecreate`, `filestat`,
`dircreate`) run `flexio-refloop files` (the same system call on the same names, bare) as the
reference; fio 3.33 has no dircreate, so that row has no fio column. `replay-4k-tmpfs` replays
a version 2 trace of random 4 KiB reads (read_iolog) with both tools; `net-tcp-loopback` is a
listener and a sender job over TCP on 127.0.0.1 in one command (MB/s of the listener).

Each tool runs in a session of its own (fio's job processes make their own with setsid);
`--cgroup` (root, cgroup v1) also puts every tool in a CPU cgroup of the run's own, where the
kernel's autogroup scheduling does not give each of fio's job sessions a CPU share of its own:
the fair setting on a busy machine.

Usage: python3 bench/compare.py [--runs 5] [--runtime 5] [--only NAME,...] [--json FILE] [--cgroup]
"""

import argparse
import glob
import json
import os
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
# FLEXIO_BENCH_BIN measures another flexio build (e.g. the one before a change).
FLEXIO = os.environ.get("FLEXIO_BENCH_BIN", os.path.join(ROOT, "target", "release", "flexio"))
REFLOOP = os.path.join(ROOT, "target", "release", "flexio-refloop")
# Files "on the machine's disk" live here (not tmpfs); kept between runs.
DISK = os.environ.get("FLEXIO_BENCH_DISK_DIR", os.path.join(ROOT, "target", "bench-disk"))


def tmpfs_dir():
    """A directory on tmpfs: /dev/shm if it is tmpfs, else a fresh tmpfs mount (root)."""
    fs = subprocess.run(["stat", "-f", "-c", "%T", "/dev/shm"], capture_output=True, text=True).stdout.strip()
    if fs == "tmpfs":
        return tempfile.mkdtemp(prefix="flexio-bench-", dir="/dev/shm"), None
    d = tempfile.mkdtemp(prefix="flexio-bench-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2g", "tmpfs", d], check=True)
    return d, d


def make_file(path, size):
    with open(path, "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(size >> 20):
            f.write(chunk)


TMPFS_FILE = ("{tmpfs}/bench.file", 256 << 20)
DISK_FILE = ("{disk}/bench.disk", 1 << 30)

def scaled_names(w, old, new, extra=()):
    """A file-engine row over another number of names, with `extra` job options."""
    return {
        **w,
        "name": w["name"].replace(old, new),
        "what": w["what"].replace(f"{int(old):,}", f"{int(new):,}"),
        "args": [a.replace(old, new) for a in w["args"]] + list(extra),
        "ref": [a.replace(old, new) for a in w["ref"]],
    }


def file_row(engine, ref_op, what, **extra):
    """A file-engine row over 10,000 names in {tmpfs}/md, with its bare-loop reference."""
    return {
        "name": f"{engine}-10000",
        "what": what,
        "args": [f"--ioengine={engine}", "--nrfiles=10000", "--filesize=4k", "--bs=4k",
                 "--directory={tmpfs}/md"],
        "fixed": True,
        "ref": ["files", ref_op, "{tmpfs}/md", "bench.0.", "10000"],
        **extra,
    }


FILE_ENGINE_ROWS = [
    file_row("filecreate", "create",
             "filecreate: open(O_CREAT) + close of 10,000 new files on tmpfs (files/s)",
             fresh_dir="{tmpfs}/md"),
    file_row("filestat", "stat", "filestat: stat of 10,000 files of 4 KiB on tmpfs (files/s)",
             layout_dir="{tmpfs}/md"),
    file_row("dircreate", "mkdir",
             "dircreate: mkdir of 10,000 new directories on tmpfs (directories/s; fio 3.33 "
             "has no dircreate)", fresh_dir="{tmpfs}/md", no_fio=True),
]


WORKLOADS = [
    {
        "name": "null-4k-qd1",
        "what": "null engine, 4 KiB, iodepth 1, one job: pure tool overhead",
        "args": ["--ioengine=null", "--bs=4k", "--size=100g", "--rw=read"],
        "ref": ["null"],
    },
    {
        "name": "null-4k-qd64-batch",
        "what": "null engine through the asynchronous path: iodepth 64, batches of 16",
        "args": ["--ioengine=null", "--bs=4k", "--size=100g", "--rw=read", "--iodepth=64",
                 "--iodepth_batch_submit=16", "--iodepth_batch_complete_min=16"],
    },
    {
        "name": "psync-4k-randread-tmpfs",
        "what": "psync 4 KiB random reads, 256 MiB file on tmpfs, one job (system-call bound)",
        "args": ["--ioengine=psync", "--bs=4k", "--rw=randread", "--size=256m", "--filename={tmpfs}/bench.file"],
        "file": TMPFS_FILE,
        "ref": ["pread", "{tmpfs}/bench.file", "4096"],
    },
    {
        "name": "psync-4k-randread-tmpfs-x2",
        "what": "the same with numjobs=2",
        "args": ["--ioengine=psync", "--bs=4k", "--rw=randread", "--size=256m", "--filename={tmpfs}/bench.file",
                 "--numjobs=2", "--group_reporting"],
        "file": TMPFS_FILE,
    },
    {
        "name": "psync-4k-randwrite-tmpfs",
        "what": "psync 4 KiB random writes, 256 MiB file on tmpfs",
        "args": ["--ioengine=psync", "--bs=4k", "--rw=randwrite", "--size=256m", "--filename={tmpfs}/bench.file"],
        "file": TMPFS_FILE,
    },
    {
        "name": "io_uring-4k-randread-qd32",
        "what": "io_uring 4 KiB random reads, O_DIRECT, iodepth 32, 1 GiB file on the machine's disk",
        "args": ["--ioengine=io_uring", "--iodepth=32", "--direct=1", "--bs=4k", "--rw=randread", "--size=1g",
                 "--filename={disk}/bench.disk"],
        "file": DISK_FILE,
        "device": True,
    },
    {
        "name": "libaio-4k-randread-qd32",
        "what": "libaio 4 KiB random reads, O_DIRECT, iodepth 32, 1 GiB file on the machine's disk",
        "args": ["--ioengine=libaio", "--iodepth=32", "--direct=1", "--bs=4k", "--rw=randread", "--size=1g",
                 "--filename={disk}/bench.disk"],
        "file": DISK_FILE,
        "device": True,
    },
    {
        "name": "psync-1m-read-direct",
        "what": "1 MiB sequential reads, O_DIRECT, 1 GiB file on the machine's disk (MB/s)",
        "args": ["--ioengine=psync", "--direct=1", "--bs=1m", "--rw=read", "--size=1g", "--filename={disk}/bench.disk"],
        "file": DISK_FILE,
        "device": True,
        "unit": "MB/s",
    },
    {
        "name": "psync-1m-direct-4k-pages",
        "what": "the same with flexio's buffer on 4 KiB pages like fio's (--iomem_thp=0 for flexio)",
        "args": ["--ioengine=psync", "--direct=1", "--bs=1m", "--rw=read", "--size=1g", "--filename={disk}/bench.disk"],
        "flexio_args": ["--iomem_thp=0"],
        "file": DISK_FILE,
        "device": True,
        "unit": "MB/s",
    },
    {
        "name": "psync-64jobs-tmpfs",
        "what": "numjobs=64, psync 4 KiB random reads on tmpfs (memory and scaling)",
        "args": ["--ioengine=psync", "--bs=4k", "--rw=randread", "--size=256m", "--filename={tmpfs}/bench.file",
                 "--numjobs=64", "--group_reporting"],
        "file": TMPFS_FILE,
    },
    {
        "name": "nrfiles-10000",
        "what": "one job over 10,000 files of 4 KiB on tmpfs, round robin, 4 KiB random reads",
        "args": ["--ioengine=psync", "--bs=4k", "--rw=randread", "--nrfiles=10000", "--filesize=4k",
                 "--directory={tmpfs}/many"],
        "layout": True,
    },
    {
        "name": "verify-crc32c-64k-tmpfs",
        "what": "write 512 MiB in 64 KiB blocks with verify=crc32c on tmpfs, then read back and check (MB/s of the check)",
        "args": ["--ioengine=psync", "--bs=64k", "--rw=write", "--size=512m", "--verify=crc32c",
                 "--filename={tmpfs}/verify.file"],
        "fixed": True,
        "dir": "read",
        "unit": "MB/s",
    },
    {
        "name": "verify-md5-64k-tmpfs",
        "what": "the same with verify=md5",
        "args": ["--ioengine=psync", "--bs=64k", "--rw=write", "--size=512m", "--verify=md5",
                 "--filename={tmpfs}/verify.file"],
        "fixed": True,
        "dir": "read",
        "unit": "MB/s",
    },
    {
        "name": "verify-sha256-64k-tmpfs",
        "what": "the same with verify=sha256 (flexio: sha2's SHA-NI core where the CPU has it)",
        "args": ["--ioengine=psync", "--bs=64k", "--rw=write", "--size=512m", "--verify=sha256",
                 "--filename={tmpfs}/verify.file"],
        "fixed": True,
        "dir": "read",
        "unit": "MB/s",
    },
    {
        "name": "verify-sha1-64k-tmpfs",
        "what": "the same with verify=sha1",
        "args": ["--ioengine=psync", "--bs=64k", "--rw=write", "--size=512m", "--verify=sha1",
                 "--filename={tmpfs}/verify.file"],
        "fixed": True,
        "dir": "read",
        "unit": "MB/s",
    },
    {
        "name": "verify-xxhash-64k-tmpfs",
        "what": "the same with verify=xxhash",
        "args": ["--ioengine=psync", "--bs=64k", "--rw=write", "--size=512m", "--verify=xxhash",
                 "--filename={tmpfs}/verify.file"],
        "fixed": True,
        "dir": "read",
        "unit": "MB/s",
    },
    {
        "name": "null-4k-lat-log",
        "what": "null engine with per-I/O latency logs (write_lat_log, log_avg_msec=0), no rate "
                "limit: I/Os over the whole command's wall time, log writing included",
        "args": ["--ioengine=null", "--bs=4k", "--size=100g", "--rw=read", "--write_lat_log=bench",
                 "--log_avg_msec=0"],
        "wall_rate": True,
        "cleanup": "bench_*.log",
    },
    {
        "name": "psync-4k-randread-norandommap",
        "what": "psync 4 KiB random reads on tmpfs with norandommap (offsets drawn, not "
                "tracked): the bare pread loop draws them the same way",
        "args": ["--ioengine=psync", "--bs=4k", "--rw=randread", "--size=256m", "--norandommap",
                 "--filename={tmpfs}/bench.file"],
        "file": TMPFS_FILE,
        "ref": ["pread", "{tmpfs}/bench.file", "4096"],
    },
    {
        "name": "replay-4k-tmpfs",
        "what": "read_iolog: a version 2 trace of 1,000,000 random 4 KiB reads of the tmpfs "
                "file, replayed as fast as it goes",
        "args": ["--ioengine=psync", "--read_iolog={tmpfs}/replay.log"],
        "file": TMPFS_FILE,
        "trace": 1_000_000,
        "fixed": True,
    },
    {
        "name": "net-tcp-loopback",
        "what": "net engine over TCP on 127.0.0.1: a sender writing 4 GiB in 64 KiB blocks "
                "and a listener reading until the sender closes, in one command (MB/s of the "
                "listener; fio 3.33's listener undercounts short reads a little)",
        "argv": ["--name=rx", "--ioengine=net", "--port={port}", "--listen", "--rw=read",
                 "--bs=64k", "--size=64g",
                 "--name=tx", "--ioengine=net", "--hostname=127.0.0.1", "--port={port}",
                 "--rw=write", "--bs=64k", "--size=4g", "--startdelay=1"],
        "fixed": True,
        "dir": "read",
        "unit": "MB/s",
    },
    # The file engines over 10,000 names, and over 100,000 (the 10,000-name rows last about
    # 30 ms, too short to trust one ratio). fio keeps every file of a job open unless
    # openfiles caps it, and 100,000 descriptors are over the usual limits: both tools get
    # openfiles=1024.
    *FILE_ENGINE_ROWS,
    *[scaled_names(w, "10000", "100000", ["--openfiles=1024"]) for w in FILE_ENGINE_ROWS],
    {
        "name": "startup-200-jobs",
        "what": "a job file with 200 jobs: time from start to the first I/O (ms, lower is better)",
        "startup": True,
    },
]


def tree_pids(pid):
    """pid and all its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


def mem_of(pid):
    """(VmRSS, Pss) in KiB of one process; zeros if it is gone."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except (OSError, ValueError):
        pass
    return rss, pss


# --cgroup: a CPU cgroup of the run's own that every tool joins (see cgroup_setup).
CGROUP = None


def cgroup_setup():
    """A cgroup v1 CPU cgroup for the tools. The kernel's autogroup scheduling gives every
    session of the root cgroup a CPU share of its own, and fio's job processes each make a
    session (setsid): on a busy machine 64 fio jobs get 64 shares, flexio's 64 threads one.
    Inside a cgroup of their own all tasks compete as tasks, fio's and flexio's alike."""
    global CGROUP
    base = "/sys/fs/cgroup/cpu"
    if os.geteuid() != 0 or not os.path.isdir(base):
        sys.exit("--cgroup needs root and cgroup v1's cpu controller at /sys/fs/cgroup/cpu")
    CGROUP = os.path.join(base, f"flexio-bench-{os.getpid()}")
    os.mkdir(CGROUP)


def cgroup_cleanup():
    if CGROUP:
        try:
            os.rmdir(CGROUP)
        except OSError as e:
            print(f"cannot remove {CGROUP}: {e}", file=sys.stderr)


def join_cgroup():
    with open(os.path.join(CGROUP, "tasks"), "w") as f:
        f.write(str(os.getpid()))


def run(cmd, cwd, watch=None, sample=True):
    """Run a command; its stdout, wall time, CPU seconds of its process tree, peak memory,
    and (with `watch`) seconds until that file was first modified."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    before = os.stat(watch).st_mtime_ns if watch else None
    t0 = time.perf_counter()
    # A session of its own, as fio's job processes make themselves (setsid): with the
    # kernel's autogroup scheduling a session is a CPU share of its own on a busy machine.
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=join_cgroup if CGROUP else None)
    peak = {"rss": 0, "pss": 0, "first": None}
    done = threading.Event()

    def sampler():
        while not done.is_set():
            rss = pss = 0
            for q in tree_pids(p.pid):
                a, b = mem_of(q)
                rss += a
                pss += b
            peak["rss"] = max(peak["rss"], rss)
            peak["pss"] = max(peak["pss"], pss)
            done.wait(0.05)

    def watcher():
        while not done.is_set():
            try:
                if os.stat(watch).st_mtime_ns != before:
                    peak["first"] = time.perf_counter() - t0
                    return
            except OSError:
                pass
            time.sleep(0.0001)

    threads = []
    if sample:
        threads.append(threading.Thread(target=sampler, daemon=True))
    if watch:
        threads.append(threading.Thread(target=watcher, daemon=True))
    for t in threads:
        t.start()
    out, err = p.communicate()
    wall = time.perf_counter() - t0
    done.set()
    for t in threads:
        t.join()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} failed ({p.returncode}): {err[-2000:]}")
    return {"out": out, "wall": wall, "cpu": cpu, "rss_kib": peak["rss"], "pss_kib": peak["pss"],
            "first_io_s": peak["first"]}


def subst(s, tmp):
    return s.replace("{tmpfs}", tmp).replace("{disk}", DISK)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def fresh(w, tmp):
    """Before each run: an empty directory for the file engines that create names."""
    if "fresh_dir" in w:
        d = subst(w["fresh_dir"], tmp)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)


def run_tool(tool, w, runtime, tmp):
    exe = "fio" if tool == "fio" else FLEXIO
    fresh(w, tmp)
    if "argv" in w:
        port = free_port()
        args = [subst(a, tmp).replace("{port}", port) for a in w["argv"]]
    else:
        args = ["--name=bench", *[subst(a, tmp) for a in w["args"]]]
    if tool != "fio":
        args += w.get("flexio_args", [])
    timing = [] if w.get("fixed") else ["--time_based", f"--runtime={runtime}"]
    cmd = [exe, *args, *timing, "--output-format=json"]
    r = run(cmd, tmp)
    if "cleanup" in w:
        for f in glob.glob(os.path.join(tmp, w["cleanup"])):
            os.unlink(f)
    doc = json.loads(r["out"][r["out"].index("{"):])
    ios = sum(j[d]["total_ios"] for j in doc["jobs"] for d in ("read", "write", "trim"))
    iops = sum(j[d]["iops"] for j in doc["jobs"] for d in ("read", "write", "trim"))
    dirs = (w["dir"],) if "dir" in w else ("read", "write", "trim")
    mbs = sum(j[d]["bw_bytes"] for j in doc["jobs"] for d in dirs) / 1e6
    if w.get("wall_rate"):
        value = ios / r["wall"]
    else:
        value = mbs if w.get("unit") == "MB/s" else iops
    return {"value": value, "ios": ios, "cpu_s_per_m": r["cpu"] / ios * 1e6 if ios else 0.0,
            "rss_mib": r["rss_kib"] / 1024, "pss_mib": r["pss_kib"] / 1024, "wall_s": r["wall"]}


def run_ref(w, runtime, tmp):
    fresh(w, tmp)
    args = [subst(a, tmp) for a in w["ref"]]
    if args[0] in ("pread", "null"):
        args.append(str(runtime))
    r = run([REFLOOP, *args], tmp, sample=False)
    return json.loads(r["out"])["iops"]


def startup_job(tmp):
    """A job file of 200 jobs writing 4 KiB each into one existing file."""
    target = os.path.join(tmp, "start.file")
    with open(target, "wb") as f:
        f.write(b"\0" * 4096)
    lines = ["[global]", "ioengine=psync", "rw=write", "bs=4k", "size=4k", f"filename={target}", ""]
    for i in range(200):
        lines += [f"[j{i}]", ""]
    path = os.path.join(tmp, "start.fio")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path, target


def run_startup(tool, tmp):
    path, target = startup_job(tmp)
    time.sleep(0.02)  # the file's mtime must be older than the first write
    exe = "fio" if tool == "fio" else FLEXIO
    r = run([exe, path, "--output-format=json"], tmp, watch=target, sample=False)
    return {"value": (r["first_io_s"] or r["wall"]) * 1000.0, "wall_ms": r["wall"] * 1000.0, "ios": 200,
            "cpu_s_per_m": r["cpu"] / 200 * 1e6, "rss_mib": 0.0, "pss_mib": 0.0}


def prepare(w, tmp):
    if "file" in w:
        path, size = w["file"]
        real = subst(path, tmp)
        if not (os.path.exists(real) and os.path.getsize(real) == size):
            make_file(real, size)
    if w.get("layout"):
        # Both tools name files <job>.<n>.<file>: lay them out once for both.
        os.makedirs(os.path.join(tmp, "many"), exist_ok=True)
        run([FLEXIO, "--name=bench", *[subst(a, tmp) for a in w["args"]], "--create_only=1"], tmp, sample=False)
    if "layout_dir" in w:
        d = subst(w["layout_dir"], tmp)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        n = int(w["ref"][-1])
        for i in range(n):
            with open(os.path.join(d, f"bench.0.{i}"), "wb") as f:
                f.write(b"\0" * 4096)
    if "trace" in w:
        # A version 2 iolog of random 4 KiB reads of the workload's file.
        path, size = w["file"]
        target = subst(path, tmp)
        rng = random.Random(1)
        blocks = size // 4096
        with open(os.path.join(tmp, "replay.log"), "w") as f:
            f.write(f"fio version 2 iolog\n{target} add\n{target} open\n")
            for _ in range(w["trace"]):
                f.write(f"{target} read {rng.randrange(blocks) * 4096} 4096\n")
            f.write(f"{target} close\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--only", default=None, help="comma-separated workload names")
    ap.add_argument("--json", default=None)
    ap.add_argument("--cgroup", action="store_true",
                    help="run the tools in a CPU cgroup of their own (fair on a busy machine; root)")
    a = ap.parse_args()
    if not shutil.which("fio"):
        sys.exit("fio is not installed (apt-get install -y fio)")
    if not (os.path.exists(FLEXIO) and os.path.exists(REFLOOP)):
        sys.exit("build first: cargo build --release --workspace")
    if a.cgroup:
        cgroup_setup()
    os.makedirs(DISK, exist_ok=True)
    tmp, mounted = tmpfs_dir()
    rows = []
    try:
        for w in WORKLOADS:
            if a.only and w["name"] not in a.only.split(","):
                continue
            prepare(w, tmp)
            res = {"fio": [], "flexio": []}
            refs = []
            for _ in range(a.runs):
                for tool in ("fio", "flexio"):
                    if tool == "fio" and w.get("no_fio"):
                        continue
                    if w.get("startup"):
                        res[tool].append(run_startup(tool, tmp))
                    else:
                        res[tool].append(run_tool(tool, w, a.runtime, tmp))
                if "ref" in w:
                    refs.append(run_ref(w, a.runtime, tmp))
            keys = ("value", "cpu_s_per_m", "rss_mib", "pss_mib")
            med = {t: {k: statistics.median(x[k] for x in res[t]) if res[t] else 0.0 for k in keys}
                   for t in res}
            startup = bool(w.get("startup"))
            fv, xv = med["fio"]["value"], med["flexio"]["value"]
            ratio = (fv / xv if xv else 0.0) if startup else (xv / fv if fv else 0.0)
            ref = statistics.median(refs) if refs else None
            rows.append({
                "workload": w["name"],
                "what": w["what"],
                "unit": "ms to first I/O" if startup else w.get("unit", "IOPS"),
                "runs": a.runs,
                "runtime_s": a.runtime,
                "fio": med["fio"]["value"],
                "flexio": med["flexio"]["value"],
                # flexio/fio for rates; fio/flexio for the start-up time (so >1 is better).
                "ratio": ratio,
                "reference": ref,
                "flexio_vs_reference": (xv / ref) if ref else None,
                "fio_cpu_s_per_million_ios": med["fio"]["cpu_s_per_m"],
                "flexio_cpu_s_per_million_ios": med["flexio"]["cpu_s_per_m"],
                "fio_peak_rss_mib": med["fio"]["rss_mib"],
                "flexio_peak_rss_mib": med["flexio"]["rss_mib"],
                "fio_peak_pss_mib": med["fio"]["pss_mib"],
                "flexio_peak_pss_mib": med["flexio"]["pss_mib"],
                "fio_all": [x["value"] for x in res["fio"]],
                "flexio_all": [x["value"] for x in res["flexio"]],
                "reference_all": refs,
            })
    finally:
        if mounted:
            subprocess.run(["umount", mounted])
            os.rmdir(mounted)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
        cgroup_cleanup()
    fio_ver = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"fio: {fio_ver}   flexio: {os.path.relpath(FLEXIO)}   {a.runs} x {a.runtime} s per tool, alternating")
    print(f"{'workload':<30}{'unit':>6}{'fio':>12}{'flexio':>12}{'ratio':>7}{'ref':>12}{'fx/ref':>7}"
          f"{'fio CPU':>9}{'fx CPU':>8}{'fio PSS':>9}{'fx PSS':>8}")
    print(f"{'':<30}{'':>6}{'':>12}{'':>12}{'':>7}{'':>12}{'':>7}{'s/M I/O':>9}{'s/M I/O':>8}{'MiB':>9}{'MiB':>8}")
    for r in rows:
        unit = "ms" if r["unit"].startswith("ms") else r["unit"]
        ref = f"{r['reference']:>12.0f}" if r["reference"] else f"{'-':>12}"
        fxr = f"{r['flexio_vs_reference']:>7.2f}" if r["flexio_vs_reference"] else f"{'-':>7}"
        if r["fio_all"]:
            fio = (f"{r['fio']:>12.1f}", f"{r['ratio']:>7.2f}", f"{r['fio_cpu_s_per_million_ios']:>9.2f}",
                   f"{r['fio_peak_pss_mib']:>9.1f}")
        else:
            fio = (f"{'-':>12}", f"{'-':>7}", f"{'-':>9}", f"{'-':>9}")
        print(f"{r['workload']:<30}{unit:>6}{fio[0]}{r['flexio']:>12.1f}{fio[1]}{ref}{fxr}"
              f"{fio[2]}{r['flexio_cpu_s_per_million_ios']:>8.2f}{fio[3]}{r['flexio_peak_pss_mib']:>8.1f}")
    print("ratio: flexio/fio (start-up: fio time / flexio time); ref: the bare loop (refloop); "
          "CPU: user+system of the process tree per million I/Os; PSS: peak proportional memory")
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            json.dump({"fio": fio_ver, "rows": rows}, f, indent=2)
        os.replace(a.json + ".tmp", a.json)


if __name__ == "__main__":
    main()
