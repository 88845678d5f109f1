"""flexio.load: fio 3.33's JSON and json+ (made here by running fio) and flexio's own,
into the objects flexio.run returns."""

import json
import subprocess

import flexio

MiB = 1 << 20


def _fio(fio, tmp_path, job, fmt):
    jf = tmp_path / "job.fio"
    jf.write_text(job)
    out = tmp_path / "out.json"
    subprocess.run(
        [fio, f"--output-format={fmt}", f"--output={out}", str(jf)],
        check=True,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    return out


JOB = """
[global]
directory={d}
size=2M
bs=4k
ioengine=psync

[w]
rw=randwrite
fsync=8

[r]
stonewall
rw=randread
"""


def _check_against_document(res, doc):
    assert len(res.jobs) == len(doc["jobs"])
    for j, dj in zip(res.jobs, doc["jobs"]):
        assert j.name == dj["jobname"]
        assert j.error == dj["error"]
        for name in ("read", "write", "trim"):
            dd = dj[name]
            if dd["total_ios"] == 0:
                assert name not in j.directions
                continue
            d = j.directions[name]
            assert d.io_bytes == dd["io_bytes"]
            assert d.total_ios == dd["total_ios"]
            assert d.iops == dd["iops"]
            assert d.runtime_ms == dd["runtime"]
            for lat, key in ((d.clat, "clat_ns"), (d.lat, "lat_ns"), (d.slat, "slat_ns")):
                dl = dd[key]
                assert (lat.min, lat.max, lat.n) == (dl["min"], dl["max"], dl["N"])
                assert lat.mean == dl["mean"] and lat.stddev == dl["stddev"]
                pct = {float(k): v for k, v in dl.get("percentile", {}).items()}
                assert lat.percentiles == pct
                bins = {int(k): v for k, v in dl.get("bins", {}).items() if v}
                assert lat.bins == bins
            assert d.bw_samples.n == dd["bw_samples"]
        if dj["sync"]["total_ios"]:
            assert j.sync.total_ios == dj["sync"]["total_ios"]
            assert j.sync.lat.n == dj["sync"]["lat_ns"]["N"]
        else:
            assert j.sync is None
        assert j.usr_cpu == dj["usr_cpu"] and j.ctx == dj["ctx"]


def test_fio_json_plus(fio, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    out = _fio(fio, tmp_path, JOB.format(d=data), "json+")
    res = flexio.load(out)
    assert res.producer == "fio-3.33"
    assert res.path == str(out)
    doc = json.loads(out.read_text())
    _check_against_document(res, doc)
    w, r = res.job("w"), res.job("r")
    assert w.write.io_bytes == 2 * MiB and r.read.io_bytes == 2 * MiB
    assert w.sync.total_ios > 0
    # json+ carries the histogram: every I/O is in a bin.
    assert sum(r.read.clat.bins.values()) == r.read.total_ios
    assert w.options["rw"] == "randwrite" and w.options["bs"] == "4k"
    assert res.global_options["ioengine"] == "psync"


def test_fio_json(fio, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    out = _fio(fio, tmp_path, JOB.format(d=data), "json")
    res = flexio.load(out)
    _check_against_document(res, json.loads(out.read_text()))
    assert res.job("r").read.clat.bins == {}
    assert res.job("r").read.clat.percentile(99) is not None


def test_fio_logs_beside_the_result(fio, tmp_path):
    job = f"""
[lj]
filename={tmp_path}/lj.dat
size=1M
bs=4k
rw=randread
ioengine=psync
write_lat_log=lj
write_iops_log=lj
log_avg_msec=0
"""
    out = _fio(fio, tmp_path, job, "json")
    res = flexio.load(out)
    j = res.jobs[0]
    # psync measures no submission latency: its slat log is empty, and left out.
    assert sorted(lg.kind for lg in j.logs) == ["clat", "iops", "lat"]
    clat = j.log("clat")
    assert len(clat) == j.read.total_ios == 256
    assert min(clat.columns["value"]) == j.read.clat.min
    assert max(clat.columns["value"]) == j.read.clat.max
    assert set(clat.columns["bs"]) == {4096} and set(clat.columns["ddir"]) == {0}
    assert flexio.load(out, logs=False).jobs[0].logs == []


def test_fio_histogram_log_beside_the_result(fio, tmp_path):
    job = f"""
[hj]
filename={tmp_path}/hj.dat
size=1M
bs=4k
rw=randread
ioengine=psync
write_hist_log=hj
log_hist_msec=10
"""
    out = _fio(fio, tmp_path, job, "json")
    j = flexio.load(out).jobs[0]
    h = j.log("clat_hist")
    assert h is not None and h.path.endswith("hj_clat_hist.1.log")
    # fio 3.33's layout: 1856 bins (coarseness 0), reads only.
    assert set(h.columns["ddir"]) == {0} and set(h.columns["bs"]) == {4096}
    assert all(len(b) == 1856 for b in h.columns["bins"]) and len(h.bin_ns) == 1856
    n = sum(sum(b) for b in h.columns["bins"])
    assert 0 < n <= j.read.total_ios


def test_fio_compressed_logs_beside_the_result(fio, tmp_path):
    # log_store_compressed=1: fio 3.33's .log.fz files, inflated in fio 3.33's record layout.
    job = f"""
[lz]
filename={tmp_path}/lz.dat
size=1M
bs=4k
rw=randread
ioengine=psync
write_lat_log=lz
log_store_compressed=1
"""
    out = _fio(fio, tmp_path, job, "json")
    j = flexio.load(out).jobs[0]
    assert sorted(lg.kind for lg in j.logs) == ["clat", "lat"]
    clat = j.log("clat")
    assert clat.path.endswith("lz_clat.1.log.fz")
    assert len(clat) == j.read.total_ios == 256
    assert min(clat.columns["value"]) == j.read.clat.min
    assert max(clat.columns["value"]) == j.read.clat.max
    assert set(clat.columns["ddir"]) == {0} and set(clat.columns["bs"]) == {4096}


def test_flexio_result_round_trip(tmp_path, null_job):
    r = flexio.run(**null_job)
    p = tmp_path / "r.json"
    p.write_text("a note printed before the JSON\n" + r.json)
    back = flexio.load(p)
    assert back.producer == r.producer
    assert [j.name for j in back.jobs] == [j.name for j in r.jobs]
    a, b = r.jobs[0], back.jobs[0]
    assert a.directions == b.directions
    assert a.options == b.options
