//! flexio's results store: every saved run's result JSON, its provenance, its summary
//! metrics (per job and direction: IOPS, bandwidth, mean, p50, p99 and p99.9 latency) and
//! its latency histograms, in one versioned schema that lives either in an embedded SQLite
//! file (the default, `$XDG_DATA_HOME/flexio/results.db`) or in a team's PostgreSQL
//! database (`postgres://...`).
//!
//! Runs are saved in batches: one `--save` of a run is a batch of one, the trials of a
//! `flexio check` or `compare --trials` are one batch. A label names what a batch is (a
//! baseline, a kernel, a setting); `flexio check --baseline LABEL` compares with the newest
//! batch of that label.
//!
//! Every save is one transaction, so concurrent writers never see half a run. A store that
//! is locked, read-only, full, corrupt or of a newer schema gives a [`StoreError`] that says
//! so; the caller's own output files are written before the store is touched.

mod db;
mod extract;
mod schema;

pub use db::default_path;
use db::{Conn, Val};
pub use extract::metrics_of;
use std::fmt;

/// Why the store failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Another writer holds the database (SQLite's lock, past the busy timeout).
    Locked,
    /// The database or its folder cannot be written.
    ReadOnly,
    /// The disk or file system holding the database is full.
    Full,
    /// The file is not a database (or is damaged).
    Corrupt,
    /// The schema is newer than this flexio knows.
    Newer,
    /// A run, label or batch that is not there.
    NotFound,
    /// Cannot reach or open the store (connection refused, no such folder, bad address).
    Open,
    /// Anything else the database reported.
    Other,
}

/// A store error: what kind, and a message that names the store.
#[derive(Clone, Debug)]
pub struct StoreError {
    pub kind: ErrorKind,
    pub message: String,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StoreError {}

impl StoreError {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> StoreError {
        StoreError {
            kind,
            message: message.into(),
        }
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// A run to save.
#[derive(Clone, Debug, Default)]
pub struct NewRun {
    /// Where it came from: the job file or command, or the imported file's path.
    pub source: String,
    /// The result JSON (fio's or flexio's, JSON or json+).
    pub result: String,
}

/// A stored run without its result text.
#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    pub id: i64,
    pub batch: i64,
    /// Seconds since the epoch (UTC) when it was saved.
    pub saved_at: i64,
    pub label: Option<String>,
    /// `run`, `import`, `check`, `compare`, `sweep`, ...
    pub kind: String,
    pub source: String,
    /// `fio-3.33`, `flexio-0.1.0`, ...
    pub producer: String,
    pub host: Option<String>,
    pub kernel: Option<String>,
}

/// A stored run with its result JSON.
#[derive(Clone, Debug)]
pub struct StoredRun {
    pub info: RunInfo,
    pub result: String,
}

/// One stored metric value with its run.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricPoint {
    pub run: i64,
    pub batch: i64,
    pub saved_at: i64,
    pub label: Option<String>,
    pub job: String,
    pub ddir: String,
    pub metric: String,
    pub value: f64,
}

/// Which runs a listing takes.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub label: Option<String>,
    pub job: Option<String>,
    /// Saved at or after (seconds since the epoch).
    pub since: Option<i64>,
}

/// An open store.
pub struct Store {
    conn: Conn,
    location: String,
}

impl Store {
    /// Open (and create or migrate) the store at `spec`: `postgres://` or `postgresql://`
    /// addresses are PostgreSQL, anything else a SQLite file; `None` is the default file
    /// ([`default_path`]).
    pub fn open(spec: Option<&str>) -> Result<Store> {
        let (mut conn, location) = Conn::open(spec)?;
        schema::migrate(&mut conn, &location)?;
        Ok(Store { conn, location })
    }

    /// Where the store is (a file path, or the PostgreSQL address without its password).
    pub fn location(&self) -> &str {
        &self.location
    }

    /// How long a SQLite writer waits for another before the store is "locked" (default
    /// `FLEXIO_STORE_BUSY_MS`, else 10 s); PostgreSQL queues writers itself.
    pub fn set_busy_timeout(&mut self, t: std::time::Duration) -> Result<()> {
        self.conn.set_busy_timeout(&self.location, t)
    }

    /// The schema version of the open store.
    pub fn schema_version(&mut self) -> Result<i64> {
        schema::version(&mut self.conn, &self.location)
    }

    /// Save `runs` as one batch (one transaction) of `kind`, labelled `label`; their ids.
    /// A result that is not fio's or flexio's JSON is refused before anything is written.
    pub fn save(&mut self, kind: &str, label: Option<&str>, runs: &[NewRun]) -> Result<Vec<i64>> {
        let mut prepared = Vec::new();
        for r in runs {
            let x = extract::extract(&r.result)
                .map_err(|e| StoreError::new(ErrorKind::Other, format!("{}: {e}", r.source)))?;
            prepared.push(x);
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        let loc = self.location.clone();
        self.conn.transaction(&loc, |tx| {
            let batch = tx.query(
                "INSERT INTO flexio_batches (saved_at, label, kind) VALUES ($1, $2, $3) RETURNING id",
                &[
                    Val::I(now),
                    Val::T(label.map(String::from)),
                    Val::T(Some(kind.to_string())),
                ],
            )?;
            let batch = batch.first().and_then(|r| r[0].int()).unwrap_or(0);
            let mut ids = Vec::new();
            for (r, x) in runs.iter().zip(&prepared) {
                let row = tx.query(
                    "INSERT INTO flexio_runs (batch_id, source, producer, host, kernel, result, provenance) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                    &[
                        Val::I(batch),
                        Val::T(Some(r.source.clone())),
                        Val::T(Some(x.producer.clone())),
                        Val::T(x.host.clone()),
                        Val::T(x.kernel.clone()),
                        Val::T(Some(r.result.clone())),
                        Val::T(x.provenance.clone()),
                    ],
                )?;
                let id = row.first().and_then(|r| r[0].int()).unwrap_or(0);
                for m in &x.metrics {
                    tx.query(
                        "INSERT INTO flexio_metrics (run_id, job, ddir, metric, value) VALUES ($1, $2, $3, $4, $5)",
                        &[
                            Val::I(id),
                            Val::T(Some(m.job.clone())),
                            Val::T(Some(m.ddir.clone())),
                            Val::T(Some(m.metric.clone())),
                            Val::F(m.value),
                        ],
                    )?;
                }
                for h in &x.histograms {
                    tx.query(
                        "INSERT INTO flexio_histograms (run_id, job, ddir, lat_kind, bins) VALUES ($1, $2, $3, $4, $5)",
                        &[
                            Val::I(id),
                            Val::T(Some(h.job.clone())),
                            Val::T(Some(h.ddir.clone())),
                            Val::T(Some(h.lat_kind.clone())),
                            Val::T(Some(h.bins.clone())),
                        ],
                    )?;
                }
                ids.push(id);
            }
            Ok(ids)
        })
    }

    /// Stored runs, oldest first.
    pub fn list(&mut self, f: &Filter) -> Result<Vec<RunInfo>> {
        let (cond, params) = where_clause(f);
        let sql = format!(
            "SELECT r.id, b.id, b.saved_at, b.label, b.kind, r.source, r.producer, r.host, r.kernel \
             FROM flexio_runs r JOIN flexio_batches b ON r.batch_id = b.id {cond} ORDER BY r.id"
        );
        let loc = self.location.clone();
        let rows = self.conn.query(&loc, &sql, &params)?;
        Ok(rows.iter().map(|r| info(r)).collect())
    }

    /// One stored run with its result.
    pub fn get(&mut self, id: i64) -> Result<StoredRun> {
        let loc = self.location.clone();
        let rows = self.conn.query(
            &loc,
            "SELECT r.id, b.id, b.saved_at, b.label, b.kind, r.source, r.producer, r.host, r.kernel, r.result \
             FROM flexio_runs r JOIN flexio_batches b ON r.batch_id = b.id WHERE r.id = $1",
            &[Val::I(id)],
        )?;
        let r = rows.first().ok_or_else(|| {
            StoreError::new(
                ErrorKind::NotFound,
                format!(
                    "{}: no stored run {id} (flexio history lists them)",
                    self.location
                ),
            )
        })?;
        Ok(StoredRun {
            info: info(r),
            result: r[9].text().unwrap_or_default(),
        })
    }

    /// The runs of the newest batch labelled `label`, with their results.
    pub fn latest_batch(&mut self, label: &str) -> Result<Vec<StoredRun>> {
        let loc = self.location.clone();
        let rows = self.conn.query(
            &loc,
            "SELECT max(id) FROM flexio_batches WHERE label = $1",
            &[Val::T(Some(label.to_string()))],
        )?;
        let Some(batch) = rows.first().and_then(|r| r[0].int()) else {
            return Err(StoreError::new(
                ErrorKind::NotFound,
                format!("{}: no runs are labelled '{label}'", self.location),
            ));
        };
        let ids = self.conn.query(
            &loc,
            "SELECT id FROM flexio_runs WHERE batch_id = $1 ORDER BY id",
            &[Val::I(batch)],
        )?;
        ids.iter()
            .filter_map(|r| r[0].int())
            .map(|id| self.get(id))
            .collect()
    }

    /// Every stored value of `metric` (as [`metrics_of`] names them: `IOPS`, `bw`, `mean`,
    /// `p50`, `p99`, `p99.9`) of the runs `f` takes, oldest first.
    pub fn metric(&mut self, f: &Filter, metric: &str) -> Result<Vec<MetricPoint>> {
        let (cond, mut params) = where_clause(f);
        let n = params.len() + 1;
        let glue = if cond.is_empty() { "WHERE" } else { "AND" };
        params.push(Val::T(Some(metric.to_string())));
        let sql = format!(
            "SELECT r.id, b.id, b.saved_at, b.label, m.job, m.ddir, m.metric, m.value \
             FROM flexio_metrics m JOIN flexio_runs r ON m.run_id = r.id \
             JOIN flexio_batches b ON r.batch_id = b.id {cond} {glue} m.metric = ${n} \
             ORDER BY r.id, m.job, m.ddir"
        );
        let loc = self.location.clone();
        let rows = self.conn.query(&loc, &sql, &params)?;
        Ok(rows
            .iter()
            .map(|r| MetricPoint {
                run: r[0].int().unwrap_or(0),
                batch: r[1].int().unwrap_or(0),
                saved_at: r[2].int().unwrap_or(0),
                label: r[3].text(),
                job: r[4].text().unwrap_or_default(),
                ddir: r[5].text().unwrap_or_default(),
                metric: r[6].text().unwrap_or_default(),
                value: r[7].float().unwrap_or(f64::NAN),
            })
            .collect())
    }

    /// The stored latency histograms of run `id`: (job, direction, latency kind, bins as
    /// `[[ns, count], ...]` JSON).
    pub fn histograms(&mut self, id: i64) -> Result<Vec<(String, String, String, String)>> {
        let loc = self.location.clone();
        let rows = self.conn.query(
            &loc,
            "SELECT job, ddir, lat_kind, bins FROM flexio_histograms WHERE run_id = $1 ORDER BY job, ddir",
            &[Val::I(id)],
        )?;
        Ok(rows
            .iter()
            .map(|r| {
                (
                    r[0].text().unwrap_or_default(),
                    r[1].text().unwrap_or_default(),
                    r[2].text().unwrap_or_default(),
                    r[3].text().unwrap_or_default(),
                )
            })
            .collect())
    }
}

fn info(r: &[Val]) -> RunInfo {
    RunInfo {
        id: r[0].int().unwrap_or(0),
        batch: r[1].int().unwrap_or(0),
        saved_at: r[2].int().unwrap_or(0),
        label: r[3].text(),
        kind: r[4].text().unwrap_or_default(),
        source: r[5].text().unwrap_or_default(),
        producer: r[6].text().unwrap_or_default(),
        host: r[7].text(),
        kernel: r[8].text(),
    }
}

fn where_clause(f: &Filter) -> (String, Vec<Val>) {
    let mut conds = Vec::new();
    let mut params = Vec::new();
    if let Some(l) = &f.label {
        params.push(Val::T(Some(l.clone())));
        conds.push(format!("b.label = ${}", params.len()));
    }
    if let Some(j) = &f.job {
        params.push(Val::T(Some(j.clone())));
        conds.push(format!(
            "EXISTS (SELECT 1 FROM flexio_metrics mj WHERE mj.run_id = r.id AND mj.job = ${})",
            params.len()
        ));
    }
    if let Some(s) = f.since {
        params.push(Val::I(s));
        conds.push(format!("b.saved_at >= ${}", params.len()));
    }
    if conds.is_empty() {
        (String::new(), params)
    } else {
        (format!("WHERE {}", conds.join(" AND ")), params)
    }
}

#[cfg(test)]
mod tests;
