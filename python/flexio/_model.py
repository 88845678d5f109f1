"""The result objects: plain dataclasses over flexio's results model, each with
``to_dict()`` (plain dicts and lists) and ``to_pandas()`` (pandas is imported only there)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

DIRECTIONS = ("read", "write", "trim", "mixed", "sync")


def _pandas():
    try:
        import pandas  # noqa: PLC0415 (imported lazily on purpose)
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "to_pandas() needs pandas: pip install pandas (or pip install flexio[pandas])"
        ) from e
    return pandas


@dataclass(frozen=True)
class Latency:
    """One latency statistic in nanoseconds (fio's ``slat_ns``, ``clat_ns``, ``lat_ns``).

    ``percentiles`` maps the percentile (``99.0``, ``99.9``) to its value in ns, ``bins``
    (json+ only) a histogram bucket's value in ns to its count. ``n`` is the number of
    samples; a statistic the job did not measure has ``n == 0``.
    """

    min: int = 0
    max: int = 0
    mean: float = 0.0
    stddev: float = 0.0
    n: int = 0
    percentiles: Dict[float, int] = field(default_factory=dict)
    bins: Dict[int, int] = field(default_factory=dict)

    @classmethod
    def _from_raw(cls, d):
        if d is None:
            return None
        return cls(
            min=d["min"],
            max=d["max"],
            mean=d["mean"],
            stddev=d["stddev"],
            n=d["n"],
            percentiles={float(p): v for p, v in d["percentiles"]},
            bins={int(b): c for b, c in d["bins"]},
        )

    def percentile(self, p: float) -> Optional[int]:
        """The ``p``-th percentile in ns, or ``None`` when the result does not have it."""
        for q, v in self.percentiles.items():
            if abs(q - p) < 1e-9:
                return v
        return None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Samples:
    """fio's periodic bandwidth (KiB/s) or IOPS samples of a direction (``bw_*``,
    ``iops_*``)."""

    min: float = 0.0
    max: float = 0.0
    mean: float = 0.0
    stddev: float = 0.0
    n: int = 0

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Direction:
    """One direction of one job: ``read``, ``write``, ``trim``, ``mixed`` (with
    unified_rw_reporting) or ``sync`` (fio reports only the count and the latency of sync
    calls: their figures are in ``total_ios`` and ``lat``, the rest is 0).

    ``bw_bytes`` is in bytes per second, ``runtime_ms`` in milliseconds, ``io_bytes`` the
    bytes moved.
    """

    name: str
    io_bytes: int
    bw_bytes: float
    iops: float
    runtime_ms: int
    total_ios: int
    slat: Latency
    clat: Latency
    lat: Latency
    sched_lat: Optional[Latency]
    bw_samples: Samples
    iops_samples: Samples

    @classmethod
    def _from_raw(cls, d):
        return cls(
            name=d["name"],
            io_bytes=d["io_bytes"],
            bw_bytes=d["bw_bytes"],
            iops=d["iops"],
            runtime_ms=d["runtime_ms"],
            total_ios=d["total_ios"],
            slat=Latency._from_raw(d["slat"]),
            clat=Latency._from_raw(d["clat"]),
            lat=Latency._from_raw(d["lat"]),
            sched_lat=Latency._from_raw(d["sched_lat"]),
            bw_samples=Samples(**d["bw_samples"]),
            iops_samples=Samples(**d["iops_samples"]),
        )

    @classmethod
    def _sync(cls, d):
        empty = Latency()
        return cls(
            name="sync",
            io_bytes=0,
            bw_bytes=0.0,
            iops=0.0,
            runtime_ms=0,
            total_ios=d["total_ios"],
            slat=empty,
            clat=empty,
            lat=Latency._from_raw(d["lat"]),
            sched_lat=None,
            bw_samples=Samples(),
            iops_samples=Samples(),
        )

    @property
    def response(self) -> Latency:
        """The latency that describes response time best (as ``flexio compare`` picks
        it): total latency when it was measured with percentiles, else completion
        latency."""
        if self.lat.n > 0 and (self.lat.percentiles or self.clat.n == 0):
            return self.lat
        return self.clat

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


# A log's columns, in the order fio writes them.
LOG_COLUMNS = ("time_ms", "value", "value1", "ddir", "bs", "offset", "prio", "issue_time_ns", "bins")


@dataclass(frozen=True)
class Log:
    """One log file of a job, read line by line: ``kind`` is ``lat``, ``clat``, ``slat``
    (ns), ``bw`` (KiB/s) or ``iops``; ``thread`` the job thread's number (``None`` with
    ``per_job_logs=0``). ``columns`` maps each column fio writes to a list: ``time_ms``,
    ``value``, ``value1`` (``log_window_value=both``), ``ddir`` (0 read, 1 write, 2 trim),
    ``bs``, ``offset`` (``log_offset=1``), ``prio``, ``issue_time_ns``
    (``log_issue_time=1``, clat and slat logs).

    A histogram log (``write_hist_log``) has ``kind`` ``clat_hist`` and the columns
    ``time_ms``, ``ddir``, ``bs`` and ``bins``: per line, the completion latencies counted
    in that interval, one count per bin (1856 >> ``log_hist_coarseness`` bins for fio's
    layout). ``bin_ns`` gives the latency in ns each bin stands for.

    Compressed logs (``log_store_compressed=1``, ``.log.fz``) are inflated and read the
    same way; ``path`` names the ``.log.fz`` file."""

    kind: str
    thread: Optional[int]
    path: str
    columns: Dict[str, List[Any]]
    job: str = ""
    bin_ns: Optional[List[int]] = None

    def __len__(self):
        return len(self.columns.get("time_ms", ()))

    def to_dict(self) -> Dict[str, List[int]]:
        """The columns as a dict of lists."""
        return {k: list(v) for k, v in self.columns.items()}

    def to_pandas(self):
        """The log as a pandas DataFrame, one row per line (imports pandas)."""
        pd = _pandas()
        return pd.DataFrame({k: self.columns[k] for k in LOG_COLUMNS if k in self.columns})

    to_dataframe = to_pandas


@dataclass(frozen=True)
class Job:
    """One job of a result (with group_reporting, one reporting group).

    ``directions`` maps ``read``/``write``/``trim``/``mixed``/``sync`` to the
    :class:`Direction` the job did I/O in; ``job.read`` and the others are shortcuts
    (``None`` when the job did none). ``options`` are the job's options as fio echoes
    them (its own, then the global ones). ``logs`` are the job's log files.
    """

    name: str
    groupid: int
    error: int
    options: Dict[str, str]
    directions: Dict[str, Direction]
    job_runtime_ms: int
    usr_cpu: float
    sys_cpu: float
    ctx: int
    majf: int
    minf: int
    ops: List[Dict[str, Any]]
    logs: List[Log]

    @classmethod
    def _from_raw(cls, d):
        dirs = {x["name"]: Direction._from_raw(x) for x in d["directions"]}
        if d.get("sync"):
            dirs["sync"] = Direction._sync(d["sync"])
        name = d["name"]
        return cls(
            name=name,
            groupid=d["groupid"],
            error=d["error"],
            options={k: v for k, v in d["options"]},
            directions=dirs,
            job_runtime_ms=d["job_runtime_ms"],
            usr_cpu=d["usr_cpu"],
            sys_cpu=d["sys_cpu"],
            ctx=d["ctx"],
            majf=d["majf"],
            minf=d["minf"],
            ops=d["ops"],
            logs=[
                Log(
                    kind=x["kind"],
                    thread=x["thread"],
                    path=x["path"],
                    columns=x["columns"],
                    job=name,
                    bin_ns=x.get("bin_ns"),
                )
                for x in d.get("logs", [])
            ],
        )

    def __getitem__(self, direction: str) -> Direction:
        return self.directions[direction]

    @property
    def read(self) -> Optional[Direction]:
        return self.directions.get("read")

    @property
    def write(self) -> Optional[Direction]:
        return self.directions.get("write")

    @property
    def trim(self) -> Optional[Direction]:
        return self.directions.get("trim")

    @property
    def mixed(self) -> Optional[Direction]:
        return self.directions.get("mixed")

    @property
    def sync(self) -> Optional[Direction]:
        return self.directions.get("sync")

    def log(self, kind: str, thread: Optional[int] = None) -> Optional[Log]:
        """The job's first log of ``kind`` (``lat``, ``clat``, ``slat``, ``bw``, ``iops``,
        ``clat_hist``),
        of ``thread`` when given."""
        for lg in self.logs:
            if lg.kind == kind and (thread is None or lg.thread == thread):
                return lg
        return None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _lat_columns(prefix: str, lat: Latency) -> Dict[str, Any]:
    out = {
        f"{prefix}_min_ns": lat.min,
        f"{prefix}_max_ns": lat.max,
        f"{prefix}_mean_ns": lat.mean,
        f"{prefix}_stddev_ns": lat.stddev,
        f"{prefix}_n": lat.n,
    }
    for p, v in lat.percentiles.items():
        out[f"{prefix}_p{p:g}_ns"] = v
    return out


@dataclass(frozen=True)
class Result:
    """A run's results: the jobs, who produced them (``fio-3.33``, ``flexio-0.1.0``), the
    global options, the disks' statistics. ``json`` is the result's JSON text (for a run,
    the json+ document ``flexio --output-format=json+`` prints), ``path`` the file it was
    loaded from, ``exit_code`` a run's exit status as the flexio command returns it."""

    jobs: List[Job]
    producer: str
    time: str
    global_options: Dict[str, str]
    disks: List[Dict[str, Any]]
    warnings: List[str]
    label: str = ""
    path: Optional[str] = None
    json: Optional[str] = field(default=None, repr=False)
    exit_code: Optional[int] = None

    @classmethod
    def _from_raw(cls, d, json=None, label="", path=None, exit_code=None):
        return cls(
            jobs=[Job._from_raw(j) for j in d["jobs"]],
            producer=d["producer"],
            time=d["time"],
            global_options={k: v for k, v in d["global_options"]},
            disks=d["disks"],
            warnings=d["warnings"],
            label=label,
            path=path,
            json=json,
            exit_code=exit_code,
        )

    def job(self, name: str) -> Job:
        """The first job named ``name`` (``KeyError`` if none)."""
        for j in self.jobs:
            if j.name == name:
                return j
        raise KeyError(name)

    def __iter__(self):
        return iter(self.jobs)

    def __len__(self):
        return len(self.jobs)

    def rows(self) -> List[Dict[str, Any]]:
        """One flat dict per job and direction: the figures ``to_pandas()`` tabulates."""
        rows = []
        for j in self.jobs:
            for d in j.directions.values():
                r = {
                    "job": j.name,
                    "groupid": j.groupid,
                    "direction": d.name,
                    "io_bytes": d.io_bytes,
                    "bw_bytes": d.bw_bytes,
                    "iops": d.iops,
                    "runtime_ms": d.runtime_ms,
                    "total_ios": d.total_ios,
                }
                for prefix, lat in (("lat", d.lat), ("clat", d.clat), ("slat", d.slat)):
                    r.update(_lat_columns(prefix, lat))
                rows.append(r)
        return rows

    def to_dict(self) -> dict:
        """The whole result as plain dicts and lists."""
        d = dataclasses.asdict(self)
        d.pop("json", None)
        return d

    def to_pandas(self):
        """One row per job and direction (job, direction, io_bytes, bw_bytes, iops,
        runtime_ms, total_ios, and min/max/mean/stddev/n and every percentile of lat,
        clat and slat in ns), as a pandas DataFrame (imports pandas)."""
        pd = _pandas()
        return pd.DataFrame(self.rows())

    to_dataframe = to_pandas

    def logs_to_pandas(self):
        """Every log of every job in one long DataFrame: the columns of each log with
        ``job``, ``kind`` and ``thread`` before them (imports pandas)."""
        pd = _pandas()
        frames = []
        for j in self.jobs:
            for lg in j.logs:
                f = lg.to_pandas()
                f.insert(0, "thread", lg.thread)
                f.insert(0, "kind", lg.kind)
                f.insert(0, "job", j.name)
                frames.append(f)
        if not frames:
            return pd.DataFrame(columns=["job", "kind", "thread", "time_ms", "value", "ddir", "bs", "prio"])
        return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class MetricDiff:
    """One metric of a comparison: A's and B's values, the difference of B from A in
    percent with its 95% confidence interval, the p-value (and Holm-adjusted), the effect
    size, and whether the difference is significant and in B's favour."""

    metric: str
    a: Optional[float]
    b: Optional[float]
    diff_pct: Optional[float]
    ci_pct: Optional[Tuple[Optional[float], Optional[float]]]
    ci_method: str
    test: str
    p: Optional[float]
    p_holm: Optional[float]
    effect: Optional[Tuple[str, Optional[float]]]
    significant: bool
    b_better: bool
    note: Optional[str]
    detectable_pct: Optional[float]

    @classmethod
    def _from_raw(cls, r):
        e = r["effect"]
        return cls(
            metric=r["metric"],
            a=r["a"],
            b=r["b"],
            diff_pct=r["diff_pct"],
            ci_pct=tuple(r["ci_pct"]) if r["ci_pct"] is not None else None,
            ci_method=r["ci_method"],
            test=r["test"],
            p=r["p"],
            p_holm=r["p_holm"],
            effect=(e["name"], e["value"]) if e is not None else None,
            significant=r["significant"],
            b_better=r["b_better"],
            note=r["note"],
            detectable_pct=r["detectable_pct"],
        )


@dataclass(frozen=True)
class DirComparison:
    """One job and direction compared: ``metrics`` maps ``IOPS``, ``bw``, ``mean``,
    ``p50``, ``p99``, ``p99.9`` to their :class:`MetricDiff`; ``verdict`` is ``faster``,
    ``slower``, ``mixed`` or ``no significant difference``; ``headline`` says it in words.
    """

    job_a: str
    job_b: str
    direction: str
    trials_a: int
    trials_b: int
    latency: str
    verdict: str
    headline: str
    min_effect_pct: float
    metrics: Dict[str, MetricDiff]
    distribution_test: Optional[Dict[str, Any]]
    ks_test: Optional[Dict[str, Any]]
    warnings: List[str]
    distribution_source: Optional[str] = None

    @classmethod
    def _from_raw(cls, d):
        return cls(
            job_a=d["job_a"],
            job_b=d["job_b"],
            direction=d["ddir"],
            trials_a=d["trials_a"],
            trials_b=d["trials_b"],
            latency=d["latency"],
            verdict=d["verdict"],
            headline=d["headline"],
            min_effect_pct=d["min_effect_pct"],
            metrics={r["metric"]: MetricDiff._from_raw(r) for r in d["rows"]},
            distribution_test=d["distribution_test"],
            ks_test=d["ks_test"],
            warnings=d["warnings"],
            distribution_source=d["distribution_source"],
        )


@dataclass(frozen=True)
class Comparison:
    """``flexio compare``'s verdict on B against A.

    ``comparisons`` holds one :class:`DirComparison` per job and direction both sides
    have; ``notes`` says what was matched how and what was left out. ``verdict`` sums the
    directions up: their common verdict when they agree, ``mixed`` when they do not,
    ``nothing compared`` without any. ``text`` is ``flexio compare``'s table and
    ``to_dict()`` its ``--output-format=json``.
    """

    a: List[str]
    b: List[str]
    alpha: float
    notes: List[str]
    comparisons: List[DirComparison]
    text: str = field(repr=False, default="")
    raw: Dict[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def _from_raw(cls, d, text):
        return cls(
            a=d["a"],
            b=d["b"],
            alpha=d["alpha"],
            notes=d["notes"],
            comparisons=[DirComparison._from_raw(c) for c in d["comparisons"]],
            text=text,
            raw=d,
        )

    @property
    def verdict(self) -> str:
        vs = {c.verdict for c in self.comparisons}
        if not vs:
            return "nothing compared"
        if len(vs) == 1:
            return vs.pop()
        return "mixed"

    def regressions(self, pct: float = 0.0) -> List[Tuple[str, str, str, float]]:
        """(job, direction, metric, diff %) of every significant difference where B is
        worse by at least ``pct`` percent: what ``flexio compare --fail-if-worse PCT``
        fails on."""
        out = []
        for c in self.comparisons:
            for m in c.metrics.values():
                if m.significant and not m.b_better and m.diff_pct is not None and abs(m.diff_pct) >= pct:
                    out.append((c.job_b, c.direction, m.metric, m.diff_pct))
        return out

    def __str__(self):
        return self.text

    def to_dict(self) -> Dict[str, Any]:
        """The comparison as ``flexio compare --output-format=json`` writes it."""
        return self.raw

    def to_pandas(self):
        """One row per job, direction and metric (imports pandas)."""
        pd = _pandas()
        rows = []
        for c in self.comparisons:
            for m in c.metrics.values():
                lo, hi = m.ci_pct if m.ci_pct else (None, None)
                rows.append(
                    {
                        "job_a": c.job_a,
                        "job_b": c.job_b,
                        "direction": c.direction,
                        "metric": m.metric,
                        "a": m.a,
                        "b": m.b,
                        "diff_pct": m.diff_pct,
                        "ci_low_pct": lo,
                        "ci_high_pct": hi,
                        "p_holm": m.p_holm,
                        "significant": m.significant,
                        "b_better": m.b_better,
                        "verdict": c.verdict,
                    }
                )
        return pd.DataFrame(rows)

    to_dataframe = to_pandas
