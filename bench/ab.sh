#!/usr/bin/env bash
# Two flexio builds on the same workload, alternating, pinned to one CPU: read IOPS of each
# run in millions, one line per build. For before/after checks of the hot path (e.g. a
# build of an older commit in a worktree against target/release/flexio).
#
#   bench/ab.sh BEFORE_BIN AFTER_BIN N [flexio job arguments...]
#   bench/ab.sh /tmp/old/target/release/flexio target/release/flexio 6 \
#       --ioengine=null --bs=4k --size=100g --rw=read --iodepth=64
#
# Each run: taskset -c 1 BIN --name=x ARGS --time_based --runtime=2 --output-format=json.
# FLEXIO_GENERAL_PATH=1 in the environment keeps both on the general loop (2: on its full copy).
set -euo pipefail
[ $# -ge 3 ] || { sed -n 2,11p "$0" >&2; exit 2; }
a=$1 b=$2 n=$3
shift 3
iops() {
    taskset -c 1 "$1" --name=x "${@:2}" --time_based --runtime=2 --output-format=json |
        python3 -c 'import json,sys; print("%.2f" % (json.load(sys.stdin)["jobs"][0]["read"]["iops"] / 1e6))'
}
ra="" rb=""
for _ in $(seq "$n"); do
    ra="$ra $(iops "$a" "$@")"
    rb="$rb $(iops "$b" "$@")"
done
echo "before:$ra"
echo "after: $rb"
