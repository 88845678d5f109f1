#!/usr/bin/env python3
"""io_uring at its peak: flexio's io_uring engine against fio's own peak tool and fio's engine.

The anchor is fio's `t/io_uring`: a bare io_uring submit/reap loop with no job logic, the
program fio's authors use to find a machine's io_uring limit. It is not in Debian's fio
binary package; `--peak-tool PATH` names a built one, or `--fetch-peak-tool` builds it from
Debian's fio source package (`apt-get source fio`; needs a deb-src line for the archive) in
~/.cache/flexio/fio-src.

Every tool runs pinned to one CPU (taskset), so IOPS are IOPS per core: t/io_uring's one
submitting thread, fio's job process, and flexio's job thread with its main and status
threads on the same core. Each row alternates the three (--runs rounds) and prints medians:
IOPS, CPU seconds per million I/Os, and flexio against the peak tool and against fio.

Targets:
* tmpfs: a 1 GiB file on a tmpfs the script mounts, buffered (page cache copies).
* loop: a loop device over a file on that tmpfs, O_DIRECT (the block layer and the loop
  driver's work per request; the loop device's own direct I/O to tmpfs where the kernel
  allows it).

Rows, for each target: depth 1, 32 and 128, with t/io_uring's batching given to all three:
up to min(depth, 32) requests prepared and submitted at once, and a full queue waits for
min(depth, 32) completions (fio's `iodepth_batch_submit` and `iodepth_batch_complete_min`), registered files and fixed buffers on (t/io_uring's defaults, fio's
`registerfiles=1 fixedbufs=1`), no polled completions (neither target has poll queues). With
`--sqpoll` the depth 32 row is run again with a kernel submission thread (fio's
`sqthread_poll=1`) for flexio and fio; fio 3.33's t/io_uring has no switch for it, so that
row has no peak column.

Usage: python3 bench/uring_peak.py [--peak-tool PATH | --fetch-peak-tool] [--runs 3]
                                   [--runtime 3] [--cpu N] [--only tmpfs,loop] [--sqpoll]
                                   [--json FILE]
Needs root (the tmpfs mount and the loop device).
"""

import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (the shared runner: run(), make_file())

CACHE = os.path.expanduser("~/.cache/flexio/fio-src")


def fetch_peak_tool():
    """Build t/io_uring from Debian's fio source package; the path of the program."""
    os.makedirs(CACHE, exist_ok=True)
    built = glob.glob(os.path.join(CACHE, "fio-*", "t", "io_uring"))
    if built:
        return built[0]
    r = subprocess.run(["apt-get", "source", "--download-only", "-q", "fio"], cwd=CACHE,
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("apt-get source fio failed (a deb-src line for the Debian archive is needed, "
                 f"or give --peak-tool):\n{r.stderr[-1500:]}")
    tars = glob.glob(os.path.join(CACHE, "fio_*.orig.tar.*"))
    if not tars:
        sys.exit(f"no fio source archive in {CACHE}")
    subprocess.run(["tar", "xf", tars[0]], cwd=CACHE, check=True)
    src = sorted(d for d in glob.glob(os.path.join(CACHE, "fio-*")) if os.path.isdir(d))[-1]
    subprocess.run(["./configure", "--disable-native"], cwd=src, check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["make", f"-j{os.cpu_count()}", "t/io_uring"], cwd=src, check=True,
                   stdout=subprocess.DEVNULL)
    return os.path.join(src, "t", "io_uring")


def peak_iops(out):
    """t/io_uring prints one `IOPS=160.38K, ...` line a second: the mean of them, the first
    (ramping up) left out when there are more."""
    scale = {"": 1, "K": 1e3, "M": 1e6}
    v = [float(n) * scale[u] for n, u in re.findall(r"^IOPS=([\d.]+)([KM]?),", out, re.M)]
    if not v:
        sys.exit(f"t/io_uring printed no IOPS lines:\n{out[-1500:]}")
    return statistics.mean(v[1:] if len(v) > 2 else v)


def batches(depth):
    return min(depth, 32)


def peak_cmd(tool, cpu, target, depth, direct, runtime):
    b = batches(depth)
    return ["taskset", "-c", str(cpu), tool, "-d", str(depth), "-s", str(b), "-c", str(b),
            "-b", "4096", "-p", "0", "-B", "1", "-F", "1", "-n", "1", "-O", str(direct),
            "-R", "1", "-r", str(runtime), target]


def job_cmd(binary, cpu, target, size, depth, direct, runtime, sqpoll):
    b = batches(depth)
    return ["taskset", "-c", str(cpu), binary, "--name=uring", f"--filename={target}",
            "--ioengine=io_uring", "--rw=randread", "--bs=4k", f"--size={size}",
            f"--iodepth={depth}", f"--iodepth_batch_submit={b}",
            f"--iodepth_batch_complete_min={b}", f"--iodepth_batch_complete_max={b}",
            "--registerfiles=1", "--fixedbufs=1", f"--direct={direct}",
            f"--sqthread_poll={1 if sqpoll else 0}", "--norandommap", "--randrepeat=0",
            "--time_based", f"--runtime={runtime}", "--thread", "--output-format=json"]


def job_iops(out):
    j = json.loads(out[out.index("{"):])
    return sum(job["read"]["iops"] for job in j["jobs"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peak-tool")
    ap.add_argument("--fetch-peak-tool", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=1, help="the CPU every tool is pinned to")
    ap.add_argument("--only", default="tmpfs,loop")
    ap.add_argument("--sqpoll", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root: the tmpfs mount and the loop device")
    peak = a.peak_tool or (fetch_peak_tool() if a.fetch_peak_tool else None)
    if not peak or not os.access(peak, os.X_OK):
        sys.exit("no peak tool: give --peak-tool PATH (fio's t/io_uring) or --fetch-peak-tool")
    if not os.access(compare.FLEXIO, os.X_OK):
        sys.exit(f"no flexio at {compare.FLEXIO}: cargo build --release")
    fio = shutil.which("fio")
    if not fio:
        sys.exit("fio is not installed (apt-get install -y fio)")

    mnt = tempfile.mkdtemp(prefix="flexio-uring-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1700m", "tmpfs", mnt], check=True)
    loop = None
    rows = []
    try:
        path = os.path.join(mnt, "f")
        compare.make_file(path, 1 << 30)
        targets = []
        if "tmpfs" in a.only:
            targets.append(("tmpfs", path, 0))
        if "loop" in a.only:
            back = os.path.join(mnt, "loop-backing")
            compare.make_file(back, 512 << 20)
            loop = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", back],
                                  capture_output=True, text=True)
            if loop.returncode != 0:
                loop = subprocess.run(["losetup", "--find", "--show", back],
                                      capture_output=True, text=True, check=True)
            loop = loop.stdout.strip()
            targets.append(("loop", loop, 1))
        cases = [(t, d, False) for t in targets for d in (1, 32, 128)]
        if a.sqpoll:
            cases += [(t, 32, True) for t in targets]
        print(f"pinned to CPU {a.cpu}; {a.runs} rounds x {a.runtime} s; medians")
        print(f"{'target':<6} {'depth':>5} {'sqpoll':>6} | {'peak IOPS':>10} {'flexio':>10} "
              f"{'fio':>10} | {'vs peak':>7} {'vs fio':>6} | CPU s/M I/Os peak flexio fio")
        for (name, target, direct), depth, sq in cases:
            size = "1g" if name == "tmpfs" else "512m"
            got = {"peak": [], "flexio": [], "fio": []}
            cpu = {"peak": [], "flexio": [], "fio": []}
            for r in range(a.runs):
                order = ["peak", "flexio", "fio"]
                order = order[r % 3:] + order[:r % 3]
                for tool in order:
                    if tool == "peak":
                        if sq:
                            continue
                        res = compare.run(peak_cmd(peak, a.cpu, target, depth, direct,
                                                   a.runtime), mnt, sample=False)
                        iops = peak_iops(res["out"])
                    else:
                        binary = compare.FLEXIO if tool == "flexio" else fio
                        res = compare.run(job_cmd(binary, a.cpu, target, size, depth, direct,
                                                  a.runtime, sq), mnt, sample=False)
                        iops = job_iops(res["out"])
                    got[tool].append(iops)
                    cpu[tool].append(res["cpu"] / (iops * a.runtime / 1e6))
            med = {k: statistics.median(v) if v else None for k, v in got.items()}
            cpm = {k: statistics.median(v) if v else None for k, v in cpu.items()}
            vs_peak = med["flexio"] / med["peak"] if med["peak"] else None

            def f(x, fmt):
                return format(x, fmt) if x is not None else "-"
            print(f"{name:<6} {depth:>5} {('yes' if sq else 'no'):>6} | {f(med['peak'], '10,.0f')} "
                  f"{med['flexio']:>10,.0f} {med['fio']:>10,.0f} | {f(vs_peak, '7.2f')} "
                  f"{med['flexio'] / med['fio']:>6.2f} | {f(cpm['peak'], '.2f')} "
                  f"{cpm['flexio']:.2f} {cpm['fio']:.2f}")
            rows.append({"target": name, "depth": depth, "sqpoll": sq, "iops": got,
                         "cpu_s_per_million": cpu})
    finally:
        if loop:
            subprocess.run(["losetup", "-d", loop])
        subprocess.run(["umount", mnt])
        os.rmdir(mnt)
    if a.json:
        with open(a.json + ".tmp", "w") as fh:
            json.dump(rows, fh, indent=1)
        os.replace(a.json + ".tmp", a.json)


if __name__ == "__main__":
    main()
