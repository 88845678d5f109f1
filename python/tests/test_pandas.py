"""to_pandas(): results, logs and comparisons as DataFrames; pandas imported lazily."""

import subprocess
import sys

import pytest

import flexio


def test_result_to_pandas(pandas, tmp_path):
    r = flexio.run(
        f"[w]\nioengine=null\nrw=randrw\nbs=4k\nsize=4M\n[s]\nioengine=null\nrw=read\nsize=1M\n"
    )
    df = r.to_pandas()
    assert isinstance(df, pandas.DataFrame)
    assert list(df[["job", "direction"]].itertuples(index=False, name=None)) == [
        ("w", "read"),
        ("w", "write"),
        ("s", "read"),
    ]
    for row in df.itertuples(index=False):
        d = r.job(row.job).directions[row.direction]
        assert row.io_bytes == d.io_bytes and row.total_ios == d.total_ios
        assert row.iops == d.iops and row.clat_mean_ns == d.clat.mean
        assert row.clat_p99_ns == d.clat.percentile(99)
        assert getattr(row, "clat_max_ns") == d.clat.max
    assert r.to_dataframe().equals(df)
    assert df.to_dict("records") == [{k: v for k, v in row.items()} for row in r.rows()]


def test_logs_to_pandas(pandas, tmp_path):
    r = flexio.run(name="s", ioengine="null", rw="read", size="64M", time_based=True, runtime="600ms", series=100)
    j = r.jobs[0]
    bw = j.log("bw").to_pandas()
    assert list(bw.columns) == ["time_ms", "value", "ddir", "bs", "prio"]
    assert len(bw) == len(j.log("bw"))
    assert bw["time_ms"].is_monotonic_increasing
    everything = r.logs_to_pandas()
    assert list(everything.columns[:3]) == ["job", "kind", "thread"]
    assert len(everything) == sum(len(lg) for lg in j.logs)
    assert set(everything["kind"]) == {"bw", "iops", "lat", "clat"}


def test_histogram_log_to_pandas(pandas, tmp_path):
    r = flexio.run(name="h", ioengine="null", rw="read", size="64M", time_based=True, runtime="300ms",
                   write_hist_log=str(tmp_path / "h"), log_hist_msec=100)
    h = r.jobs[0].log("clat_hist")
    df = h.to_pandas()
    assert list(df.columns) == ["time_ms", "ddir", "bs", "bins"] and len(df) == len(h)
    assert all(len(b) == len(h.bin_ns) for b in df["bins"])


def test_comparison_to_pandas(pandas):
    a = flexio.run(name="c", ioengine="null", rw="read", size="8M")
    b = flexio.run(name="c", ioengine="null", rw="read", size="8M")
    c = flexio.compare(a, b)
    df = c.to_pandas()
    assert list(df["metric"]) == ["IOPS", "bw", "mean", "p50", "p99", "p99.9"]
    assert list(df["diff_pct"]) == [m.diff_pct for m in c.comparisons[0].metrics.values()]


def test_without_pandas_the_rest_works(tmp_path):
    # A fresh interpreter where pandas cannot be imported: results are plain objects,
    # to_pandas() says what to install.
    code = """
import sys
sys.modules["pandas"] = None
import flexio
r = flexio.run(name="p", ioengine="null", rw="read", size="1M")
assert r.rows()[0]["io_bytes"] == 1 << 20
assert r.to_dict()["jobs"][0]["directions"]["read"]["io_bytes"] == 1 << 20
try:
    r.to_pandas()
except ImportError as e:
    assert "pip install pandas" in str(e)
    print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
