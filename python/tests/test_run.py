"""flexio.run: jobs from keyword options, job text and job files; overrides; logs and
series; the GIL released and Ctrl-C."""

import json
import os
import signal
import threading
import time

import pytest

import flexio

MiB = 1 << 20


def test_null_job_from_keywords(null_job):
    r = flexio.run(**null_job)
    assert r.exit_code == 0
    assert r.producer.startswith("flexio-")
    assert [j.name for j in r.jobs] == ["nullrr"]
    j = r.jobs[0]
    assert j.error == 0
    assert set(j.directions) == {"read"}
    assert j.write is None and j.sync is None
    rd = j.read
    assert rd.io_bytes == 16 * MiB
    assert rd.total_ios == 16 * MiB // 4096
    assert rd.iops > 0 and rd.bw_bytes > 0
    # Completion latency of every I/O, with fio's default percentiles.
    assert rd.clat.n == rd.total_ios
    assert rd.clat.min <= rd.clat.mean <= rd.clat.max
    assert rd.clat.stddev >= 0
    assert 99.0 in rd.clat.percentiles and 50.0 in rd.clat.percentiles
    assert rd.clat.percentile(50) <= rd.clat.percentile(99) <= rd.clat.percentile(99.99)
    assert all(isinstance(v, int) for v in rd.clat.percentiles.values())
    # json+: the histogram's counts add up to the I/Os.
    assert sum(rd.clat.bins.values()) == rd.total_ios
    # The options as fio echoes them, keyword options included.
    assert j.options["rw"] == "randread" and j.options["bs"] == "4k"
    # The json+ document flexio prints, from which the objects were read.
    doc = json.loads(r.json)
    assert doc["jobs"][0]["jobname"] == "nullrr"
    assert doc["jobs"][0]["read"]["io_bytes"] == rd.io_bytes
    assert doc["jobs"][0]["read"]["clat_ns"]["N"] == rd.clat.n


def test_file_jobs_from_text(tmp_path):
    job = f"""
[global]
directory={tmp_path}
size=1M
bs=4k
ioengine=psync

[w]
rw=write
fsync=16

[r]
stonewall
rw=read
"""
    r = flexio.run(job)
    w, rd = r.job("w"), r.job("r")
    assert w.write.io_bytes == MiB and w.write.total_ios == 256
    assert w.read is None
    # fsync=16: a sync after every 16 writes, reported as the sync direction; as in fio,
    # the one due after the last write is not issued (the job has ended).
    assert w.sync is not None and w.sync.total_ios == 256 // 16 - 1
    assert w.sync.lat.n == w.sync.total_ios and w.sync.lat.max >= w.sync.lat.min > 0
    assert rd.read.io_bytes == MiB
    assert (w.groupid, rd.groupid) == (0, 1)
    # The files the jobs laid out, in the job's directory.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.0.0", "w.0.0"]
    assert (tmp_path / "w.0.0").stat().st_size == MiB
    assert r.label == "job text"


def test_job_file_with_overrides(tmp_path):
    f = tmp_path / "seq.fio"
    f.write_text("[seq]\nioengine=null\nrw=read\nbs=4k\nsize=1M\n")
    plain = flexio.run(f)
    assert plain.jobs[0].read.total_ios == 256
    assert plain.label == str(f)
    # Keyword options override the job file's own lines.
    r = flexio.run(str(f), bs="64k", rw="write")
    j = r.jobs[0]
    assert j.read is None
    assert j.write.total_ios == MiB // (64 * 1024)
    assert j.options["bs"] == "64k"


def test_bool_tuple_and_none_options():
    r = flexio.run(
        name="t",
        ioengine="null",
        rw="rw",
        bs=("4k", "8k"),
        size="1M",
        time_based=True,
        runtime="300ms",
        group_reporting=False,
        rate=None,
    )
    j = r.jobs[0]
    assert j.options["bs"] == "4k,8k"
    assert j.options["time_based"] == ""
    assert "rate" not in j.options
    # Time based: the job ran for its runtime, over the 1 MiB many times.
    assert 250 <= j.job_runtime_ms < 5000
    assert j.read.io_bytes + j.write.io_bytes > MiB
    reads, writes = j.read.total_ios, j.write.total_ios
    assert j.read.io_bytes == reads * 4096 and j.write.io_bytes == writes * 8192


def test_job_logs_read_line_by_line(tmp_path):
    prefix = tmp_path / "lg"
    job = f"""
[lg]
ioengine=null
rw=randwrite
bs=4k
size=1M
write_lat_log={prefix}
write_bw_log={prefix}
log_offset=1
"""
    r = flexio.run(job)
    j = r.jobs[0]
    kinds = sorted(lg.kind for lg in j.logs)
    # A synchronous engine has no submission latency: the empty slat log is left out.
    assert kinds == ["bw", "clat", "lat"]
    clat = j.log("clat")
    assert clat.thread == 1 and clat.path == str(tmp_path / "lg_clat.1.log")
    # One line per I/O: the log holds every completion latency of the job.
    assert len(clat) == j.write.total_ios == 256
    c = clat.columns
    assert set(c) == {"time_ms", "value", "ddir", "bs", "offset", "prio"}
    assert set(c["ddir"]) == {1} and set(c["bs"]) == {4096}
    assert min(c["value"]) == j.write.clat.min and max(c["value"]) == j.write.clat.max
    assert sorted(c["offset"]) == [i * 4096 for i in range(256)]
    assert c["time_ms"] == sorted(c["time_ms"])
    assert clat.to_dict() == {k: list(v) for k, v in c.items()}
    # The log files are the job's: flexio.run leaves them where the job put them.
    assert (tmp_path / "lg_bw.1.log").exists()
    # logs=False: the files are written, not read.
    assert flexio.run(job, logs=False).jobs[0].logs == []


def test_compressed_logs(tmp_path):
    # log_store_compressed=1: the .log.fz files are inflated as `flexio --inflate-log` does
    # and read like the plain logs.
    job = f"""
[z]
ioengine=null
rw=randwrite
bs=4k
size=1M
rate_iops=1000
time_based=1
runtime=500ms
write_lat_log={tmp_path}/z
write_hist_log={tmp_path}/z
log_hist_msec=100
log_offset=1
log_store_compressed=1
"""
    j = flexio.run(job).jobs[0]
    assert sorted(lg.kind for lg in j.logs) == ["clat", "clat_hist", "lat"]
    n = j.write.total_ios
    assert n >= 400
    clat = j.log("clat")
    assert clat.path == str(tmp_path / "z_clat.1.log.fz")
    assert len(clat) == n and set(clat.columns["bs"]) == {4096}
    assert all(o % 4096 == 0 and o < 1 << 20 for o in clat.columns["offset"])
    assert min(clat.columns["value"]) == j.write.clat.min
    assert max(clat.columns["value"]) == j.write.clat.max
    h = j.log("clat_hist")
    assert h.path == str(tmp_path / "z_clat_hist.1.log.fz")
    assert sum(sum(b) for b in h.columns["bins"]) == n


def test_histogram_log(tmp_path):
    # write_hist_log: one line per log_hist_msec per direction, the completions of that
    # interval counted in 1856 >> log_hist_coarseness bins.
    job = f"""
[hl]
ioengine=null
rw=randrw
bs=4k
size=64M
rate_iops=4000,4000
time_based=1
runtime=1
write_hist_log={tmp_path}/hl
log_hist_msec=100
log_hist_coarseness=2
"""
    j = flexio.run(job).jobs[0]
    h = j.log("clat_hist")
    assert h is not None and h.path == str(tmp_path / "hl_clat_hist.1.log")
    c = h.columns
    assert set(c) == {"time_ms", "ddir", "bs", "bins"}
    assert set(c["ddir"]) == {0, 1} and set(c["bs"]) == {4096}
    assert len(h) >= 10 and all(len(b) == 1856 >> 2 for b in c["bins"])
    assert len(h.bin_ns) == 1856 >> 2 and h.bin_ns == sorted(h.bin_ns)
    # Every completion is in one interval's bins (the last interval is written at the end).
    for ddir, d in ((0, j.read), (1, j.write)):
        n = sum(sum(b) for b, x in zip(c["bins"], c["ddir"]) if x == ddir)
        assert n == d.total_ios
    lo = min(v for b in c["bins"] for v, k in zip(h.bin_ns, b) if k)
    assert lo <= j.read.clat.max


def test_series(tmp_path):
    r = flexio.run(
        name="s", ioengine="null", rw="read", bs="4k", size="64M", time_based=True, runtime="1s", series=100
    )
    j = r.jobs[0]
    assert sorted(lg.kind for lg in j.logs) == ["bw", "clat", "iops", "lat"]
    bw = j.log("bw")
    # One line per bw sample, every 100 ms of the 1 s run, stamped with the time the sample
    # was taken: up to 1 ms before its 100 ms mark (fio's slack) or a little after (a sample
    # the job thread was too late for on a busy machine is not written).
    t = bw.columns["time_ms"]
    assert 5 <= len(bw) <= 10, t
    assert all((x + 1) % 100 <= 21 for x in t) and t == sorted(set(t)) and t[-1] <= 1000, t
    assert all(v > 0 for v in j.log("iops").columns["value"])
    # The temporary folder is gone; the objects keep the data.
    assert not os.path.exists(os.path.dirname(bw.path))


def test_numjobs_logs_per_job(tmp_path):
    job = f"""
[global]
ioengine=null
rw=read
bs=4k
write_iops_log={tmp_path}/n

[a]
size=1M
numjobs=2

[b]
stonewall
size=2M
"""
    r = flexio.run(job)
    assert [j.name for j in r.jobs] == ["a", "a", "b"]
    assert [[lg.thread for lg in j.logs] for j in r.jobs] == [[1], [2], [3]]
    r = flexio.run(job, group_reporting=True)
    assert [j.name for j in r.jobs] == ["a", "b"]
    assert [[lg.thread for lg in j.logs] for j in r.jobs] == [[1, 2], [3]]
    assert r.jobs[0].read.io_bytes == 2 * MiB


def test_gil_released_while_running():
    done = threading.Event()
    out = {}

    def work():
        out["r"] = flexio.run(name="g", ioengine="null", rw="read", size="16M", time_based=True, runtime="1500ms")
        done.set()

    t = threading.Thread(target=work)
    t0 = time.monotonic()
    t.start()
    gaps, last, loops = [], time.monotonic(), 0
    while not done.is_set():
        now = time.monotonic()
        gaps.append(now - last)
        last = now
        loops += 1
        time.sleep(0.001)
    t.join()
    took = time.monotonic() - t0
    assert took >= 1.4
    assert out["r"].jobs[0].job_runtime_ms >= 1400
    # This thread kept running Python all along: no wait near the run's length.
    assert loops > 100
    assert max(gaps) < 0.5, max(gaps)


def test_ctrl_c_stops_the_run():
    # Python turns SIGINT into KeyboardInterrupt only where it installed its handler at
    # start-up, which it does not when the process began with SIGINT ignored (a job a
    # shell put in the background, as CI scripts are). The test installs it, as an
    # interactive Python has it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            flexio.run(name="long", ioengine="null", rw="read", size="16M", time_based=True, runtime="60s")
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - t0 < 10
    # The next run is not affected.
    assert flexio.run(name="after", ioengine="null", rw="read", size="1M").jobs[0].read.io_bytes == MiB


def test_concurrent_runs_take_turns():
    results = {}

    def go(name):
        results[name] = flexio.run(name=name, ioengine="null", rw="read", size="16M", time_based=True, runtime="500ms")

    threads = [threading.Thread(target=go, args=(n,)) for n in ("p", "q")]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # One run after the other, each whole.
    assert time.monotonic() - t0 >= 1.0
    assert sorted(results) == ["p", "q"]
    for name, r in results.items():
        assert r.jobs[0].name == name and r.jobs[0].job_runtime_ms >= 450


def test_command_line_switches():
    job = "[a]\nioengine=null\nrw=read\nsize=1M\n[b]\nioengine=null\nrw=write\nsize=2M\n"
    r = flexio.run(job, args=["--section=b"])
    assert [j.name for j in r.jobs] == ["b"]
    assert r.jobs[0].write.io_bytes == 2 * MiB
    # fio 3.33's behaviour and JSON layout.
    old = flexio.run(job, args=["--compat=3.33"])
    assert json.loads(old.json)["fio version"] == "fio-3.33"
    assert json.loads(flexio.run(job).json)["fio version"] != "fio-3.33"
    assert [j.name for j in old.jobs] == ["a", "b"]
