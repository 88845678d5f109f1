"""The flexio command the wheel installs."""

import json
import os
import shutil
import subprocess
import sys

import flexio


def _command():
    # The console script pip put beside this interpreter.
    exe = os.path.join(os.path.dirname(sys.executable), "flexio")
    assert os.access(exe, os.X_OK), f"no flexio command at {exe}"
    return exe


def test_the_package_carries_the_program():
    b = flexio.binary()
    assert b is not None and os.access(b, os.X_OK)
    assert b.startswith(os.path.dirname(flexio.__file__))
    assert shutil.which("flexio", path=os.path.dirname(sys.executable)) == _command()


def test_version_matches_the_module():
    out = subprocess.run([_command(), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == flexio.VERSION, out.stdout
    again = subprocess.run([sys.executable, "-m", "flexio", "--version"], capture_output=True, text=True, check=True)
    assert again.stdout == out.stdout


def test_command_runs_a_job_and_python_reads_it(tmp_path):
    res = tmp_path / "res.json"
    subprocess.run(
        [
            _command(),
            "--name=cli",
            "--ioengine=null",
            "--rw=write",
            "--bs=8k",
            "--size=2M",
            "--output-format=json+",
            f"--output={res}",
        ],
        check=True,
        cwd=tmp_path,
    )
    r = flexio.load(res)
    assert r.producer == flexio.VERSION
    assert r.jobs[0].write.io_bytes == 2 << 20 and r.jobs[0].write.total_ios == 256
    assert json.loads(res.read_text())["jobs"][0]["jobname"] == "cli"


def test_exit_status_and_errors_pass_through(tmp_path):
    bad = tmp_path / "bad.fio"
    bad.write_text("[j]\nioengine=null\nbs=frob\n")
    out = subprocess.run([_command(), str(bad)], capture_output=True, text=True)
    assert out.returncode != 0
    assert f"{bad}:3" in out.stderr
    out = subprocess.run([_command(), "compare", "--frobnicate"], capture_output=True, text=True)
    assert out.returncode == 2
