//! `hermes sessions migrate --to postgresql://…|PATH`: copies every session,
//! message and usage row between this home's state.db (or another file) and
//! a PostgreSQL database, in either direction, then verifies the copy (row
//! counts and a checksum of what was copied, read back). The cron jobs and
//! outputs and the pairing files beside the state.db go too. Running it
//! again updates what the first run wrote.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use hermes_postgres::{CopyReport, PgStore, Target};
use hermes_session::stores::StoreChoice;
use hermes_state::Env;
use hermes_state::documents::{self, Documents, HomeDocuments};

fn is_url(s: &str) -> bool {
    s.starts_with("postgresql://") || s.starts_with("postgres://")
}

/// Runs the migration and prints what it copied.
pub fn run(env: Env, to: &str, from: Option<&str>, schema: Option<&str>) -> Result<ExitCode> {
    let setup = hermes_session::Setup::load(env, false).map_err(|e| anyhow::anyhow!("{e}"))?;
    let configured = hermes_session::stores::choice(&setup).ok();
    let schema = schema
        .map(str::to_owned)
        .or_else(|| match &configured {
            Some(StoreChoice::Postgres { schema, .. }) => Some(schema.clone()),
            _ => None,
        })
        .unwrap_or_else(|| hermes_postgres::DEFAULT_SCHEMA.to_owned());
    let open = |url: &str| -> Result<PgStore> { Ok(PgStore::open(Target::parse(url, &schema)?)?) };
    let (report, from_text, to_text) = if is_url(to) {
        let file = match from {
            Some(f) if is_url(f) => bail!(
                "--from {}: copying between two PostgreSQL databases is not supported; use pg_dump",
                hermes_postgres::redact_url(f)
            ),
            Some(f) => PathBuf::from(f),
            None => setup.home.state_db(),
        };
        if !file.exists() {
            bail!(
                "{} does not exist: there is nothing to migrate",
                file.display()
            );
        }
        let store = open(to)?;
        let report =
            hermes_postgres::copy_sqlite_to_postgres(&file, &store).with_context(|| {
                format!(
                    "migrating {} to {}",
                    file.display(),
                    store.target().describe()
                )
            })?;
        let home = file.parent().unwrap_or(std::path::Path::new("."));
        let documents = copy_documents(&HomeDocuments::new(home), &store)?;
        (
            (report, documents),
            file.display().to_string(),
            store.target().describe(),
        )
    } else {
        let url = match from {
            Some(f) if is_url(f) => f.to_owned(),
            Some(f) => bail!("--from {f}: give a postgresql:// URL when --to is a file"),
            None => match &configured {
                Some(StoreChoice::Postgres { url, .. }) => url.clone(),
                _ => bail!(
                    "no PostgreSQL database to copy from: pass --from postgresql://… or set \
                     sessiondb.provider: postgresql with sessiondb.url (or HERMES_DATABASE_URL)"
                ),
            },
        };
        let store = open(&url)?;
        let file = PathBuf::from(to);
        let report =
            hermes_postgres::copy_postgres_to_sqlite(&store, &file).with_context(|| {
                format!(
                    "migrating {} to {}",
                    store.target().describe(),
                    file.display()
                )
            })?;
        let home = file.parent().unwrap_or(std::path::Path::new("."));
        let documents = copy_documents(&store, &HomeDocuments::new(home))?;
        (
            (report, documents),
            store.target().describe(),
            file.display().to_string(),
        )
    };
    print(&report.0, &from_text, &to_text)?;
    if report.1 > 0 {
        writeln!(
            std::io::stdout(),
            "Copied {} cron and pairing files (read back the same).",
            report.1
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The cron jobs and outputs and the pairing files go with the sessions.
fn copy_documents(from: &dyn Documents, to: &dyn Documents) -> Result<usize> {
    documents::copy_all(from, to, documents::SHARED_FOLDERS)
        .context("copying the cron and pairing files")
}

fn print(r: &CopyReport, from: &str, to: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "Copied {} sessions, {} messages and {} usage rows from {from} to {to}.",
        r.sessions, r.messages, r.usage_rows
    )?;
    writeln!(
        out,
        "Verified: the target holds the same rows (checksum {}).",
        r.checksum
    )?;
    Ok(())
}
