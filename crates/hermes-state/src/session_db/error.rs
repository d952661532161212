//! The error type of the session database.

use std::path::PathBuf;

/// Everything that can go wrong while reading or writing `state.db`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DbError {
    /// The database file (or its directory) could not be created or opened.
    #[error("cannot open the session database {path}: {message}")]
    Open {
        /// The database file.
        path: PathBuf,
        /// What SQLite or the filesystem said.
        message: String,
    },
    /// A filesystem operation next to the database failed (directory, backup copy).
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done, e.g. "cannot create directory".
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file exists but is not a session database this version understands.
    #[error("the session database {path} is damaged or not a Hermes database: {message}")]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What was found wrong.
        message: String,
    },
    /// Other processes held the write lock through every retry.
    #[error(
        "the session database is busy: another Hermes process kept it locked through {attempts} attempts"
    )]
    Busy {
        /// How many times the write was tried.
        attempts: u32,
    },
    /// The session does not exist.
    #[error("no session with id {0:?}")]
    NoSuchSession(String),
    /// A write was attempted on a database opened with [`SessionDb::open_read_only`].
    ///
    /// [`SessionDb::open_read_only`]: super::SessionDb::open_read_only
    #[error("the session database was opened read-only")]
    ReadOnly,
    /// The title is already used by another session (titles are unique).
    #[error("the title {title:?} is already in use by session {session_id}")]
    TitleTaken {
        /// The (sanitised) title.
        title: String,
        /// The session that holds it.
        session_id: String,
    },
    /// The title is unusable (too long after cleaning).
    #[error("invalid title: {0}")]
    InvalidTitle(String),
    /// An id prefix matched more than one session.
    #[error("session id prefix {prefix:?} is ambiguous; it matches {}", .candidates.join(", "))]
    Ambiguous {
        /// The prefix given.
        prefix: String,
        /// The ids it matched (newest first; at most a handful).
        candidates: Vec<String>,
    },
    /// A search query could not be understood even after sanitising it.
    #[error("invalid search query: {0}")]
    InvalidQuery(String),
    /// A value could not be encoded for storage.
    #[error("cannot encode {what}: {message}")]
    Encode {
        /// Which field.
        what: &'static str,
        /// The encoder's message.
        message: String,
    },
    /// SQLite reported an error; `context` says which operation failed.
    #[error("session database error while {context}: {source}")]
    Sqlite {
        /// The operation, in words ("appending a message").
        context: &'static str,
        /// SQLite's error.
        source: rusqlite::Error,
    },
}

impl DbError {
    /// True when SQLite reported the database busy or locked.
    pub fn is_busy(&self) -> bool {
        match self {
            DbError::Busy { .. } => true,
            DbError::Sqlite { source, .. } => is_busy_error(source),
            _ => false,
        }
    }
}

/// True for `SQLITE_BUSY` / `SQLITE_LOCKED` (any extended code).
pub(crate) fn is_busy_error(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// True for the error class a damaged FTS index (or schema) produces.
pub(crate) fn is_corruption_error(e: &rusqlite::Error) -> bool {
    if matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt)
    ) {
        return true;
    }
    let msg = e.to_string().to_lowercase();
    msg.contains("malformed") || (msg.contains("fts5") && msg.contains("corrupt"))
}

/// True for the errors a damaged FTS index raises on writes: the corruption class, or the
/// bare primary-key failure FTS5 reports when a truncated structure record makes it reuse
/// segment ids (genuine constraint failures name the table and column).
pub(crate) fn is_fts_write_damage(e: &rusqlite::Error) -> bool {
    if is_corruption_error(e) {
        return true;
    }
    match e {
        rusqlite::Error::SqliteFailure(f, msg) => {
            f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                && msg.as_deref().is_none_or(|m| m == "constraint failed")
        }
        _ => false,
    }
}

/// Attaches an operation description to rusqlite errors.
pub(crate) trait Ctx<T> {
    fn ctx(self, context: &'static str) -> Result<T, DbError>;
}

impl<T> Ctx<T> for Result<T, rusqlite::Error> {
    fn ctx(self, context: &'static str) -> Result<T, DbError> {
        self.map_err(|source| DbError::Sqlite { context, source })
    }
}
