"""The functions: run, load, compare, binary."""

import os
import shutil
import tempfile
import warnings

from . import _flexio
from ._model import Comparison, Result


def _option_value(key, value):
    """A keyword argument as a fio option value: ``True`` is the bare option
    (``time_based``), ``False`` is 0, numbers and strings as written, a list or tuple is
    fio's comma-separated read,write[,trim] form (``bs=("4k", "64k")`` is ``bs=4k,64k``)."""
    if value is True:
        return None
    if value is False:
        return "0"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    if isinstance(value, (str, int, float, os.PathLike)):
        return os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    raise TypeError(f"{key}={value!r}: give fio option values as str, int, float or bool")


def _job_argument(job):
    """(job, is_text) for the Rust side: a path-like or a one-line string is a job file,
    a string with a line break is the job's text."""
    if job is None:
        return None, False
    if isinstance(job, os.PathLike):
        return os.fspath(job), False
    if isinstance(job, bytes):
        job = job.decode()
    if not isinstance(job, str):
        raise TypeError("job: give a job file's path or a job file's text")
    if "\n" in job:
        return job, True
    return job, False


def run(job=None, /, *, args=(), series=None, logs=True, check=True, **options):
    """Run a fio job with flexio's run engine in this process and return its
    :class:`Result`.

    ``job`` is a job file's path (``str`` or path-like), a job file's text (a string with
    a line break), or ``None`` to run one job made of the keyword options alone.

    ``**options`` are fio options (``rw="randread", bs="4k", size="16M", runtime=1``):
    every job section gets them after its own lines, so they override what the job file
    sets (``True`` is a bare option such as ``time_based``, ``False`` is ``0``, ``None``
    leaves the option out, a tuple is fio's read,write form). An option whose name is not
    a Python identifier is given by unpacking a dict: ``run(job, **{"hugepage-size": "2M"})``.

    ``args`` are flexio command-line switches that shape the run (``["--compat=3.33"]``,
    ``["--readonly"]``, ``["--section=name"]``). ``series=MS`` has every job log its
    bandwidth, IOPS and latency averaged every ``MS`` milliseconds into a temporary folder
    (``write_bw_log``, ``write_iops_log``, ``write_lat_log``, ``log_avg_msec``), read into
    each job's ``logs`` and removed. ``logs=False`` does not read the jobs' log files.

    A job that cannot run as written raises :class:`JobError` with flexio's message (the
    job file and line, or ``keyword arguments:N`` for the N-th keyword option). With
    ``check`` (the default) a job that fails while running raises :class:`RunError`, whose
    ``result`` holds the results anyway. The GIL is released while the jobs run; Ctrl-C
    stops them (as SIGINT stops flexio) and raises ``KeyboardInterrupt``.
    """
    text, is_text = _job_argument(job)
    opts = []
    for k, v in options.items():
        if v is None:
            continue
        opts.append((k, _option_value(k, v)))
    if isinstance(args, str):
        args = [args]
    args = [str(a) for a in args]
    tmp = None
    try:
        if series is not None:
            ms = int(series)
            if ms <= 0:
                raise ValueError("series: give the interval in milliseconds (> 0)")
            tmp = tempfile.mkdtemp(prefix="flexio-series-")
            prefix = os.path.join(tmp, "series")
            opts += [
                ("write_bw_log", prefix),
                ("write_iops_log", prefix),
                ("write_lat_log", prefix),
                ("log_avg_msec", str(ms)),
                ("per_job_logs", "1"),
            ]
        raw = _flexio.run(text, is_text, opts, args, logs or series is not None)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    for w in raw["warnings"]:
        warnings.warn(w, RuntimeWarning, stacklevel=2)
    label = text if (text is not None and not is_text) else "job text"
    result = Result._from_raw(raw["result"], json=raw["json"], label=label, exit_code=raw["code"])
    if check and (raw["failed"] or raw["code"] != 0):
        what = "; ".join(raw["failed"]) or f"exit status {raw['code']}"
        err = _flexio.RunError(f"the run failed: {what}")
        err.result = result
        raise err
    return result


def load(path, *, logs=True):
    """Read a fio or flexio JSON / json+ result file (``--output-format=json`` or
    ``json+``; notes before the JSON and several documents are fine: the last one counts)
    into a :class:`Result`, the same objects :func:`run` returns. With ``logs`` the log
    files beside it that belong to its jobs (``<prefix>_lat.N.log`` and the others, as
    ``flexio report`` finds them) are read into each job's ``logs``.

    A missing file raises ``FileNotFoundError``, a file without a result
    :class:`ResultError`.
    """
    path = os.fspath(path)
    raw = _flexio.load(path, logs)
    for w in raw["warnings"]:
        warnings.warn(w, RuntimeWarning, stacklevel=2)
    return Result._from_raw(raw["result"], json=raw["json"], label=path, path=path)


def _side(x, logs):
    items = x if isinstance(x, (list, tuple)) else [x]
    if not items:
        raise ValueError("a side has no result")
    out = []
    for it in items:
        if isinstance(it, Result):
            if it.path is not None:
                out.append(("path", it.path, ""))
            elif it.json is not None:
                out.append(("text", it.json, it.label or "result"))
            else:
                raise ValueError("this Result has neither a file nor its JSON text")
        elif isinstance(it, (str, os.PathLike)):
            out.append(("path", os.fspath(it), ""))
        else:
            raise TypeError("compare: give Results, result file paths, or lists of them")
    return out


def compare(a, b, *, alpha=0.05, min_effect=None, resamples=2000, seed=1, logs=True):
    """Compare B with A as ``flexio compare`` does: per job and direction, IOPS,
    bandwidth, mean, p50, p99 and p99.9 latency, each with the difference, a 95%
    confidence interval, a Holm-adjusted p-value, an effect size and a verdict.

    ``a`` and ``b`` are each a :class:`Result` (from :func:`run` or :func:`load`), a
    result file's path, or a list of them (repeated trials). ``alpha``, ``min_effect``
    (percent), ``resamples`` and ``seed`` are ``flexio compare``'s ``--alpha``,
    ``--min-effect``, ``--resamples`` and ``--seed``; ``logs=False`` is ``--no-logs``.
    Returns a :class:`Comparison`.
    """
    sa, sb = _side(a, logs), _side(b, logs)
    data, text = _flexio.compare_results(sa, sb, alpha, min_effect, resamples, seed, logs)
    return Comparison._from_raw(data, text)


def binary():
    """The path of the ``flexio`` program this package carries (the one the ``flexio``
    command runs), or ``None`` when the package was built without it."""
    p = os.path.join(os.path.dirname(__file__), "bin", "flexio")
    return p if os.access(p, os.X_OK) else None
