#!/usr/bin/env bash
# Time `flexio report` on over 10 million log lines of every kind: a null-engine run of 2.55
# million I/Os with per-I/O latency, bandwidth and IOPS logs (lat, clat, iops: a line per
# I/O; bw: a line per I/O with a non-zero completion latency, a few percent fewer) and a
# histogram log (clat_hist, one line of 1,856 buckets per millisecond), then the report,
# measured with /usr/bin/time -v (wall time, peak memory), and the page's size.
# Usage: bench/report_10m.sh [DIR]   (default: a temporary folder, removed afterwards)
set -euo pipefail
flexio="$(cd "$(dirname "$0")/.." && pwd)/target/release/flexio"
[ -x "$flexio" ] || { echo "build first: cargo build --release" >&2; exit 2; }
dir="${1:-$(mktemp -d)}"
[ -n "${1:-}" ] || trap 'rm -rf "$dir"' EXIT
cd "$dir"
"$flexio" --name=big --ioengine=null --rw=randread --bs=4k --size=64g --number_ios=2550000 \
    --write_lat_log=big --write_bw_log=big --write_iops_log=big --log_avg_msec=0 \
    --write_hist_log=big --log_hist_msec=1 --output-format=json+ --output=big.json >/dev/null
for f in big_*.log; do
    [ -s "$f" ] && printf '  %-22s %9d lines %6s\n' "$f" "$(wc -l < "$f")" "$(du -h "$f" | cut -f1)"
done
echo "log lines: $(cat big_*.log | wc -l)  ($(du -ch big_*.log | tail -1 | cut -f1))"
/usr/bin/time -v "$flexio" report big.json -o big.html 2>&1 |
    grep -E "wrote|Elapsed|Maximum resident"
grep -q '>Bandwidth over time<' big.html && grep -q '>IOPS over time<' big.html &&
    grep -q 'clat p99' big.html || { echo "the report lacks a chart" >&2; exit 1; }
echo "HTML: $(stat -c %s big.html) bytes"
