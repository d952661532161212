//! `hermes sessions prune` / `archive` on the shared database: the same
//! filter state.db's bulk actions use (its conditions, with PostgreSQL's
//! placeholders and SQLite's LIKE), so both select the same sessions.

use hermes_state::session_db::{BulkCandidate, FilterValue, SessionFilter};
use postgres::types::ToSql;

use crate::error::{Ctx, PgError};
use crate::text::{dec, dec_opt, enc};

/// The filter's condition and values in PostgreSQL's terms: `$n`
/// placeholders, and LIKE as SQLite's (case-insensitive, no escape).
pub(crate) fn condition(filter: &SessionFilter) -> (String, Vec<Box<dyn ToSql + Sync + Send>>) {
    let (clause, values) = filter.conditions();
    let mut sql = String::with_capacity(clause.len() + 16);
    let mut n = 0;
    let mut rest = clause.as_str();
    while let Some(at) = rest.find('?') {
        n += 1;
        let head = &rest[..at];
        let like = head.ends_with(" LIKE ");
        if like {
            sql.push_str(&head[..head.len() - " LIKE ".len()]);
            sql.push_str(&format!(" ILIKE ${n} ESCAPE ''"));
        } else {
            sql.push_str(head);
            sql.push_str(&format!("${n}"));
        }
        rest = &rest[at + 1..];
    }
    sql.push_str(rest);
    let params = values
        .into_iter()
        .map(|v| -> Box<dyn ToSql + Sync + Send> {
            match v {
                FilterValue::Text(t) => Box::new(enc(&t).into_owned()),
                FilterValue::Real(r) => Box::new(r),
                FilterValue::Integer(i) => Box::new(i),
            }
        })
        .collect();
    (sql, params)
}

fn refs(params: &[Box<dyn ToSql + Sync + Send>]) -> Vec<&(dyn ToSql + Sync)> {
    params
        .iter()
        .map(|p| p.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

pub(crate) fn candidates(
    c: &mut impl postgres::GenericClient,
    filter: &SessionFilter,
) -> Result<Vec<BulkCandidate>, PgError> {
    let (clause, params) = condition(filter);
    let sql = format!(
        "SELECT s.id, s.source, s.title, s.model, s.started_at, s.ended_at, \
         COALESCE(s.message_count, 0) FROM sessions s WHERE {clause} ORDER BY s.started_at ASC"
    );
    Ok(c.query(&sql, &refs(&params))
        .ctx("selecting sessions")?
        .iter()
        .map(|r| BulkCandidate {
            id: dec(r.get(0)),
            source: dec(r.get(1)),
            title: dec_opt(r.get(2)),
            model: dec_opt(r.get(3)),
            started_at: r.get(4),
            ended_at: r.get(5),
            message_count: r.get(6),
        })
        .collect())
}

pub(crate) fn prune(c: &mut postgres::Client, filter: &SessionFilter) -> Result<usize, PgError> {
    const CTX: &str = "pruning sessions";
    let (clause, params) = condition(filter);
    let mut tx = c.transaction().ctx(CTX)?;
    let ids: Vec<String> = tx
        .query(
            &format!("SELECT s.id FROM sessions s WHERE {clause}"),
            &refs(&params),
        )
        .ctx(CTX)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    for id in &ids {
        tx.execute(
            "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = $1",
            &[id],
        )
        .ctx(CTX)?;
        tx.execute("DELETE FROM messages WHERE session_id = $1", &[id])
            .ctx(CTX)?;
        tx.execute(
            "DELETE FROM session_model_usage WHERE session_id = $1",
            &[id],
        )
        .ctx(CTX)?;
        tx.execute("DELETE FROM sessions WHERE id = $1", &[id])
            .ctx(CTX)?;
    }
    tx.commit().ctx(CTX)?;
    Ok(ids.len())
}

pub(crate) fn archive(c: &mut postgres::Client, filter: &SessionFilter) -> Result<usize, PgError> {
    const CTX: &str = "archiving sessions";
    let filter = SessionFilter {
        archived: Some(false),
        ..filter.clone()
    };
    let mut tx = c.transaction().ctx(CTX)?;
    let ids: Vec<String> = candidates(&mut tx, &filter)?
        .into_iter()
        .map(|c| enc(&c.id).into_owned())
        .collect();
    // Each with the sessions it continues, or that continue it, after compression.
    for id in &ids {
        tx.execute(
            "WITH RECURSIVE \
               up(id) AS (SELECT $1::text UNION SELECT p.id FROM up JOIN sessions c ON c.id = up.id \
                          JOIN sessions p ON p.id = c.parent_session_id \
                          WHERE p.end_reason = 'compression'), \
               down(id) AS (SELECT $1::text UNION SELECT c.id FROM down \
                            JOIN sessions p ON p.id = down.id \
                            JOIN sessions c ON c.parent_session_id = p.id \
                            WHERE p.end_reason = 'compression') \
             UPDATE sessions SET archived = 1 \
             WHERE id IN (SELECT id FROM up UNION SELECT id FROM down) AND archived != 1",
            &[id],
        )
        .ctx(CTX)?;
    }
    tx.commit().ctx(CTX)?;
    Ok(ids.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_and_like_is_sqlites() {
        let filter = SessionFilter {
            source: Some("cli".into()),
            title_like: Some("Plan".into()),
            min_messages: Some(2),
            ..SessionFilter::default()
        };
        let (sql, params) = condition(&filter);
        assert!(sql.contains("s.source = $1"), "{sql}");
        assert!(sql.contains("ILIKE $2 ESCAPE ''"), "{sql}");
        assert!(sql.contains("s.message_count >= $3"), "{sql}");
        assert!(!sql.contains('?'), "{sql}");
        assert_eq!(params.len(), 3);
    }
}
