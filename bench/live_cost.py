#!/usr/bin/env python3
"""The cost of the live outputs: null-engine IOPS of a plain run against the same run with
`--metrics-listen` scraped every second (and, as a third variant, with `--interval-stream`
writing a file as well), alternating plain / exporter / exporter+stream, --runs rounds.

The null engine does no I/O, so anything the live sampling adds to a job thread shows at
full size; the scraper is this script, one HTTP GET of /metrics per second, as Prometheus
would do.

Usage: python3 bench/live_cost.py [--runs 7] [--runtime 5] [--bin target/release/flexio]
Prints each run's IOPS, the medians and the ratios to the plain run.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scraper(port, stop, counts):
    """GET /metrics every second until `stop` is set."""
    url = f"http://127.0.0.1:{port}/metrics"
    while not stop.is_set():
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                r.read()
                counts[0] += 1
        except OSError:
            pass
        stop.wait(1.0)


def run(binary, runtime, variant, workdir):
    args = [
        binary,
        "--name=live-cost",
        "--ioengine=null",
        "--size=1g",
        "--bs=4k",
        "--rw=randread",
        "--time_based",
        f"--runtime={runtime}",
        "--output-format=json",
    ]
    port = None
    if variant in ("exporter", "exporter+stream"):
        port = free_port()
        args.append(f"--metrics-listen=127.0.0.1:{port}")
    if variant == "exporter+stream":
        args.append(f"--interval-stream={os.path.join(workdir, 'stream.jsonl')}")
    stop = threading.Event()
    counts = [0]
    t = None
    if port is not None:
        t = threading.Thread(target=scraper, args=(port, stop, counts), daemon=True)
        t.start()
    out = subprocess.run(args, cwd=workdir, capture_output=True, text=True, check=True)
    stop.set()
    if t:
        t.join()
    iops = json.loads(out.stdout)["jobs"][0]["read"]["iops"]
    return iops, counts[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument(
        "--bin",
        default=os.environ.get("FLEXIO_BENCH_BIN", os.path.join(ROOT, "target/release/flexio")),
    )
    a = ap.parse_args()
    variants = ["plain", "exporter", "exporter+stream"]
    res = {v: [] for v in variants}
    with tempfile.TemporaryDirectory() as d:
        for r in range(a.runs):
            # Rotate the order each round so no variant always runs first.
            order = variants[r % 3:] + variants[: r % 3]
            for v in order:
                iops, scrapes = run(a.bin, a.runtime, v, d)
                res[v].append(iops)
                extra = f" ({scrapes} scrapes)" if v != "plain" else ""
                print(f"round {r + 1} {v:16s} {iops:12.0f} IOPS{extra}", flush=True)
    base = statistics.median(res["plain"])
    print()
    for v in variants:
        m = statistics.median(res[v])
        print(f"{v:16s} median {m:12.0f} IOPS  ratio {m / base:.4f}")


if __name__ == "__main__":
    main()
