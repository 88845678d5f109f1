//! The two databases behind one small interface: statements written once with `$1`-style
//! parameters (PostgreSQL's; SQLite reads them as `?1`), values as [`Val`], errors turned
//! into [`StoreError`]s that say what went wrong in words.

use crate::{ErrorKind, Result, StoreError};
use std::path::PathBuf;
use std::time::Duration;

/// A value going in or coming out.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    I(i64),
    F(f64),
    T(Option<String>),
}

impl Val {
    pub fn int(&self) -> Option<i64> {
        match self {
            Val::I(v) => Some(*v),
            Val::F(v) => Some(*v as i64),
            Val::T(_) => None,
        }
    }
    pub fn float(&self) -> Option<f64> {
        match self {
            Val::I(v) => Some(*v as f64),
            Val::F(v) => Some(*v),
            Val::T(_) => None,
        }
    }
    pub fn text(&self) -> Option<String> {
        match self {
            Val::T(v) => v.clone(),
            _ => None,
        }
    }
}

pub enum Conn {
    Sqlite(rusqlite::Connection),
    Pg(Box<postgres::Client>),
}

/// The default SQLite file: `$XDG_DATA_HOME/flexio/results.db`, else
/// `$HOME/.local/share/flexio/results.db`.
pub fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(base.join("flexio").join("results.db"))
}

/// How long a SQLite writer waits for another one before the store is "locked":
/// `FLEXIO_STORE_BUSY_MS`, else 10 s.
fn busy_timeout() -> Duration {
    let ms = std::env::var("FLEXIO_STORE_BUSY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    Duration::from_millis(ms)
}

/// A PostgreSQL address without its password, for messages.
fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://") {
        if let Some((auth, host)) = rest.split_once('@') {
            let user = auth.split(':').next().unwrap_or("");
            return format!("{scheme}://{user}@{host}");
        }
    }
    url.to_string()
}

fn sqlite_error(loc: &str, e: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode as C;
    let (kind, what) = match &e {
        rusqlite::Error::SqliteFailure(f, _) => match f.code {
            C::DatabaseBusy | C::DatabaseLocked => (
                ErrorKind::Locked,
                "the database is locked by another writer (waited FLEXIO_STORE_BUSY_MS, default 10 s)",
            ),
            C::ReadOnly => (
                ErrorKind::ReadOnly,
                "the database is read-only (its file or folder cannot be written)",
            ),
            C::DiskFull => (
                ErrorKind::Full,
                "the file system holding the database is full",
            ),
            C::NotADatabase | C::DatabaseCorrupt => (
                ErrorKind::Corrupt,
                "the file is not a flexio results database, or it is damaged",
            ),
            C::CannotOpen | C::PermissionDenied => (ErrorKind::Open, "cannot open the database"),
            C::SystemIoFailure => (ErrorKind::Other, "an I/O error"),
            _ => (ErrorKind::Other, "database error"),
        },
        _ => (ErrorKind::Other, "database error"),
    };
    // For SQLite the location is the file's path.
    diagnose(
        std::path::Path::new(loc),
        StoreError::new(kind, format!("results store {loc}: {what}: {e}")),
    )
}

fn pg_error(loc: &str, e: postgres::Error) -> StoreError {
    use postgres::error::SqlState;
    let (kind, what) = match e.code() {
        Some(c) if *c == SqlState::DISK_FULL => (ErrorKind::Full, "the server's disk is full"),
        Some(c)
            if *c == SqlState::READ_ONLY_SQL_TRANSACTION
                || *c == SqlState::INSUFFICIENT_PRIVILEGE =>
        {
            (
                ErrorKind::ReadOnly,
                "the database cannot be written by this user or server",
            )
        }
        Some(c) if *c == SqlState::LOCK_NOT_AVAILABLE || *c == SqlState::T_R_DEADLOCK_DETECTED => (
            ErrorKind::Locked,
            "the database is locked by another writer",
        ),
        Some(_) => (ErrorKind::Other, "database error"),
        None if e.is_closed() => (ErrorKind::Open, "the connection is closed"),
        None => (ErrorKind::Open, "cannot talk to the server"),
    };
    let detail = e
        .as_db_error()
        .map(|d| d.message().to_string())
        .unwrap_or_else(|| {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(&e);
            while let Some(x) = src {
                s = format!("{s}: {x}");
                src = x.source();
            }
            s
        });
    StoreError::new(kind, format!("results store {loc}: {what}: {detail}"))
}

/// SQLite says only "unable to open database file" when the file's folder is read-only
/// (it cannot make its journal) or full: find out which by opening the file for writing
/// (which changes nothing).
fn diagnose(path: &std::path::Path, e: StoreError) -> StoreError {
    if !matches!(e.kind, ErrorKind::Open | ErrorKind::Other) {
        return e;
    }
    let probe = std::fs::OpenOptions::new().append(true).open(path);
    let os = match probe {
        Err(x) => x.raw_os_error(),
        Ok(_) => None,
    };
    match os {
        Some(libc::EROFS) => StoreError::new(
            ErrorKind::ReadOnly,
            format!(
                "{}: the database is read-only (its file system is mounted read-only)",
                e.message
            ),
        ),
        Some(libc::EACCES) | Some(libc::EPERM) => StoreError::new(
            ErrorKind::ReadOnly,
            format!(
                "{}: the database is read-only (no permission to write it)",
                e.message
            ),
        ),
        Some(libc::ENOSPC) => StoreError::new(
            ErrorKind::Full,
            format!("{}: the file system is full", e.message),
        ),
        _ => {
            // A write that failed for want of space shows as a plain I/O error.
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."));
            match rustix::fs::statvfs(dir) {
                Ok(st) if st.f_bavail.saturating_mul(st.f_frsize) < 64 << 10 => StoreError::new(
                    ErrorKind::Full,
                    format!(
                        "{}: the file system is full ({} bytes free)",
                        e.message,
                        st.f_bavail.saturating_mul(st.f_frsize)
                    ),
                ),
                _ => e,
            }
        }
    }
}

fn sqlite_sql(sql: &str) -> String {
    sql.replace('$', "?")
}

fn sqlite_rows(
    c: &rusqlite::Connection,
    loc: &str,
    sql: &str,
    params: &[Val],
) -> Result<Vec<Vec<Val>>> {
    use rusqlite::types::Value;
    let err = |e| sqlite_error(loc, e);
    let mut st = c.prepare_cached(&sqlite_sql(sql)).map_err(err)?;
    let n = st.column_count();
    let ps: Vec<Value> = params
        .iter()
        .map(|p| match p {
            Val::I(v) => Value::Integer(*v),
            Val::F(v) => Value::Real(*v),
            Val::T(Some(s)) => Value::Text(s.clone()),
            Val::T(None) => Value::Null,
        })
        .collect();
    let mut rows = st.query(rusqlite::params_from_iter(ps)).map_err(err)?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(err)? {
        let mut row = Vec::with_capacity(n);
        for i in 0..n {
            row.push(match r.get::<_, Value>(i).map_err(err)? {
                Value::Integer(v) => Val::I(v),
                Value::Real(v) => Val::F(v),
                Value::Text(s) => Val::T(Some(s)),
                Value::Blob(b) => Val::T(Some(String::from_utf8_lossy(&b).into_owned())),
                Value::Null => Val::T(None),
            });
        }
        out.push(row);
    }
    Ok(out)
}

fn pg_rows<C: postgres::GenericClient>(
    c: &mut C,
    loc: &str,
    sql: &str,
    params: &[Val],
) -> Result<Vec<Vec<Val>>> {
    use postgres::types::{ToSql, Type};
    let boxed: Vec<Box<dyn ToSql + Sync>> = params
        .iter()
        .map(|p| -> Box<dyn ToSql + Sync> {
            match p {
                Val::I(v) => Box::new(*v),
                Val::F(v) => Box::new(*v),
                Val::T(s) => Box::new(s.clone()),
            }
        })
        .collect();
    let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
    let rows = c.query(sql, &refs).map_err(|e| pg_error(loc, e))?;
    let mut out = Vec::new();
    for r in rows {
        let mut row = Vec::new();
        for (i, col) in r.columns().iter().enumerate() {
            let t = col.type_();
            let v = if *t == Type::INT8 {
                r.try_get::<_, Option<i64>>(i)
                    .ok()
                    .flatten()
                    .map_or(Val::T(None), Val::I)
            } else if *t == Type::INT4 {
                r.try_get::<_, Option<i32>>(i)
                    .ok()
                    .flatten()
                    .map_or(Val::T(None), |v| Val::I(v as i64))
            } else if *t == Type::FLOAT8 {
                r.try_get::<_, Option<f64>>(i)
                    .ok()
                    .flatten()
                    .map_or(Val::T(None), Val::F)
            } else {
                // Other types (void, ...) are not read: no statement here needs them.
                Val::T(r.try_get::<_, Option<String>>(i).ok().flatten())
            };
            row.push(v);
        }
        out.push(row);
    }
    Ok(out)
}

/// What a statement runs on inside a transaction.
pub enum Tx<'a> {
    Sqlite(&'a rusqlite::Connection, &'a str),
    Pg(postgres::Transaction<'a>, &'a str),
}

impl Tx<'_> {
    pub fn query(&mut self, sql: &str, params: &[Val]) -> Result<Vec<Vec<Val>>> {
        match self {
            Tx::Sqlite(c, loc) => sqlite_rows(c, loc, sql, params),
            Tx::Pg(t, loc) => pg_rows(t, loc, sql, params),
        }
    }

    /// The database's dialect: `sqlite` or `postgres`.
    pub fn dialect(&self) -> &'static str {
        match self {
            Tx::Sqlite(..) => "sqlite",
            Tx::Pg(..) => "postgres",
        }
    }

    /// Run a statement that may hold several commands and returns nothing (DDL).
    pub fn batch(&mut self, sql: &str) -> Result<()> {
        match self {
            Tx::Sqlite(c, loc) => c.execute_batch(sql).map_err(|e| sqlite_error(loc, e)),
            Tx::Pg(t, loc) => t.batch_execute(sql).map_err(|e| pg_error(loc, e)),
        }
    }
}

impl Conn {
    pub fn open(spec: Option<&str>) -> Result<(Conn, String)> {
        let spec = match spec {
            Some(s) if !s.is_empty() => s.to_string(),
            _ => default_path()
                .ok_or_else(|| {
                    StoreError::new(
                        ErrorKind::Open,
                        "no results store: set XDG_DATA_HOME or HOME, or give --store PATH",
                    )
                })?
                .display()
                .to_string(),
        };
        if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
            let loc = redact(&spec);
            let client =
                postgres::Client::connect(&spec, postgres::NoTls).map_err(|e| pg_error(&loc, e))?;
            return Ok((Conn::Pg(Box::new(client)), loc));
        }
        let path = PathBuf::from(&spec);
        if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if !dir.is_dir() {
                std::fs::create_dir_all(dir).map_err(|e| {
                    let kind = match e.kind() {
                        std::io::ErrorKind::PermissionDenied => ErrorKind::ReadOnly,
                        _ if e.raw_os_error() == Some(libc::EROFS) => ErrorKind::ReadOnly,
                        _ if e.raw_os_error() == Some(libc::ENOSPC) => ErrorKind::Full,
                        _ => ErrorKind::Open,
                    };
                    StoreError::new(
                        kind,
                        format!(
                            "results store {spec}: cannot create its folder {}: {e}",
                            dir.display()
                        ),
                    )
                })?;
            }
        }
        let err = |e| sqlite_error(&spec, e);
        let c = rusqlite::Connection::open(&path).map_err(err)?;
        c.busy_timeout(busy_timeout()).map_err(err)?;
        // Foreign keys on; WAL lets readers go on while one writer saves (a read-only or
        // full file system keeps the mode it has, and the first write says why).
        c.execute_batch("PRAGMA foreign_keys = ON;").map_err(err)?;
        let _ = c.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()));
        Ok((Conn::Sqlite(c), spec))
    }

    pub fn set_busy_timeout(&mut self, loc: &str, t: Duration) -> Result<()> {
        match self {
            Conn::Sqlite(c) => c.busy_timeout(t).map_err(|e| sqlite_error(loc, e)),
            Conn::Pg(_) => Ok(()),
        }
    }

    pub fn query(&mut self, loc: &str, sql: &str, params: &[Val]) -> Result<Vec<Vec<Val>>> {
        match self {
            Conn::Sqlite(c) => sqlite_rows(c, loc, sql, params),
            Conn::Pg(c) => pg_rows(c.as_mut(), loc, sql, params),
        }
    }

    /// Run `f` in one transaction: all of it is committed, or none (a write transaction
    /// from the start in SQLite, so two writers queue rather than deadlock).
    pub fn transaction<T>(
        &mut self,
        loc: &str,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T>,
    ) -> Result<T> {
        match self {
            Conn::Sqlite(c) => {
                c.execute_batch("BEGIN IMMEDIATE")
                    .map_err(|e| sqlite_error(loc, e))?;
                let mut tx = Tx::Sqlite(c, loc);
                match f(&mut tx) {
                    Ok(v) => match c.execute_batch("COMMIT") {
                        Ok(()) => Ok(v),
                        Err(e) => {
                            let _ = c.execute_batch("ROLLBACK");
                            Err(sqlite_error(loc, e))
                        }
                    },
                    Err(e) => {
                        let _ = c.execute_batch("ROLLBACK");
                        Err(e)
                    }
                }
            }
            Conn::Pg(c) => {
                let t = c.transaction().map_err(|e| pg_error(loc, e))?;
                let mut tx = Tx::Pg(t, loc);
                let v = f(&mut tx)?;
                if let Tx::Pg(t, _) = tx {
                    t.commit().map_err(|e| pg_error(loc, e))?;
                }
                Ok(v)
            }
        }
    }
}
