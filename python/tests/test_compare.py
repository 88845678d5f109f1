"""flexio.compare: the same comparison as `flexio compare`, as objects."""

import json
import subprocess

import pytest

import flexio


def _paced(iops, name="x"):
    # A rate-limited null job: its IOPS are what the rate says, sample after sample.
    return flexio.run(
        name=name, ioengine="null", rw="randread", bs="4k", size="64M", time_based=True, runtime="2s", rate_iops=iops
    )


@pytest.fixture(scope="module")
def slow_fast():
    return _paced(1000), _paced(2000)


def test_faster_b(slow_fast):
    a, b = slow_fast
    c = flexio.compare(a, b)
    assert c.notes == []
    assert len(c.comparisons) == 1
    d = c.comparisons[0]
    assert (d.job_a, d.job_b, d.direction) == ("x", "x", "read")
    assert (d.trials_a, d.trials_b) == (1, 1)
    assert set(d.metrics) == {"IOPS", "bw", "mean", "p50", "p99", "p99.9"}
    iops = d.metrics["IOPS"]
    assert iops.a == pytest.approx(a.jobs[0].read.iops)
    assert iops.b == pytest.approx(b.jobs[0].read.iops)
    assert iops.diff_pct == pytest.approx(100.0, abs=10.0)
    assert iops.significant and iops.b_better
    assert iops.ci_pct[0] <= iops.diff_pct <= iops.ci_pct[1]
    assert d.verdict in {"faster", "mixed"}
    assert c.verdict == d.verdict
    assert "verdict:" in c.text and str(c) == c.text
    assert not [r for r in c.regressions(10) if r[2] in ("IOPS", "bw")]
    # The other way round, B is the slower: IOPS halved, a regression.
    back = flexio.compare(b, a)
    m = back.comparisons[0].metrics["IOPS"]
    assert m.diff_pct == pytest.approx(-50.0, abs=5.0)
    assert m.significant and not m.b_better
    assert ("x", "read", "IOPS", m.diff_pct) in back.regressions(10)


def test_same_as_the_flexio_command(slow_fast, tmp_path):
    a, b = slow_fast
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(a.json)
    pb.write_text(b.json)
    c = flexio.compare(pa, pb)
    exe = flexio.binary()
    assert exe is not None
    out = subprocess.run(
        [exe, "compare", "--output-format=json", str(pa), str(pb)], check=True, capture_output=True, text=True
    )
    assert c.to_dict() == json.loads(out.stdout)
    text = subprocess.run([exe, "compare", str(pa), str(pb)], check=True, capture_output=True, text=True)
    assert c.text == text.stdout
    # Result objects and their files give the same figures.
    from_objects = flexio.compare(a, b)
    assert from_objects.comparisons[0].metrics == c.comparisons[0].metrics


def test_trials_and_options(slow_fast):
    a, b = slow_fast
    c = flexio.compare([a, a], [b, b], alpha=0.01, min_effect=20, resamples=500, seed=7)
    d = c.comparisons[0]
    assert (d.trials_a, d.trials_b) == (2, 2)
    assert d.min_effect_pct == 20
    assert c.alpha == 0.01 and c.to_dict()["bootstrap_resamples"] == 500 and c.to_dict()["seed"] == 7
    with pytest.raises(ValueError):
        flexio.compare(a, b, alpha=2)
    with pytest.raises(ValueError):
        flexio.compare([], b)
    with pytest.raises(TypeError):
        flexio.compare(a, 3)


def test_unmatched_jobs(slow_fast):
    a, _ = slow_fast
    other = _paced(1000, name="y")
    c = flexio.compare(a, other)
    # No name in common and one job each: matched by position, and said so.
    assert any("by position" in n for n in c.notes)
    assert c.comparisons[0].job_a == "x" and c.comparisons[0].job_b == "y"
    both = flexio.run("[x]\nioengine=null\nrw=write\nsize=1M\n")
    c = flexio.compare(a, both)
    assert c.comparisons == [] and c.verdict == "nothing compared"
    assert any("only in" in n for n in c.notes)
