//! Schema creation and in-place upgrade, following the reference's `_init_schema`:
//! `CREATE … IF NOT EXISTS` for every object, declarative column reconciliation
//! (`ALTER TABLE … ADD COLUMN` for whatever `PRAGMA table_info` lacks), then the
//! version-gated data migrations, then the FTS tables and triggers. Nothing is ever dropped
//! except the FTS indexes, which are rebuilt from `messages`.

use std::path::Path;

use rusqlite::Connection;

use super::error::DbError;
use super::{repair, schema};

/// What schema initialisation found out about the runtime.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FtsState {
    pub(crate) fts_enabled: bool,
    pub(crate) trigram_available: bool,
}

type Sql<T> = Result<T, rusqlite::Error>;

/// A table and its declared columns as `(name, type-and-constraints)`.
pub(crate) type TableColumns = (String, Vec<(String, String)>);

/// Expected columns per table, as `(table, [(column, type-and-constraints)])`, derived like the
/// reference does: run [`schema::SCHEMA_SQL`] in memory and read `PRAGMA table_info`.
pub(crate) fn expected_columns() -> Sql<Vec<TableColumns>> {
    let mem = Connection::open_in_memory()?;
    mem.execute_batch(schema::SCHEMA_SQL)?;
    let tables: Vec<String> = mem
        .prepare("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")?
        .query_map([], |r| r.get(0))?
        .collect::<Sql<_>>()?;
    let mut out = Vec::with_capacity(tables.len());
    for table in tables {
        let cols = table_info(&mem, &table)?
            .into_iter()
            .map(|c| {
                let mut parts = Vec::new();
                if !c.ty.is_empty() {
                    parts.push(c.ty);
                }
                if c.notnull && !c.pk {
                    parts.push("NOT NULL".to_owned());
                }
                if let Some(d) = c.default {
                    parts.push(format!("DEFAULT {d}"));
                }
                (c.name, parts.join(" "))
            })
            .collect();
        out.push((table, cols));
    }
    Ok(out)
}

struct ColumnInfo {
    name: String,
    ty: String,
    notnull: bool,
    default: Option<String>,
    pk: bool,
}

fn table_info(conn: &Connection, table: &str) -> Sql<Vec<ColumnInfo>> {
    conn.prepare("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?1)")?
        .query_map([table], |r| {
            Ok(ColumnInfo {
                name: r.get(0)?,
                ty: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                notnull: r.get::<_, i64>(2)? != 0,
                default: r.get(3)?,
                pk: r.get::<_, i64>(4)? != 0,
            })
        })?
        .collect()
}

/// Adds every declared column a live table lacks, with the reference's exact ALTER text (so
/// the stored `CREATE TABLE` matches a file the reference upgraded).
fn reconcile_columns(conn: &Connection) -> Sql<()> {
    for (table, declared) in expected_columns()? {
        let live: Vec<String> = table_info(conn, &table)?
            .into_iter()
            .map(|c| c.name)
            .collect();
        if live.is_empty() {
            continue;
        }
        for (col, ty) in declared {
            if live.iter().any(|l| l.eq_ignore_ascii_case(&col)) {
                continue;
            }
            let safe = col.replace('"', "\"\"");
            let sql = format!("ALTER TABLE \"{table}\" ADD COLUMN \"{safe}\" {ty}");
            // Like the reference: a failing ADD (a race, or a NOT NULL column SQLite refuses)
            // must not abort opening the database.
            let _ = conn.execute(&sql, []);
        }
    }
    Ok(())
}

fn fts5_available(conn: &Connection) -> Sql<bool> {
    match conn.execute_batch(
        "CREATE VIRTUAL TABLE temp._hermes_fts5_probe USING fts5(x); \
         DROP TABLE temp._hermes_fts5_probe;",
    ) {
        Ok(()) => Ok(true),
        Err(e) if e.to_string().contains("no such module") => Ok(false),
        Err(e) => Err(e),
    }
}

fn drop_fts_triggers(conn: &Connection) -> Sql<()> {
    for t in schema::FTS_TRIGGERS {
        conn.execute(&format!("DROP TRIGGER IF EXISTS {t}"), [])?;
    }
    Ok(())
}

fn fts_trigger_count(conn: &Connection) -> Sql<usize> {
    let names = schema::FTS_TRIGGERS.map(|s| format!("'{s}'")).join(",");
    conn.query_row(
        &format!("SELECT COUNT(*) FROM sqlite_master WHERE type='trigger' AND name IN ({names})"),
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| usize::try_from(n).unwrap_or(0))
}

/// Creates one FTS table (+ triggers, recreated when missing); false when the runtime lacks
/// FTS5 or the tokenizer.
fn ensure_fts(conn: &Connection, ddl: &str) -> Sql<bool> {
    match conn.execute_batch(ddl) {
        Ok(()) => Ok(true),
        Err(e) => {
            let msg = e.to_string();
            if msg.contains("no such module") || msg.contains("no such tokenizer") {
                Ok(false)
            } else {
                Err(e)
            }
        }
    }
}

/// Creates or upgrades the schema. Runs inside the caller's write transaction.
pub(crate) fn init_schema(conn: &Connection, db_path: &Path) -> Result<FtsState, DbError> {
    init(conn, db_path).map_err(|source| DbError::Sqlite {
        context: "creating or upgrading the schema",
        source,
    })
}

fn init(conn: &Connection, db_path: &Path) -> Sql<FtsState> {
    conn.execute_batch(schema::SCHEMA_SQL)?;
    reconcile_columns(conn)?;
    let _ = conn.execute(schema::PLATFORM_MSG_INDEX_SQL, []);
    conn.execute_batch(schema::DEFERRED_INDEX_SQL)?;
    // Rows written with active=NULL by older builds would be hidden from transcript loads.
    let _ = conn.execute("UPDATE messages SET active = 1 WHERE active IS NULL", []);

    let mut fts5 = fts5_available(conn)?;
    if !fts5 {
        drop_fts_triggers(conn)?;
    }
    let mut fts_complete = true;

    let version: Option<i64> = conn
        .query_row("SELECT version FROM schema_version LIMIT 1", [], |r| {
            r.get(0)
        })
        .ok();
    match version {
        None => {
            conn.execute(
                "INSERT INTO schema_version (version) VALUES (?1)",
                [schema::SCHEMA_VERSION],
            )?;
        }
        Some(current) => {
            if current < 11 {
                // v11: FTS switched from external-content to inline documents that also cover
                // tool_name + tool_calls. Drop the old tables and triggers; rebuild from rows.
                if fts5 {
                    drop_fts_triggers(conn)?;
                    for t in schema::FTS_TABLES {
                        if let Err(e) = conn.execute(&format!("DROP TABLE IF EXISTS {t}"), []) {
                            if !e.to_string().contains("no such") {
                                return Err(e);
                            }
                            fts5 = false;
                            fts_complete = false;
                            break;
                        }
                    }
                }
                if fts5 {
                    let base = ensure_fts(conn, schema::FTS_SQL)?;
                    if base {
                        repair::backfill(conn, "messages_fts")?;
                    } else {
                        fts_complete = false;
                    }
                    let tri = ensure_fts(conn, schema::FTS_TRIGRAM_SQL)?;
                    if tri {
                        repair::backfill(conn, "messages_fts_trigram")?;
                    }
                } else {
                    fts_complete = false;
                }
            }
            // The data migrations are best effort, as in the reference; each runs in a
            // savepoint so a failure leaves nothing half-done.
            if current < 16 {
                savepoint(conn, tag_delegate_children);
            }
            if current < 18 {
                savepoint(conn, |c| {
                    super::legacy::backfill_gateway_metadata(c, db_path)
                });
            }
            if current < 20 {
                savepoint(conn, |c| c.execute(SEED_MODEL_USAGE_SQL, []).map(|_| ()));
            }
            if current < 22 {
                savepoint(conn, rebuild_usage_table);
            }
            if current < schema::SCHEMA_VERSION && fts_complete {
                conn.execute(
                    "UPDATE schema_version SET version = ?1",
                    [schema::SCHEMA_VERSION],
                )?;
            }
        }
    }

    ensure_title_index(conn)?;

    let mut state = FtsState {
        fts_enabled: false,
        trigram_available: false,
    };
    if fts5 {
        let triggers_need_repair = fts_trigger_count(conn)? < schema::FTS_TRIGGERS.len();
        state.fts_enabled = ensure_fts(conn, schema::FTS_SQL)?;
        if state.fts_enabled {
            let tri = ensure_fts(conn, schema::FTS_TRIGRAM_SQL)?;
            state.trigram_available = tri;
            if triggers_need_repair {
                conn.execute("DELETE FROM messages_fts", [])?;
                repair::backfill(conn, "messages_fts")?;
                if tri {
                    conn.execute("DELETE FROM messages_fts_trigram", [])?;
                    repair::backfill(conn, "messages_fts_trigram")?;
                }
            }
        }
    }
    Ok(state)
}

/// Runs `f` in a savepoint, rolling it back (and ignoring the error) when it fails.
fn savepoint(conn: &Connection, f: impl FnOnce(&Connection) -> Sql<()>) {
    if conn.execute_batch("SAVEPOINT hermes_migration").is_err() {
        return;
    }
    if f(conn).is_ok() {
        let _ = conn.execute_batch("RELEASE hermes_migration");
    } else {
        let _ = conn.execute_batch("ROLLBACK TO hermes_migration; RELEASE hermes_migration");
    }
}

/// The unique title index; older files may hold duplicate titles, in which case every
/// session is kept and only the newest keeps the title.
fn ensure_title_index(conn: &Connection) -> Sql<()> {
    match conn.execute(schema::TITLE_INDEX_SQL, []) {
        Ok(_) => Ok(()),
        Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) => {
            conn.execute(
                "UPDATE sessions AS older SET title = NULL WHERE title IS NOT NULL AND EXISTS \
                 (SELECT 1 FROM sessions AS newer WHERE newer.title = older.title \
                  AND newer.rowid > older.rowid)",
                [],
            )?;
            conn.execute(schema::TITLE_INDEX_SQL, [])?;
            Ok(())
        }
        Err(_) => Ok(()),
    }
}

/// v16: mark delegate subagent rows so deleting a parent cascades to them.
fn tag_delegate_children(conn: &Connection) -> Sql<()> {
    conn.execute(
        &format!(
            "UPDATE sessions SET model_config = json_set(COALESCE(model_config, '{{}}'), \
             '$._delegate_from', parent_session_id) WHERE parent_session_id IS NOT NULL \
             AND json_extract(COALESCE(model_config, '{{}}'), '$._delegate_from') IS NULL AND {}",
            super::sql::ephemeral_child("sessions")
        ),
        [],
    )?;
    conn.execute(
        "UPDATE sessions SET model_config = json_set(COALESCE(model_config, '{}'), \
         '$._delegate_from', '__orphaned__') WHERE parent_session_id IS NULL \
         AND json_extract(COALESCE(model_config, '{}'), '$._delegate_from') IS NULL \
         AND json_extract(COALESCE(model_config, '{}'), '$._branched_from') IS NULL \
         AND title IS NULL AND message_count <= 25 \
         AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id AND m.role = 'tool') \
         AND NOT EXISTS (SELECT 1 FROM sessions ch WHERE ch.parent_session_id = sessions.id)",
        [],
    )?;
    Ok(())
}

/// v20: one usage row per historical session, from its aggregate counters.
const SEED_MODEL_USAGE_SQL: &str = "INSERT OR IGNORE INTO session_model_usage (session_id, model, \
    billing_provider, billing_base_url, billing_mode, api_call_count, input_tokens, output_tokens, \
    cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated_cost_usd, actual_cost_usd, \
    cost_status, cost_source, first_seen, last_seen) \
    SELECT id, COALESCE(model, 'unknown'), COALESCE(billing_provider, ''), \
    COALESCE(billing_base_url, ''), COALESCE(billing_mode, ''), COALESCE(api_call_count, 0), \
    COALESCE(input_tokens, 0), COALESCE(output_tokens, 0), COALESCE(cache_read_tokens, 0), \
    COALESCE(cache_write_tokens, 0), COALESCE(reasoning_tokens, 0), \
    COALESCE(estimated_cost_usd, 0), COALESCE(actual_cost_usd, 0), cost_status, cost_source, \
    started_at, COALESCE(ended_at, started_at) FROM sessions \
    WHERE COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0) + COALESCE(cache_read_tokens, 0) \
    + COALESCE(cache_write_tokens, 0) + COALESCE(reasoning_tokens, 0) > 0";

/// v22: `task` joins the usage primary key; SQLite cannot alter a key, so rebuild the table.
fn rebuild_usage_table(conn: &Connection) -> Sql<()> {
    let task_in_pk: i64 = conn.query_row(
        "SELECT COUNT(*) FROM pragma_table_info('session_model_usage') WHERE name = 'task' AND pk > 0",
        [],
        |r| r.get(0),
    )?;
    if task_in_pk > 0 {
        return Ok(());
    }
    conn.execute(
        "ALTER TABLE session_model_usage RENAME TO session_model_usage_v21",
        [],
    )?;
    conn.execute(schema::USAGE_V22_TABLE_SQL, [])?;
    conn.execute(
        "INSERT INTO session_model_usage (session_id, model, billing_provider, billing_base_url, \
         billing_mode, task, api_call_count, input_tokens, output_tokens, cache_read_tokens, \
         cache_write_tokens, reasoning_tokens, estimated_cost_usd, actual_cost_usd, cost_status, \
         cost_source, first_seen, last_seen) \
         SELECT session_id, model, billing_provider, billing_base_url, billing_mode, '', \
         api_call_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, \
         reasoning_tokens, estimated_cost_usd, actual_cost_usd, cost_status, cost_source, \
         first_seen, last_seen FROM session_model_usage_v21",
        [],
    )?;
    conn.execute("DROP TABLE session_model_usage_v21", [])?;
    conn.execute(
        "CREATE INDEX IF NOT EXISTS idx_session_model_usage_session ON session_model_usage(session_id)",
        [],
    )?;
    conn.execute(
        "CREATE INDEX IF NOT EXISTS idx_session_model_usage_model ON session_model_usage(model)",
        [],
    )?;
    Ok(())
}

#[cfg(test)]
#[path = "migrate_tests.rs"]
mod tests;
