//! `hermes sessions …`: list, show, search, export, delete, prune, archive, optimize,
//! repair, rename, stats.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use hermes_state::session_db::{ListFilter, SearchQuery, SearchSort, SessionDb, SessionSummary};
use hermes_state::store::{HistoryReader, SessionAdmin};
use hermes_state::{Env, HermesHome};

use crate::session_filters::FilterArgs;

/// `hermes sessions` arguments.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    #[command(subcommand)]
    action: SessionsAction,
}

#[derive(Debug, Subcommand)]
enum SessionsAction {
    /// List recent sessions.
    List {
        /// Only sessions from this source (cli, telegram, …).
        #[arg(long)]
        source: Option<String>,
        /// Most sessions to show.
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Show one session's messages.
    Show {
        /// Session id, unique id prefix, or title.
        session: String,
        /// Print the session as JSON (the export shape).
        #[arg(long)]
        json: bool,
    },
    /// Full-text search across all sessions (FTS5 syntax: phrases, prefix*, OR, NOT).
    Search {
        /// The query.
        query: String,
        /// Most hits to show.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Comma-separated roles to search (default: user,assistant).
        #[arg(long)]
        role: Option<String>,
        /// Ordering: relevance (default), newest or oldest.
        #[arg(long, default_value = "relevance")]
        sort: String,
    },
    /// Export sessions as JSONL (one session per line).
    Export(crate::sessions_export::ExportArgs),
    /// Delete a session and its messages.
    Delete {
        /// Session id, unique id prefix, or title.
        session_id: String,
        /// Skip confirmation.
        #[arg(short = 'y', long)]
        yes: bool,
    },
    /// Delete ended sessions matching the filters (a bare prune: older than 90 days).
    Prune {
        #[command(flatten)]
        filters: FilterArgs,
        /// Also delete archived sessions (left alone by default).
        #[arg(long = "include-archived")]
        include_archived: bool,
    },
    /// Archive (hide, delete nothing) the ended sessions matching the filters.
    Archive {
        #[command(flatten)]
        filters: FilterArgs,
    },
    /// Reclaim disk space: merge the search indexes and VACUUM (no data changes).
    Optimize,
    /// Pick a session on the terminal (type to filter) and resume it.
    Browse {
        /// Only sessions from this source.
        #[arg(long)]
        source: Option<String>,
        /// Most sessions to load.
        #[arg(long, default_value_t = 500)]
        limit: usize,
    },
    /// Check state.db and repair a malformed schema or search index (backup first).
    Repair {
        /// Only report whether the database opens cleanly.
        #[arg(long = "check-only")]
        check_only: bool,
        /// Skip the timestamped backup copy (not recommended).
        #[arg(long = "no-backup")]
        no_backup: bool,
    },
    /// Set or change a session's title.
    Rename {
        /// Session id, unique id prefix, or title.
        session_id: String,
        /// The new title.
        #[arg(required = true, num_args = 1..)]
        title: Vec<String>,
    },
    /// Show session store statistics.
    Stats,
    /// Copy every session between state.db and PostgreSQL (either way), then verify.
    Migrate {
        /// Where to: postgresql://USER:PASSWORD@HOST:PORT/DATABASE, or a state.db path.
        #[arg(long)]
        to: String,
        /// Where from (default: this home's state.db when copying to PostgreSQL; the
        /// configured sessiondb.url / HERMES_DATABASE_URL when copying to a file).
        #[arg(long)]
        from: Option<String>,
        /// The PostgreSQL schema (default: sessiondb.schema, else hermes).
        #[arg(long)]
        schema: Option<String>,
    },
}

/// Runs a `hermes sessions` action.
pub fn run(args: SessionsArgs) -> Result<ExitCode> {
    let env = Env::from_pairs(std::env::vars());
    let home = HermesHome::from_env(env.get("HERMES_HOME"), env.get("HOME"))
        .context("cannot locate the Hermes home: set HERMES_HOME or HOME")?;
    // Repair must look at the file before an open would try to fix it.
    if let SessionsAction::Repair {
        check_only,
        no_backup,
    } = args.action
    {
        return crate::sessions_bulk::repair(
            &home.state_db(),
            &mut std::io::stdout().lock(),
            check_only,
            no_backup,
        );
    }
    if let SessionsAction::Migrate { to, from, schema } = args.action {
        return crate::sessions_migrate::run(env, &to, from.as_deref(), schema.as_deref());
    }
    let setup =
        hermes_session::Setup::load(env.clone(), false).map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Ok(hermes_session::stores::StoreChoice::Postgres { url, schema }) =
        hermes_session::stores::choice(&setup)
    {
        return on_postgres(args.action, &url, &schema, home.root());
    }
    let mut db = SessionDb::open(&home.state_db())
        .with_context(|| format!("cannot open {}", home.state_db().display()))?;
    // Listing, exporting, deleting and bulk actions: the same calls as on PostgreSQL.
    let admin = hermes_session::store::SqliteStore::open(&home.state_db())?;
    let named = |key: &str| resolve(&db, key);
    let mut out = std::io::stdout().lock();
    match args.action {
        SessionsAction::List { source, limit } => list(&mut out, &page(&admin, source, limit)?)?,
        SessionsAction::Show {
            session,
            json: true,
        } => show_json(&mut out, &admin, &named(&session)?)?,
        SessionsAction::Show {
            session,
            json: false,
        } => show(&mut out, &db, &named(&session)?)?,
        SessionsAction::Search {
            query,
            limit,
            role,
            sort,
        } => search(&mut out, &db, query, limit, role, &sort)?,
        SessionsAction::Export(export) => {
            crate::sessions_export::export(&mut out, &admin, home.root(), &export, &named)?;
        }
        SessionsAction::Delete { session_id, yes } => {
            delete(&mut out, &admin, &named(&session_id)?, yes)?;
        }
        SessionsAction::Prune {
            filters,
            include_archived,
        } => crate::sessions_bulk::bulk(&admin, &mut out, &filters, true, include_archived)?,
        SessionsAction::Archive { filters } => {
            crate::sessions_bulk::bulk(&admin, &mut out, &filters, false, false)?;
        }
        SessionsAction::Optimize => crate::sessions_bulk::optimize(&mut db, &mut out)?,
        SessionsAction::Browse { source, limit } => {
            let rows = page(&admin, source, limit)?;
            db.close()?;
            return browse(&mut out, &rows);
        }
        // Handled above, before the database is opened.
        SessionsAction::Repair { .. } | SessionsAction::Migrate { .. } => {}
        SessionsAction::Rename { session_id, title } => {
            let id = named(&session_id)?;
            let title = title.join(" ");
            db.set_title(&id, &title)?;
            writeln!(out, "Session {id} is now titled \"{title}\".")?;
        }
        SessionsAction::Stats => {
            let size = std::fs::metadata(db.path()).map(|m| m.len()).unwrap_or(0);
            writeln!(out, "Sessions:  {}", db.session_count()?)?;
            writeln!(out, "Messages:  {}", db.message_count(None)?)?;
            writeln!(
                out,
                "Database:  {} ({:.1} MB)",
                db.path().display(),
                size as f64 / 1_048_576.0
            )?;
        }
    }
    db.close()?;
    Ok(ExitCode::SUCCESS)
}

/// A page of the session list, newest first (`list` and `browse`).
fn page(
    admin: &dyn SessionAdmin,
    source: Option<String>,
    limit: usize,
) -> Result<Vec<SessionSummary>> {
    Ok(admin.list_sessions(&ListFilter {
        source,
        limit,
        ..ListFilter::default()
    })?)
}

/// `hermes sessions show --json`: the session and its messages, every column.
fn show_json(out: &mut impl Write, admin: &dyn SessionAdmin, id: &str) -> Result<()> {
    let export = admin
        .export_session(id)?
        .with_context(|| format!("session {id} not found"))?;
    writeln!(out, "{}", serde_json::to_string_pretty(&export)?)?;
    Ok(())
}

/// `hermes sessions delete`, after a confirmation (or `--yes`).
fn delete(out: &mut impl Write, admin: &dyn SessionAdmin, id: &str, yes: bool) -> Result<()> {
    confirm(yes, &format!("Delete session {id} and all its messages?"))?;
    if admin.delete_session(id)? {
        writeln!(out, "Deleted session {id}.")?;
    }
    Ok(())
}

/// `hermes sessions browse`: pick one of `rows` and resume it in place.
fn browse(out: &mut impl Write, rows: &[SessionSummary]) -> Result<ExitCode> {
    if rows.is_empty() {
        writeln!(out, "No sessions yet. Start one with: hermes chat")?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(id) = crate::session_browser::pick(rows)? else {
        writeln!(out, "Cancelled.")?;
        return Ok(ExitCode::SUCCESS);
    };
    writeln!(out, "Resuming session: {id}")?;
    out.flush()?;
    resume_in_place(&id)
}

/// Replaces this process with `hermes --resume ID`, as the reference relaunches.
fn resume_in_place(id: &str) -> Result<ExitCode> {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().context("cannot find the hermes binary to relaunch")?;
    let err = std::process::Command::new(exe)
        .args(["--resume", id])
        .exec();
    Err(anyhow::anyhow!(err).context("cannot relaunch hermes to resume the session"))
}

/// `hermes sessions search`, on either store.
fn search(
    out: &mut impl Write,
    db: &dyn HistoryReader,
    query: String,
    limit: usize,
    role: Option<String>,
    sort: &str,
) -> Result<()> {
    let sort = match sort {
        "relevance" => SearchSort::Relevance,
        "newest" => SearchSort::Newest,
        "oldest" => SearchSort::Oldest,
        other => bail!("unknown --sort '{other}': use relevance, newest or oldest"),
    };
    let roles = role.unwrap_or_else(|| "user,assistant".into());
    let q = SearchQuery {
        limit,
        sort,
        role_filter: roles
            .split(',')
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty())
            .collect(),
        ..SearchQuery::new(query)
    };
    let hits = db.search(&q)?;
    if hits.is_empty() {
        writeln!(out, "No matches.")?;
    }
    for h in hits {
        let title = h.session_title.as_deref().unwrap_or("");
        writeln!(
            out,
            "{}  #{}  {:<9} {}  {}",
            h.session_id,
            h.message_id,
            h.role,
            title,
            one_line(&h.snippet, 100)
        )?;
    }
    Ok(())
}

/// The actions that work on a PostgreSQL store (`sessiondb.provider:
/// postgresql`); the others say how to get at the sessions.
fn on_postgres(
    action: SessionsAction,
    url: &str,
    schema: &str,
    home: &std::path::Path,
) -> Result<ExitCode> {
    use hermes_session::SessionStore;
    let store = hermes_postgres::PgStore::open(hermes_postgres::Target::parse(url, schema)?)?;
    let mut out = std::io::stdout().lock();
    let named = |key: &str| -> Result<String> {
        store.resolve(key)?.with_context(|| {
            format!("no session matches '{key}' (by id, id prefix or title). List them with: hermes sessions list")
        })
    };
    match action {
        SessionsAction::List { source, limit } => list(&mut out, &page(&store, source, limit)?)?,
        SessionsAction::Show {
            session,
            json: true,
        } => show_json(&mut out, &store, &named(&session)?)?,
        SessionsAction::Export(export) => {
            crate::sessions_export::export(&mut out, &store, home, &export, &named)?;
        }
        SessionsAction::Prune {
            filters,
            include_archived,
        } => crate::sessions_bulk::bulk(&store, &mut out, &filters, true, include_archived)?,
        SessionsAction::Archive { filters } => {
            crate::sessions_bulk::bulk(&store, &mut out, &filters, false, false)?;
        }
        SessionsAction::Browse { source, limit } => {
            return browse(&mut out, &page(&store, source, limit)?);
        }
        SessionsAction::Optimize => {
            store.vacuum_analyze()?;
            writeln!(
                out,
                "Vacuumed and analyzed the session tables in {}.",
                store.target().describe()
            )?;
        }
        SessionsAction::Delete { session_id, yes } => {
            delete(&mut out, &store, &named(&session_id)?, yes)?;
        }
        SessionsAction::Show {
            session,
            json: false,
        } => show(&mut out, &store, &named(&session)?)?,
        SessionsAction::Search {
            query,
            limit,
            role,
            sort,
        } => search(&mut out, &store, query, limit, role, &sort)?,
        SessionsAction::Rename { session_id, title } => {
            let id = named(&session_id)?;
            let title = title.join(" ");
            store.set_title(&id, &title)?;
            writeln!(out, "Session {id} is now titled \"{title}\".")?;
        }
        SessionsAction::Stats => {
            let (sessions, messages) = store.counts()?;
            writeln!(out, "Sessions:  {sessions}")?;
            writeln!(out, "Messages:  {messages}")?;
            writeln!(out, "Database:  {}", store.target().describe())?;
        }
        _ => bail!(
            "`hermes sessions repair` mends a state.db file; sessions live in PostgreSQL \
             (sessiondb.provider: postgresql), which keeps its own integrity"
        ),
    }
    Ok(ExitCode::SUCCESS)
}

fn resolve(db: &SessionDb, key: &str) -> Result<String> {
    if let Some(id) = db.resolve_session_id(key)? {
        return Ok(id);
    }
    if let Some(id) = db.resolve_by_title(key)? {
        return Ok(id);
    }
    bail!(
        "no session matches '{key}' (by id, id prefix or title). List them with: hermes sessions list"
    )
}

pub(crate) fn confirm(yes: bool, question: &str) -> Result<()> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        bail!("{question} Refusing without confirmation: pass --yes to proceed non-interactively");
    }
    let mut err = std::io::stderr();
    write!(err, "{question} [y/N] ")?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    if matches!(answer.trim(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        bail!("cancelled")
    }
}

fn list(out: &mut impl Write, rows: &[SessionSummary]) -> Result<()> {
    if rows.is_empty() {
        writeln!(out, "No sessions yet. Start one with: hermes chat")?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<24} {:<16} {:>5}  {:<32} PREVIEW",
        "ID", "LAST ACTIVE", "MSGS", "TITLE"
    )?;
    for r in rows {
        let title = r.title.as_deref().unwrap_or("—");
        writeln!(
            out,
            "{:<24} {:<16} {:>5}  {:<32} {}",
            r.id,
            format_time(r.last_active),
            r.message_count,
            one_line(title, 32),
            one_line(&r.preview, 60)
        )?;
    }
    Ok(())
}

fn show(out: &mut impl Write, db: &dyn HistoryReader, id: &str) -> Result<()> {
    let row = db
        .session_row(id)?
        .with_context(|| format!("session {id} not found"))?;
    writeln!(out, "Session:  {}", row.id)?;
    if let Some(t) = &row.title {
        writeln!(out, "Title:    {t}")?;
    }
    writeln!(out, "Model:    {}", row.model.as_deref().unwrap_or("?"))?;
    writeln!(out, "Started:  {}", format_time(row.started_at))?;
    writeln!(
        out,
        "Messages: {} ({} tool calls, {} API calls, {} in / {} out tokens)",
        row.message_count,
        row.tool_call_count,
        row.api_call_count,
        row.input_tokens,
        row.output_tokens
    )?;
    writeln!(out)?;
    for m in db.messages(id)? {
        let body = m.content.as_deref().unwrap_or("");
        match m.role.as_str() {
            "tool" => writeln!(
                out,
                "[tool {}] {}",
                m.tool_name.as_deref().unwrap_or("?"),
                one_line(body, 200)
            )?,
            "assistant" if m.tool_calls.is_some() => {
                if !body.is_empty() {
                    writeln!(out, "[assistant] {body}")?;
                }
                writeln!(
                    out,
                    "[assistant → tools] {}",
                    one_line(m.tool_calls.as_deref().unwrap_or(""), 200)
                )?;
            }
            role => writeln!(out, "[{role}] {body}")?,
        }
    }
    Ok(())
}

fn one_line(text: &str, max: usize) -> String {
    crate::render::preview(text, max)
}

/// `YYYY-MM-DD HH:MM` in UTC.
fn format_time(ts: f64) -> String {
    hermes_state::time::UtcTime::from_unix(ts as i64).short()
}
