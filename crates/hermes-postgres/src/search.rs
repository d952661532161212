//! Session search with FTS5's results: the sanitised FTS5 expression
//! (words, `"phrases"`, `prefix*`, `AND`/`OR`/`NOT`) becomes a `tsquery`
//! over words split and folded as `unicode61` splits and folds them; a word
//! query with no hits, and CJK terms of three or more characters, become
//! substring (`ILIKE`, on the `pg_trgm` index) queries as the trigram table
//! serves them; shorter CJK terms fall back to a plain `ILIKE` scan. Ranks
//! come from `ts_rank` (lower is better, like BM25's), not BM25 itself, so
//! pages ordered by relevance may differ from state.db's in order, not in
//! which messages match.

use hermes_state::session_db::{
    SearchHit, SearchQuery, SearchSort, StoredMessage, contains_cjk, content_text, count_cjk,
    fts5_terms, is_operator, like_escape, sanitize_fts5_query,
};
use postgres::types::ToSql;

use crate::error::{Ctx, PgError};
use crate::schema::DOC_EXPR;
use crate::store::PgStore;
use crate::text::{dec, dec_opt, enc};

/// Characters of context-message content kept in a hit.
const CONTEXT_CHARS: usize = 200;

/// Characters of a message `ts_headline` reads for a snippet.
const HEADLINE_CHARS: usize = 20_000;

/// A boolean combination of terms, as FTS5 reads them.
#[derive(Debug, Clone, PartialEq)]
enum Term {
    /// Words that must follow each other (one word: a plain term); the last
    /// one a prefix when `prefix`.
    Words { words: Vec<String>, prefix: bool },
    /// `AND`, `OR` or `NOT`.
    Op(&'static str),
}

/// Words as `unicode61` splits them: runs of letters and digits, lowercased.
fn words_of(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn terms(sanitized: &str) -> Vec<Term> {
    fts5_terms(sanitized)
        .into_iter()
        .filter_map(|t| {
            if is_operator(t) {
                let op = match t.to_ascii_uppercase().as_str() {
                    "OR" => "OR",
                    "NOT" => "NOT",
                    _ => "AND",
                };
                return Some(Term::Op(op));
            }
            let quoted = t.starts_with('"');
            let prefix = !quoted && t.ends_with('*');
            let words = words_of(t.trim_matches(|c| c == '"' || c == '*'));
            (!words.is_empty()).then_some(Term::Words { words, prefix })
        })
        .collect()
}

fn lexeme(word: &str) -> String {
    format!("'{}'", word.replace('\\', "\\\\").replace('\'', "''"))
}

/// The `tsquery` text of a sanitised FTS5 expression (`None`: nothing to
/// search). Adjacent terms are AND-ed; `a NOT b` is `a & !b`.
fn tsquery(sanitized: &str) -> Option<String> {
    let mut out = String::new();
    let mut pending: Option<&'static str> = None;
    for term in terms(sanitized) {
        match term {
            Term::Op(op) => pending = Some(op),
            Term::Words { words, prefix } => {
                let last = words.len() - 1;
                let parts: Vec<String> = words
                    .iter()
                    .enumerate()
                    .map(|(i, w)| {
                        if prefix && i == last {
                            format!("{}:*", lexeme(w))
                        } else {
                            lexeme(w)
                        }
                    })
                    .collect();
                let group = format!("({})", parts.join(" <-> "));
                if !out.is_empty() {
                    out.push_str(match pending.take() {
                        Some("OR") => " | ",
                        Some("NOT") => " & !",
                        _ => " & ",
                    });
                } else {
                    pending = None;
                }
                out.push_str(&group);
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// A substring query: each term a case-insensitive `ILIKE` on the message
/// text, joined by the expression's operators. `None` when a term is shorter
/// than three characters (the trigram table cannot match it) or none is left.
fn substring_terms(sanitized: &str) -> Option<Vec<(Option<&'static str>, String)>> {
    let mut out = Vec::new();
    let mut pending = None;
    for t in fts5_terms(sanitized) {
        if is_operator(t) {
            pending = Some(match t.to_ascii_uppercase().as_str() {
                "OR" => "OR",
                "NOT" => "NOT",
                _ => "AND",
            });
            continue;
        }
        let bare = t.trim_matches(|c| c == '"' || c == '*');
        if bare.chars().count() < 3 {
            return None;
        }
        out.push((pending.take(), bare.to_owned()));
    }
    (!out.is_empty()).then_some(out)
}

/// The filters every search path shares, numbered from `$first`.
fn filters(
    q: &SearchQuery,
    first: usize,
    params: &mut Vec<Box<dyn ToSql + Sync + Send>>,
) -> String {
    let mut sql = String::from(" AND (m.active = 1 OR m.compacted = 1)");
    let mut n = first;
    let mut list = |col: &str,
                    values: &[String],
                    sql: &mut String,
                    params: &mut Vec<Box<dyn ToSql + Sync + Send>>| {
        if !values.is_empty() {
            let marks: Vec<String> = values
                .iter()
                .map(|v| {
                    params.push(Box::new(enc(v).into_owned()));
                    let m = format!("${n}");
                    n += 1;
                    m
                })
                .collect();
            sql.push_str(&format!(" AND {col} IN ({})", marks.join(",")));
        }
    };
    list("s.source", &q.source_filter, &mut sql, params);
    list("m.role", &q.role_filter, &mut sql, params);
    if let Some(id) = &q.session_id {
        params.push(Box::new(enc(id).into_owned()));
        sql.push_str(&format!(" AND m.session_id = ${n}"));
    }
    sql
}

fn order_by(sort: SearchSort) -> &'static str {
    match sort {
        SearchSort::Relevance => "ORDER BY r, m.id",
        SearchSort::Newest => "ORDER BY m.timestamp DESC, m.id DESC",
        SearchSort::Oldest => "ORDER BY m.timestamp ASC, m.id ASC",
    }
}

fn hit(r: &postgres::Row) -> SearchHit {
    SearchHit {
        message_id: r.get(0),
        session_id: dec(r.get(1)),
        role: dec(r.get(2)),
        snippet: dec_opt(r.get(3)).unwrap_or_default(),
        timestamp: r.get(4),
        session_source: dec(r.get(5)),
        model: dec_opt(r.get(6)),
        session_title: dec_opt(r.get(7)),
        rank: r.get(8),
        context: Vec::new(),
    }
}

/// One page of matches of `matcher` (a condition on `m`, its parameters
/// first), with `snippet` as the snippet expression.
fn page(
    c: &mut postgres::Client,
    matcher: &str,
    rank: &str,
    snippet: &str,
    mut params: Vec<Box<dyn ToSql + Sync + Send>>,
    q: &SearchQuery,
) -> Result<Vec<SearchHit>, PgError> {
    let filter = filters(q, params.len() + 1, &mut params);
    let n = params.len();
    let limit = i64::try_from(q.limit).unwrap_or(i64::MAX);
    let offset = i64::try_from(q.offset).unwrap_or(i64::MAX);
    params.push(Box::new(limit));
    params.push(Box::new(offset));
    // The page is chosen first (sessions joined only when a filter needs
    // them); snippets and neighbours are made for its rows only, in the same
    // statement.
    let sessions = if q.source_filter.is_empty() {
        ""
    } else {
        " JOIN sessions s ON s.id = m.session_id"
    };
    let sql = format!(
        "WITH page AS (SELECT m.id, {rank} AS r FROM messages m{sessions} \
         WHERE {matcher}{filter} {} LIMIT ${} OFFSET ${}) \
         SELECT m.id, m.session_id, m.role, {snippet}, m.timestamp, s.source, s.model, s.title, \
         page.r, {CONTEXT} FROM page JOIN messages m ON m.id = page.id \
         JOIN sessions s ON s.id = m.session_id {}",
        order_by(q.sort),
        n + 1,
        n + 2,
        order_by(q.sort),
    );
    let refs: Vec<&(dyn ToSql + Sync)> = params
        .iter()
        .map(|p| p.as_ref() as &(dyn ToSql + Sync))
        .collect();
    Ok(c.query(&sql, &refs)
        .ctx("searching messages")?
        .iter()
        .map(|r| {
            let mut h = hit(r);
            h.context = context(r.get::<_, Option<String>>(9).as_deref());
            h
        })
        .collect())
}

/// The hit's neighbours as JSON: the message before (by timestamp, then
/// id), the hit, the message after.
const CONTEXT: &str = "(SELECT json_agg(c ORDER BY c.ord)::text FROM (\
     (SELECT 0 AS ord, b.id, b.session_id, b.role, b.content, b.tool_call_id, b.tool_calls, \
      b.tool_name, b.timestamp, b.token_count, b.finish_reason, b.reasoning FROM messages b \
      WHERE b.session_id = m.session_id AND (b.timestamp, b.id) < (m.timestamp, m.id) \
      ORDER BY b.timestamp DESC, b.id DESC LIMIT 1) \
     UNION ALL (SELECT 1, m.id, m.session_id, m.role, m.content, m.tool_call_id, m.tool_calls, \
      m.tool_name, m.timestamp, m.token_count, m.finish_reason, m.reasoning) \
     UNION ALL (SELECT 2, a.id, a.session_id, a.role, a.content, a.tool_call_id, a.tool_calls, \
      a.tool_name, a.timestamp, a.token_count, a.finish_reason, a.reasoning FROM messages a \
      WHERE a.session_id = m.session_id AND (a.timestamp, a.id) > (m.timestamp, m.id) \
      ORDER BY a.timestamp ASC, a.id ASC LIMIT 1)\
     ) c)";

/// Neighbour rows read from [`CONTEXT`]'s JSON, content cut to
/// [`CONTEXT_CHARS`] of its text.
fn context(json: Option<&str>) -> Vec<StoredMessage> {
    let rows: Vec<serde_json::Value> = json
        .and_then(|j| serde_json::from_str(j).ok())
        .unwrap_or_default();
    let text = |v: &serde_json::Value, k: &str| v[k].as_str().map(|s| dec(s.to_owned()));
    rows.iter()
        .map(|v| StoredMessage {
            id: v["id"].as_i64().unwrap_or(0),
            session_id: text(v, "session_id").unwrap_or_default(),
            role: text(v, "role").unwrap_or_default(),
            content: text(v, "content")
                .map(|c| content_text(&c).chars().take(CONTEXT_CHARS).collect()),
            tool_call_id: text(v, "tool_call_id"),
            tool_calls: text(v, "tool_calls"),
            tool_name: text(v, "tool_name"),
            timestamp: v["timestamp"].as_f64().unwrap_or(0.0),
            token_count: v["token_count"].as_i64(),
            finish_reason: text(v, "finish_reason"),
            reasoning: text(v, "reasoning"),
        })
        .collect()
}

fn word_page(
    c: &mut postgres::Client,
    expr: &str,
    q: &SearchQuery,
) -> Result<Vec<SearchHit>, PgError> {
    let query = "to_tsquery('simple', hermes_fold($1))";
    page(
        c,
        &format!("m.fts @@ {query}"),
        &format!("(-ts_rank(m.fts, {query}))::float8"),
        &format!(
            "ts_headline('simple', hermes_fold(left({doc}, {HEADLINE_CHARS})), {query}, \
             'StartSel=>>>, StopSel=<<<, MaxWords=40, MinWords=15, ShortWord=0, \
             FragmentDelimiter=...')",
            doc = DOC_EXPR.replace("COALESCE(", "COALESCE(m.")
        ),
        vec![Box::new(expr.to_owned())],
        q,
    )
}

fn substring_page(
    c: &mut postgres::Client,
    terms: &[(Option<&'static str>, String)],
    q: &SearchQuery,
) -> Result<Vec<SearchHit>, PgError> {
    let doc = DOC_EXPR.replace("COALESCE(", "COALESCE(m.");
    let mut matcher = String::from("(");
    let mut params: Vec<Box<dyn ToSql + Sync + Send>> = Vec::new();
    for (i, (op, term)) in terms.iter().enumerate() {
        if i > 0 {
            matcher.push_str(match op {
                Some("OR") => " OR ",
                Some("NOT") => " AND NOT ",
                _ => " AND ",
            });
        }
        params.push(Box::new(format!("%{}%", like_escape(&enc(term)))));
        matcher.push_str(&format!("{doc} ILIKE ${}", params.len()));
    }
    matcher.push(')');
    let first = params.len() + 1;
    params.push(Box::new(enc(&terms[0].1).into_owned()));
    let mut hits = page(
        c,
        &matcher,
        "0.0::float8",
        &format!("substr({doc}, greatest(1, strpos(lower({doc}), lower(${first})) - 40), 120)"),
        params,
        q,
    )?;
    for h in &mut hits {
        h.snippet = mark(&h.snippet, &terms[0].1);
    }
    Ok(hits)
}

/// `text` with the case-insensitive occurrences of `term` between `>>>` and `<<<`.
fn mark(text: &str, term: &str) -> String {
    let lower_text: Vec<(usize, char)> = text.char_indices().collect();
    let needle: Vec<char> = term.chars().flat_map(char::to_lowercase).collect();
    if needle.is_empty() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 12);
    let mut i = 0;
    while i < lower_text.len() {
        let matched = (0..needle.len()).all(|k| {
            lower_text
                .get(i + k)
                .is_some_and(|(_, c)| c.to_lowercase().eq(std::iter::once(needle[k])))
        });
        if matched {
            let start = lower_text[i].0;
            let end = lower_text
                .get(i + needle.len())
                .map_or(text.len(), |(b, _)| *b);
            out.push_str(">>>");
            out.push_str(&text[start..end]);
            out.push_str("<<<");
            i += needle.len();
        } else {
            out.push(lower_text[i].1);
            i += 1;
        }
    }
    out
}

impl PgStore {
    /// Searches message text, tool names and tool-call arguments, as
    /// `SessionDb::search` does on state.db: at most `q.limit` hits after
    /// `q.offset`, each with a `>>>match<<<` snippet and its neighbours.
    pub fn search(&self, q: &SearchQuery) -> Result<Vec<SearchHit>, PgError> {
        let q = q.clone();
        self.with(move |c| search(c, &q))
    }
}

fn search(c: &mut postgres::Client, q: &SearchQuery) -> Result<Vec<SearchHit>, PgError> {
    let raw = q.query.replace('\0', " ");
    if raw.trim().is_empty() || q.limit == 0 {
        return Ok(Vec::new());
    }
    let query = sanitize_fts5_query(&raw);
    if query.is_empty() {
        return Ok(Vec::new());
    }
    if contains_cjk(&query) {
        return search_cjk(c, &query, q);
    }
    let Some(expr) = tsquery(&query) else {
        return Ok(Vec::new());
    };
    let hits = word_page(c, &expr, q)?;
    if !hits.is_empty() {
        return Ok(hits);
    }
    // Substring fallback, only when the words match nothing at all.
    if q.offset > 0 {
        let probe = SearchQuery {
            limit: 1,
            offset: 0,
            ..q.clone()
        };
        if !word_page(c, &expr, &probe)?.is_empty() {
            return Ok(hits);
        }
    }
    match substring_terms(&query) {
        Some(terms) => substring_page(c, &terms, q),
        None => Ok(hits),
    }
}

fn search_cjk(
    c: &mut postgres::Client,
    query: &str,
    q: &SearchQuery,
) -> Result<Vec<SearchHit>, PgError> {
    let raw = query.trim_matches('"').trim();
    let short_term = raw
        .split_whitespace()
        .filter(|t| !is_operator(t) && contains_cjk(t))
        .any(|t| count_cjk(t) < 3);
    if count_cjk(raw) >= 3
        && !short_term
        && let Some(terms) = substring_terms(raw)
    {
        return substring_page(c, &terms, q);
    }
    // Short CJK terms: any of them, anywhere, newest first.
    let mut terms: Vec<&str> = raw.split_whitespace().filter(|t| !is_operator(t)).collect();
    if terms.is_empty() {
        terms.push(raw);
    }
    let doc = "m.content";
    let mut params: Vec<Box<dyn ToSql + Sync + Send>> = Vec::new();
    let mut clauses = Vec::new();
    for t in &terms {
        params.push(Box::new(format!("%{}%", like_escape(&enc(t)))));
        let n = params.len();
        clauses.push(format!(
            "(m.content ILIKE ${n} OR m.tool_name ILIKE ${n} OR m.tool_calls ILIKE ${n})"
        ));
    }
    let first = params.len() + 1;
    params.push(Box::new(enc(terms[0]).into_owned()));
    let newest = SearchQuery {
        sort: SearchSort::Newest,
        ..q.clone()
    };
    page(
        c,
        &format!("({})", clauses.join(" OR ")),
        "0.0::float8",
        &format!("substr({doc}, greatest(1, strpos({doc}, ${first}) - 40), 120)"),
        params,
        &newest,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fts5_expressions_become_tsqueries() {
        let t = |q: &str| tsquery(&sanitize_fts5_query(q));
        assert_eq!(
            t("deploy server").as_deref(),
            Some("('deploy') & ('server')")
        );
        assert_eq!(
            t("deploy OR ship").as_deref(),
            Some("('deploy') | ('ship')")
        );
        assert_eq!(
            t("deploy NOT staging").as_deref(),
            Some("('deploy') & !('staging')")
        );
        assert_eq!(t("depl*").as_deref(), Some("('depl':*)"));
        assert_eq!(
            t("\"Chat Send\" P2.2").as_deref(),
            Some("('chat' <-> 'send') & ('p2' <-> '2')")
        );
        assert_eq!(t("it's").as_deref(), Some("('it' <-> 's')"));
        assert_eq!(t("   "), None);
    }

    #[test]
    fn substring_queries_need_three_characters() {
        assert_eq!(
            substring_terms("egra OR \"bot token\""),
            Some(vec![
                (None, "egra".to_owned()),
                (Some("OR"), "bot token".to_owned())
            ])
        );
        assert_eq!(substring_terms("eg"), None);
        assert_eq!(
            mark("Hello TeleGram bot", "egra"),
            "Hello Tel>>>eGra<<<m bot"
        );
    }
}
