#!/usr/bin/env bash
# The cost of `flexio sweep`'s runner: the wall time of a sweep against the same points run
# one by one as separate `flexio` commands (the same job, the same number of runs), on the
# null engine so that the runs themselves are short and fixed (--runtime).
#
#   bench/sweep_cost.sh [FLEXIO_BIN] [POINTS] [REPEATS]
#
# Prints both wall times and the runner's overhead per run.
set -euo pipefail
bin=${1:-target/release/flexio}
points=${2:-8}
repeats=${3:-3}
vals=$(seq -s, 1000 100 $((1000 + 100 * (points - 1))))
job=(--name=x --ioengine=null --rw=read --bs=4k --size=1g --time_based --runtime=1)
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
t0=$(date +%s.%N)
FLEXIO_STATE_DIR=$state "$bin" sweep --opt "rate_iops=$vals" --repeat "$repeats" --seed 1 \
    -- "${job[@]}" >/dev/null 2>&1
t1=$(date +%s.%N)
for _ in $(seq "$repeats"); do
    for v in ${vals//,/ }; do
        "$bin" "${job[@]}" --rate_iops="$v" --output-format=json >/dev/null
    done
done
t2=$(date +%s.%N)
python3 - "$t0" "$t1" "$t2" "$((points * repeats))" <<'PY'
import sys
t0, t1, t2, n = map(float, sys.argv[1:5])
s, o = t1 - t0, t2 - t1
print(f"runs: {int(n)}  sweep: {s:.2f} s  one by one: {o:.2f} s  "
      f"sweep - one by one: {(s - o) / n * 1000:+.1f} ms per run")
PY
