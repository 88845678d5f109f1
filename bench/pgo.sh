#!/usr/bin/env bash
# Profile-guided optimisation, evaluated: an instrumented flexio is trained on the hot-path
# workloads, the profile merged with the toolchain's own llvm-profdata (rustup component
# llvm-tools: the same LLVM as rustc), flexio rebuilt with it, and bench/ab.sh runs the
# plain release build against the PGO build on each workload.
#
#   bench/pgo.sh [WORKDIR]      (default /tmp/flexio-pgo; needs root for the tmpfs mount)
#
# Builds go to WORKDIR/gen and WORKDIR/use (the release profile, thin LTO: two full builds),
# the plain build is target/release/flexio (or FLEXIO_BENCH_BIN). Prints ab.sh's lines per
# workload, then the file engines' files/s over 100,000 names: before = plain, after = PGO. `PGO_MEASURE=0` stops after the builds (a later run
# with the builds in place and `PGO_BUILD=0` measures only).
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/flexio-pgo}
plain=${FLEXIO_BENCH_BIN:-target/release/flexio}
[ -x "$plain" ] || { echo "no $plain: cargo build --release" >&2; exit 1; }
sysroot=$(rustc --print sysroot)
profdata=$(ls "$sysroot"/lib/rustlib/*/bin/llvm-profdata 2>/dev/null | head -1 || true)
[ -x "$profdata" ] || { echo "no llvm-profdata: rustup component add llvm-tools" >&2; exit 1; }
mkdir -p "$work"
mnt="$work/tmpfs"
mkdir -p "$mnt"
mountpoint -q "$mnt" || mount -t tmpfs -o size=1g tmpfs "$mnt"
trap 'umount "$mnt" 2>/dev/null || true' EXIT
dd if=/dev/urandom of="$mnt/f" bs=1M count=256 status=none

pgo="$work/use/release/flexio"
if [ "${PGO_BUILD:-1}" != 0 ]; then
rm -rf "$work/profiles"
RUSTFLAGS="-Cprofile-generate=$work/profiles" \
    cargo build --release -q -p flexio --target-dir "$work/gen"
# Training: the rows of bench/compare.py that measure the tool's own path.
train() { "$work/gen/release/flexio" --name=t "$@" --time_based --runtime=2 >/dev/null; }
train --ioengine=null --bs=4k --size=100g --rw=read
train --ioengine=null --bs=4k --size=100g --rw=read --iodepth=64 --iodepth_batch_submit=16 \
    --iodepth_batch_complete_min=16
train --ioengine=psync --bs=4k --rw=randread --filename="$mnt/f"
train --ioengine=psync --bs=4k --rw=randread --norandommap --filename="$mnt/f"
train --ioengine=psync --bs=4k --rw=randwrite --filename="$mnt/f"
# The file engines (one operation per file, no time_based): 20,000 names each.
for e in filestat filecreate dircreate; do
    rm -rf "$mnt/md"
    mkdir "$mnt/md"
    "$work/gen/release/flexio" --name=t --ioengine=$e --nrfiles=20000 --filesize=4k --bs=4k \
        --directory="$mnt/md" --openfiles=1024 >/dev/null
done
rm -rf "$mnt/md"
"$profdata" merge -o "$work/merged.profdata" "$work/profiles"
RUSTFLAGS="-Cprofile-use=$work/merged.profdata" \
    cargo build --release -q -p flexio --target-dir "$work/use"
fi
[ "${PGO_MEASURE:-1}" != 0 ] || exit 0

for w in "null qd1:--ioengine=null --bs=4k --size=100g --rw=read" \
    "null qd64 batch:--ioengine=null --bs=4k --size=100g --rw=read --iodepth=64 --iodepth_batch_submit=16 --iodepth_batch_complete_min=16" \
    "psync randread:--ioengine=psync --bs=4k --rw=randread --filename=$mnt/f" \
    "psync randread norandommap:--ioengine=psync --bs=4k --rw=randread --norandommap --filename=$mnt/f"; do
    echo "== ${w%%:*} (M IOPS; before = plain, after = PGO)"
    # shellcheck disable=SC2086
    bench/ab.sh "$plain" "$pgo" 6 ${w#*:}
done

# The file engines' rows: 100,000 names on the tmpfs (filestat's laid out once, the
# others' made afresh before each run), 6 alternating runs pinned to CPU 1, files/s.
files_rate() {
    local bin=$1 e=$2
    if [ "$e" != filestat ]; then
        rm -rf "$mnt/md"
        mkdir "$mnt/md"
    fi
    taskset -c 1 "$bin" --name=x --ioengine="$e" --nrfiles=100000 --filesize=4k --bs=4k \
        --directory="$mnt/md" --openfiles=1024 --output-format=json |
        python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print("%.0f" % (j["read"]["iops"] + j["write"]["iops"]))'
}
for e in filestat filecreate dircreate; do
    echo "== $e 100000 (files/s; before = plain, after = PGO)"
    rm -rf "$mnt/md"
    mkdir "$mnt/md"
    [ "$e" != filestat ] || "$plain" --name=x --ioengine=filestat --nrfiles=100000 \
        --filesize=4k --bs=4k --directory="$mnt/md" --openfiles=1024 >/dev/null
    ra="" rb=""
    for _ in 1 2 3 4 5 6; do
        ra="$ra $(files_rate "$plain" "$e")"
        rb="$rb $(files_rate "$pgo" "$e")"
    done
    echo "before:$ra"
    echo "after: $rb"
done
rm -rf "$mnt/md"
