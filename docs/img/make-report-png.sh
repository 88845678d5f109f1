#!/usr/bin/env bash
# Makes docs/img/report.png (the README's report screenshot) and prints the compare example:
# 4 KiB random reads of a file on tmpfs at 20,000 IOPS, psync (A) against mmap (B), three
# trials each with per-I/O logs, compared and drawn: the picture is the `flexio compare --html`
# page. Chromium takes the picture; pngquant and optipng, when installed, make it smaller.
# Needs a release build and Debian's chromium.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
flexio="$root/target/release/flexio"
work="$(mktemp -d)"
trap 'rm -rf "$work" /dev/shm/flexio-doc-file' EXIT
cd "$work"
cat > a.fio <<JOB
[global]
filename=/dev/shm/flexio-doc-file
size=256m
rw=randread
bs=4k
time_based
runtime=3
rate_iops=20000
write_lat_log=\${FLEXIO_JOB}
write_bw_log=\${FLEXIO_JOB}
write_iops_log=\${FLEXIO_JOB}
log_avg_msec=0
[randread]
ioengine=psync
JOB
sed 's/ioengine=psync/ioengine=mmap/' a.fio > b.fio
for i in 1 2 3; do
    for s in a b; do
        mkdir -p "$s$i"
        (cd "$s$i" && FLEXIO_JOB=randread "$flexio" --output-format=json+ --output=result.json "../$s.fio" >/dev/null)
    done
done
echo "\$ flexio compare a1/result.json a2/result.json a3/result.json -- \\"
echo "      b1/result.json b2/result.json b3/result.json --html compare.html"
"$flexio" compare a1/result.json a2/result.json a3/result.json -- \
    b1/result.json b2/result.json b3/result.json --html compare.html
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --virtual-time-budget=3000 --window-size=1360,2500 \
    --screenshot="$root/docs/img/report.png" "file://$work/compare.html" 2>/dev/null
png="$root/docs/img/report.png"
if command -v pngquant >/dev/null; then pngquant --force --skip-if-larger --quality=70-95 --strip --output "$png" "$png" || true; fi
if command -v optipng >/dev/null; then optipng -quiet -o5 -strip all "$png"; fi
echo "wrote $png ($(stat -c %s "$png") bytes)"
