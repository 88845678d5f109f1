"""The flexio command the wheel installs."""

import glob
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

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


def test_the_wheel_tag_holds_for_what_it_carries():
    # A manylinux_2_X wheel installs on any Linux with glibc 2.X or later: the extension
    # module and the program must need nothing newer, and no library outside the C
    # library's own (PEP 600).
    tags = [l.split(":", 1)[1].strip() for l in importlib.metadata.distribution("flexio").read_text("WHEEL").splitlines() if l.startswith("Tag:")]
    assert tags, "the wheel names no tag"
    m = re.search(r"manylinux_(\d+)_(\d+)_", tags[0])
    if m is None:
        pytest.skip(f"a {tags[0]} wheel (built with --compatibility linux) promises no more")
    if shutil.which("objdump") is None or shutil.which("readelf") is None:
        pytest.skip("objdump/readelf (binutils) are not installed")
    want = (int(m.group(1)), int(m.group(2)))
    here = os.path.dirname(flexio.__file__)
    files = [flexio.binary()] + glob.glob(os.path.join(here, "_flexio*.so"))
    assert len(files) == 2, files
    allowed = {"libgcc_s.so.1", "libm.so.6", "libc.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0",
               "libresolv.so.2", "libutil.so.1", "libstdc++.so.6", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
    for f in files:
        dyn = subprocess.run(["readelf", "-d", f], capture_output=True, text=True, check=True).stdout
        needed = set(re.findall(r"\(NEEDED\).*\[(.+)\]", dyn))
        assert "libc.so.6" in needed and needed <= allowed, (f, needed)
        syms = subprocess.run(["objdump", "-T", f], capture_output=True, text=True, check=True).stdout
        vers = {tuple(map(int, v.split("."))) for v in re.findall(r"GLIBC_([0-9.]+)", syms)}
        assert vers and max(vers)[:2] <= want, (f, max(vers), tags[0])


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
