//! What goes wrong with the database, in words that say what to do and
//! never carry the password.

/// A PostgreSQL store failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PgError {
    /// `sessiondb.url` is not a usable PostgreSQL URL.
    #[error(
        "sessiondb.url is not a PostgreSQL URL ({0}); write it as \
         postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
    )]
    Url(String),
    /// The server cannot be reached or refused us.
    #[error(
        "cannot connect to PostgreSQL at {target}: {reason}. Check that the server runs and \
         sessiondb.url (or HERMES_DATABASE_URL) names the right host, database, user and \
         password; Hermes does not fall back to state.db"
    )]
    Connect {
        /// Host, port, database and user (no password).
        target: String,
        /// What the server or the network said.
        reason: String,
    },
    /// The database holds a schema from a newer Hermes.
    #[error(
        "the Hermes schema in {target} is version {found}, newer than this build's {supported}: \
         upgrade hermes on this host (or point sessiondb.url at another database)"
    )]
    Newer {
        /// Where.
        target: String,
        /// The version found.
        found: i64,
        /// The version this build writes.
        supported: i64,
    },
    /// A statement failed.
    #[error("PostgreSQL: {context}: {reason}")]
    Query {
        /// What was being done.
        context: &'static str,
        /// The server's words.
        reason: String,
    },
    /// A session, title or query problem the user can fix.
    #[error("{0}")]
    Invalid(String),
}

impl PgError {
    /// A failed statement while doing `context`.
    pub(crate) fn query(context: &'static str, e: &postgres::Error) -> Self {
        PgError::Query {
            context,
            reason: reason(e),
        }
    }
}

/// The server's message for `e` (its detail and hint when it has them).
pub(crate) fn reason(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut text = db.message().to_owned();
            if let Some(detail) = db.detail() {
                text.push_str(&format!(" ({detail})"));
            }
            if let Some(hint) = db.hint() {
                text.push_str(&format!("; {hint}"));
            }
            text
        }
        None => {
            // The cause ("Connection refused", a timeout) is one level down.
            let mut text = e.to_string();
            if let Some(cause) = std::error::Error::source(e) {
                text.push_str(&format!(": {cause}"));
            }
            text
        }
    }
}

/// Adds the context to a statement's error.
pub(crate) trait Ctx<T> {
    /// The error, said as a failure of `context`.
    fn ctx(self, context: &'static str) -> Result<T, PgError>;
}

impl<T> Ctx<T> for Result<T, postgres::Error> {
    fn ctx(self, context: &'static str) -> Result<T, PgError> {
        self.map_err(|e| PgError::query(context, &e))
    }
}

impl From<PgError> for hermes_state::store::StoreError {
    fn from(e: PgError) -> Self {
        hermes_state::store::StoreError(e.to_string())
    }
}
