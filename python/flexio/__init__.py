"""flexio from Python: run fio jobs with flexio's run engine, read fio's and flexio's
JSON results, and compare runs as ``flexio compare`` does.

>>> import flexio
>>> r = flexio.run(name="seq", ioengine="null", rw="read", bs="4k", size="64M")
>>> r.jobs[0].read.io_bytes
67108864

See docs/python.md in flexio's repository.
"""

from ._api import binary, compare, load, run
from ._flexio import VERSION, JobError, ResultError, RunError
from ._model import (
    Comparison,
    DirComparison,
    Direction,
    Job,
    Latency,
    Log,
    MetricDiff,
    Result,
    Samples,
)

__version__ = VERSION.split("-", 1)[-1]

__all__ = [
    "run",
    "load",
    "compare",
    "binary",
    "Result",
    "Job",
    "Direction",
    "Latency",
    "Samples",
    "Log",
    "Comparison",
    "DirComparison",
    "MetricDiff",
    "JobError",
    "RunError",
    "ResultError",
    "VERSION",
]
