#!/bin/sh
# Mount time of ext4, xfs and btrfs on loop devices: makes three sparse 512 MiB images on the
# machine's disk, puts a file system on each, runs examples/mount-time.fio (flexio's cmdtime
# engine: mount timed, umount untimed, 20 times each) and prints one table row per file
# system from flexio's JSON. Everything it makes is removed at the end. Needs root,
# mkfs.xfs (xfsprogs), mkfs.btrfs (btrfs-progs) and a release build of flexio.
#
# Usage: sh bench/mount-time.sh
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FLEXIO=${FLEXIO_BENCH_BIN:-$ROOT/target/release/flexio}
DISK=${FLEXIO_BENCH_DISK_DIR:-$ROOT/target/bench-disk}
mkdir -p "$DISK"
WORK=$(mktemp -d "$DISK/mount-time.XXXXXX")
MNT=$WORK/mnt
mkdir "$MNT"
DEVS=""
cleanup() {
    umount "$MNT" 2>/dev/null || true
    for d in $DEVS; do losetup -d "$d" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
for fs in ext4 xfs btrfs; do
    img=$WORK/$fs.img
    truncate -s 512M "$img"
    dev=$(losetup -f --show "$img")
    DEVS="$DEVS $dev"
    case $fs in
        ext4) mkfs.ext4 -q -F "$dev" ;;
        *) "mkfs.$fs" -q -f "$dev" >/dev/null ;;
    esac
    eval "$(echo "$fs" | tr a-z A-Z)_DEV=$dev"
done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $(uname -r)"
EXT4_DEV=$EXT4_DEV XFS_DEV=$XFS_DEV BTRFS_DEV=$BTRFS_DEV MNT=$MNT \
    "$FLEXIO" --output-format=json --output="$WORK/out.json" "$ROOT/examples/mount-time.fio"
python3 - "$WORK/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ms = lambda ns: f"{ns / 1e6:.2f}"
print(f"{'file system':<12}{'mounts':>7}{'mean ms':>10}{'stdev ms':>10}{'min ms':>9}"
      f"{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}")
for j in d["jobs"]:
    o = j["flexio"]["ops"]["cmd"]
    l, p = o["lat_ns"], o["lat_ns"]["percentile"]
    print(f"{j['jobname']:<12}{o['count']:>7}{ms(l['mean']):>10}{ms(l['stddev']):>10}"
          f"{ms(l['min']):>9}{ms(p['50.000000']):>9}{ms(p['95.000000']):>9}"
          f"{ms(p['99.000000']):>9}{ms(l['max']):>9}")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
