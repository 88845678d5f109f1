#!/usr/bin/env bash
# Time `flexio report` on 10 million log lines: a null-engine run of 5 million I/Os with
# per-I/O latency logs (lat + clat: 2 x 5,000,000 lines, about 210 MB), then the report,
# measured with /usr/bin/time -v (wall time, peak memory) and the page's size.
# Usage: bench/report_10m.sh [DIR]   (default: a temporary folder, removed afterwards)
set -euo pipefail
flexio="$(cd "$(dirname "$0")/.." && pwd)/target/release/flexio"
[ -x "$flexio" ] || { echo "build first: cargo build --release" >&2; exit 2; }
dir="${1:-$(mktemp -d)}"
[ -n "${1:-}" ] || trap 'rm -rf "$dir"' EXIT
cd "$dir"
"$flexio" --name=big --ioengine=null --rw=randread --bs=4k --size=64g --number_ios=5000000 \
    --write_lat_log=big --log_avg_msec=0 --output-format=json+ --output=big.json >/dev/null
echo "log lines: $(cat big_*.log | wc -l)  ($(du -ch big_*.log | tail -1 | cut -f1))"
/usr/bin/time -v "$flexio" report big.json -o big.html 2>&1 |
    grep -E "wrote|Elapsed|Maximum resident"
echo "HTML: $(stat -c %s big.html) bytes"
