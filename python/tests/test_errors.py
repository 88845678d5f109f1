"""Errors: jobs flexio cannot run as written (JobError with the file:line message), runs
that fail (RunError with the results), results that cannot be read."""

import socket

import pytest

import flexio


def test_bad_value_in_job_text_names_the_line():
    with pytest.raises(flexio.JobError) as e:
        flexio.run("[j]\nioengine=null\nbs=frob\nsize=1M\n")
    msg = str(e.value)
    assert msg.startswith("job text:3: 'bs=frob'"), msg
    # A ValueError too, for code that catches those.
    assert isinstance(e.value, ValueError)


def test_bad_option_in_job_file_names_file_and_line(tmp_path):
    f = tmp_path / "bad.fio"
    f.write_text("[j]\nioengine=null\nsize=1M\nrw=sideways\n")
    with pytest.raises(flexio.JobError) as e:
        flexio.run(f)
    assert str(e.value).startswith(f"{f}:4: 'rw=sideways'"), str(e.value)


def test_unknown_keyword_option_with_suggestion():
    with pytest.raises(flexio.JobError) as e:
        flexio.run(name="k", ioengine="null", size="1M", rw="read", blocksiz="4k")
    msg = str(e.value)
    # The fifth keyword option.
    assert msg.startswith("keyword arguments:5: 'blocksiz=4k'"), msg
    assert "did you mean 'blocksize'" in msg, msg


def test_job_of_keywords_without_size():
    with pytest.raises(flexio.JobError) as e:
        flexio.run(ioengine="null")
    assert str(e.value).startswith("keyword arguments: job 'flexio': you need to specify size="), str(e.value)


def test_unknown_engine():
    with pytest.raises(flexio.JobError) as e:
        flexio.run(name="k", ioengine="warpdrive", size="1M")
    assert "warpdrive" in str(e.value)


def test_missing_job_file(tmp_path):
    with pytest.raises(flexio.JobError) as e:
        flexio.run(tmp_path / "nope.fio")
    assert "unable to open" in str(e.value) and "nope.fio" in str(e.value)


def test_job_file_without_jobs(tmp_path):
    with pytest.raises(flexio.JobError) as e:
        flexio.run("[global]\nioengine=null\n")
    assert "No job(s) defined" in str(e.value)


def test_switches_for_the_command_only():
    with pytest.raises(flexio.JobError) as e:
        flexio.run(name="k", ioengine="null", size="1M", args=["--output=/tmp/x.json"])
    assert "--output" in str(e.value)
    with pytest.raises(flexio.JobError) as e:
        flexio.run(name="k", ioengine="null", size="1M", args=["--frobnicate"])
    assert str(e.value).startswith("args:"), str(e.value)


def test_bad_python_values():
    with pytest.raises(TypeError):
        flexio.run(name="k", ioengine="null", size=object())
    with pytest.raises(TypeError):
        flexio.run(42)
    with pytest.raises(ValueError):
        flexio.run(name="k", ioengine="null", size="1M", series=0)


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_failing_job_raises_run_error_with_results():
    # The net engine's connection is refused when the job starts: the job fails.
    job = dict(name="nc", ioengine="net", hostname="127.0.0.1", protocol="tcp", rw="write", size="64k")
    with pytest.raises(flexio.RunError) as e:
        flexio.run(port=_closed_port(), **job)
    assert "the run failed: job 'nc'" in str(e.value), str(e.value)
    r = e.value.result
    assert r.exit_code == 1 and r.jobs[0].error != 0
    # check=False: the results, failed job included.
    r = flexio.run(port=_closed_port(), check=False, **job)
    assert r.exit_code == 1
    assert r.jobs[0].name == "nc" and r.jobs[0].error != 0
    assert r.jobs[0].directions == {}


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        flexio.load(tmp_path / "none.json")
    p = tmp_path / "notes.txt"
    p.write_text("this is not fio output\n")
    with pytest.raises(flexio.ResultError) as e:
        flexio.load(p)
    assert str(p) in str(e.value)
    with pytest.raises(flexio.ResultError):
        flexio.compare(p, p)
