//! The holographic provider's fact store: `memory_store.db`, the reference's
//! schema (facts with trust scores, entities, an external-content FTS5 index
//! kept by triggers, per-category banks), so a store the reference wrote
//! opens here and the other way round.
//!
//! Retrieval is the reference's with its HRR algebra (numpy installed):
//! each fact keeps a phase vector (`hrr_vector`) and each category a bank;
//! search weighs FTS5 rank, token overlap and vector similarity 0.4/0.3/
//! `hrr_weight`, times trust (and an optional age decay); probe, related,
//! reason and contradict work on the vectors (`facts_vectors.rs`). A fact
//! without a vector (written by the reference without numpy) counts as
//! neutral until it is next updated.

use std::collections::HashSet;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::hrr;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

/// The categories the tool's schema offers.
pub const CATEGORIES: [&str; 4] = ["user_pref", "project", "tool", "general"];

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS facts (
    fact_id INTEGER PRIMARY KEY AUTOINCREMENT, content TEXT NOT NULL UNIQUE,
    category TEXT DEFAULT 'general', tags TEXT DEFAULT '', trust_score REAL DEFAULT 0.5,
    retrieval_count INTEGER DEFAULT 0, helpful_count INTEGER DEFAULT 0,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    hrr_vector BLOB);
CREATE TABLE IF NOT EXISTS entities (
    entity_id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL,
    entity_type TEXT DEFAULT 'unknown', aliases TEXT DEFAULT '',
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE IF NOT EXISTS fact_entities (
    fact_id INTEGER REFERENCES facts(fact_id), entity_id INTEGER REFERENCES entities(entity_id),
    PRIMARY KEY (fact_id, entity_id));
CREATE INDEX IF NOT EXISTS idx_facts_trust ON facts(trust_score DESC);
CREATE INDEX IF NOT EXISTS idx_facts_category ON facts(category);
CREATE INDEX IF NOT EXISTS idx_entities_name ON entities(name);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(content, tags, content=facts, content_rowid=fact_id);
CREATE TRIGGER IF NOT EXISTS facts_ai AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts(rowid, content, tags) VALUES (new.fact_id, new.content, new.tags);
END;
CREATE TRIGGER IF NOT EXISTS facts_ad AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, content, tags) VALUES ('delete', old.fact_id, old.content, old.tags);
END;
CREATE TRIGGER IF NOT EXISTS facts_au AFTER UPDATE ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, content, tags) VALUES ('delete', old.fact_id, old.content, old.tags);
    INSERT INTO facts_fts(rowid, content, tags) VALUES (new.fact_id, new.content, new.tags);
END;
CREATE TABLE IF NOT EXISTS memory_banks (
    bank_id INTEGER PRIMARY KEY AUTOINCREMENT, bank_name TEXT NOT NULL UNIQUE, vector BLOB NOT NULL,
    dim INTEGER NOT NULL, fact_count INTEGER DEFAULT 0, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
";

const STOPWORDS: &str = "a about above after again all am an and any are as at be because been before being between both but by can could did do does doing don down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these they this those through to too under until up very was we were what when where which while who whom why will with would you your yours yourself yourselves";

const PUNCTUATION: &[char] = &[
    '.', ',', ';', ':', '!', '?', '"', '\'', '(', ')', '[', ']', '{', '}', '#', '@', '<', '>',
];

/// Errors of the fact store: a message the tool returns as is.
pub type FactResult<T> = Result<T, String>;

/// Settings of `plugins.hermes-memory-store` that the store uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FactSettings {
    /// Trust of a new fact.
    pub default_trust: f64,
    /// Below this trust a fact is not recalled by search or prefetch.
    pub min_trust_threshold: f64,
    /// Days for a fact's score to halve (0: no decay).
    pub temporal_decay_half_life: f64,
    /// Length of the HRR vectors.
    pub hrr_dim: usize,
    /// Weight of vector similarity in search (0: keyword only, 0.6/0.4).
    pub hrr_weight: f64,
}

impl Default for FactSettings {
    fn default() -> Self {
        Self {
            default_trust: 0.5,
            min_trust_threshold: 0.3,
            temporal_decay_half_life: 0.0,
            hrr_dim: 1024,
            hrr_weight: 0.3,
        }
    }
}

/// An open fact store.
#[derive(Debug)]
pub struct FactStore {
    conn: Connection,
    settings: FactSettings,
}

fn sql(e: rusqlite::Error) -> String {
    e.to_string()
}

impl FactStore {
    /// Opens (creating) the store at `path`.
    pub fn open(path: &Path, settings: FactSettings) -> FactResult<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        }
        let conn = Connection::open(path).map_err(sql)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(sql)?;
        let _ = conn.pragma_update(None, "journal_mode", "WAL");
        conn.execute_batch(SCHEMA).map_err(sql)?;
        Ok(Self { conn, settings })
    }

    /// Facts stored.
    pub fn count(&self) -> i64 {
        self.conn
            .query_row("SELECT COUNT(*) FROM facts", [], |r| r.get(0))
            .unwrap_or(0)
    }

    /// Adds a fact (an existing identical one keeps its id and fields).
    pub fn add(&self, content: &str, category: &str, tags: &str) -> FactResult<i64> {
        let content = content.trim();
        if content.is_empty() {
            return Err("content must not be empty".into());
        }
        let existing: Option<i64> = self
            .conn
            .query_row(
                "SELECT fact_id FROM facts WHERE content = ?1",
                [content],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql)?;
        if let Some(id) = existing {
            return Ok(id);
        }
        self.conn
            .execute(
                "INSERT INTO facts (content, category, tags, trust_score) VALUES (?1, ?2, ?3, ?4)",
                params![content, category, tags, self.settings.default_trust],
            )
            .map_err(sql)?;
        let id = self.conn.last_insert_rowid();
        self.link_entities(id, content)?;
        self.compute_vector(id, content)?;
        self.rebuild_bank(category)?;
        Ok(id)
    }

    fn link_entities(&self, fact_id: i64, content: &str) -> FactResult<()> {
        for name in extract_entities(content) {
            let entity = self.resolve_entity(&name)?;
            self.conn
                .execute(
                    "INSERT OR IGNORE INTO fact_entities (fact_id, entity_id) VALUES (?1, ?2)",
                    params![fact_id, entity],
                )
                .map_err(sql)?;
        }
        Ok(())
    }

    fn resolve_entity(&self, name: &str) -> FactResult<i64> {
        let found: Option<i64> = self
            .conn
            .query_row(
                "SELECT entity_id FROM entities WHERE name LIKE ?1 \
                 OR (',' || aliases || ',') LIKE ('%,' || ?1 || ',%') LIMIT 1",
                [name],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql)?;
        if let Some(id) = found {
            return Ok(id);
        }
        self.conn
            .execute("INSERT INTO entities (name) VALUES (?1)", [name])
            .map_err(sql)?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The best facts for `query`: `{"results": [...], "count": n}` rows with
    /// `fts_rank` and `score`.
    pub fn search(
        &self,
        query: &str,
        category: Option<&str>,
        min_trust: f64,
        limit: usize,
    ) -> Vec<Value> {
        let Ok(candidates) = self.fts_candidates(query, category, min_trust, limit * 3) else {
            return Vec::new();
        };
        let worst = candidates
            .iter()
            .map(|(_, rank, _)| rank.abs())
            .fold(1e-6_f64, f64::max);
        let query_tokens = tokenize(query);
        let hrr_weight = self.settings.hrr_weight.max(0.0);
        let query_vector = (hrr_weight > 0.0).then(|| hrr::text(query, self.settings.hrr_dim));
        let mut scored: Vec<(f64, Value)> = candidates
            .into_iter()
            .map(|(mut row, rank, vector)| {
                let fts_rank = rank.abs() / worst;
                let mut words = tokenize(row["content"].as_str().unwrap_or(""));
                words.extend(tokenize(row["tags"].as_str().unwrap_or("")));
                let overlap = jaccard(&query_tokens, &words);
                let vector_sim = match (&query_vector, vector) {
                    (Some(q), Some(v)) if v.len() == q.len() => {
                        (hrr::similarity(q, &v) + 1.0) / 2.0
                    }
                    _ => 0.5,
                };
                let relevance = 0.4 * fts_rank + 0.3 * overlap + hrr_weight * vector_sim;
                let trust = row["trust_score"].as_f64().unwrap_or(0.0);
                let score = relevance * trust * self.decay(&row);
                row["fts_rank"] = json!(fts_rank);
                row["score"] = json!(score);
                (score, row)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().take(limit).map(|(_, row)| row).collect()
    }

    fn fts_candidates(
        &self,
        query: &str,
        category: Option<&str>,
        min_trust: f64,
        limit: usize,
    ) -> rusqlite::Result<Vec<(Value, f64, Option<hrr::Phases>)>> {
        let matcher = fts_query(query);
        let mut stmt = self.conn.prepare(
            "SELECT f.fact_id, f.content, f.category, f.tags, f.trust_score, f.retrieval_count, \
             f.helpful_count, f.created_at, f.updated_at, facts_fts.rank, f.hrr_vector \
             FROM facts_fts JOIN facts f ON f.fact_id = facts_fts.rowid \
             WHERE facts_fts MATCH ?1 AND (?2 IS NULL OR f.category = ?2) AND f.trust_score >= ?3 \
             ORDER BY facts_fts.rank LIMIT ?4",
        )?;
        let rows = stmt.query_map(
            params![
                matcher,
                category,
                min_trust,
                i64::try_from(limit).unwrap_or(30)
            ],
            |r| {
                let vector = r.get::<_, Option<Vec<u8>>>(10)?;
                Ok((
                    row_json(r)?,
                    r.get::<_, f64>(9)?,
                    vector.map(|b| hrr::from_bytes(&b)),
                ))
            },
        )?;
        rows.collect()
    }

    fn decay(&self, row: &Value) -> f64 {
        let half_life = self.settings.temporal_decay_half_life;
        if half_life <= 0.0 {
            return 1.0;
        }
        let stamp = row["updated_at"]
            .as_str()
            .or_else(|| row["created_at"].as_str())
            .unwrap_or("");
        let Some(at) = hermes_protocol::iso_time::IsoTimestamp::parse(stamp).map(|t| t.unix_secs())
        else {
            return 1.0;
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
        let age_days = (now - at) as f64 / 86_400.0;
        if age_days < 0.0 {
            return 1.0;
        }
        0.5_f64.powf(age_days / half_life)
    }

    /// Facts at or above `min_trust`, most trusted first.
    pub fn list(
        &self,
        category: Option<&str>,
        min_trust: f64,
        limit: usize,
    ) -> FactResult<Vec<Value>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT fact_id, content, category, tags, trust_score, retrieval_count, helpful_count, \
                 created_at, updated_at FROM facts WHERE trust_score >= ?1 \
                 AND (?2 IS NULL OR category = ?2) ORDER BY trust_score DESC LIMIT ?3",
            )
            .map_err(sql)?;
        let rows = stmt
            .query_map(
                params![min_trust, category, i64::try_from(limit).unwrap_or(10)],
                row_json,
            )
            .map_err(sql)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(sql)
    }

    /// Changes a fact; `false` when there is no such fact.
    pub fn update(
        &self,
        fact_id: i64,
        content: Option<&str>,
        trust_delta: Option<f64>,
        tags: Option<&str>,
        category: Option<&str>,
    ) -> FactResult<bool> {
        let Some(trust) = self.trust_of(fact_id)? else {
            return Ok(false);
        };
        let content = content.map(str::trim);
        let old_category = self.category_of(fact_id)?;
        let trust = trust_delta.map_or(trust, |d| (trust + d).clamp(0.0, 1.0));
        self.conn
            .execute(
                "UPDATE facts SET content = COALESCE(?2, content), trust_score = ?3, \
                 tags = COALESCE(?4, tags), category = COALESCE(?5, category), \
                 updated_at = CURRENT_TIMESTAMP WHERE fact_id = ?1",
                params![fact_id, content, trust, tags, category],
            )
            .map_err(sql)?;
        if let Some(content) = content {
            self.conn
                .execute("DELETE FROM fact_entities WHERE fact_id = ?1", [fact_id])
                .map_err(sql)?;
            self.link_entities(fact_id, content)?;
            self.compute_vector(fact_id, content)?;
        }
        for bank in [Some(old_category), category.map(str::to_owned)]
            .into_iter()
            .flatten()
        {
            self.rebuild_bank(&bank)?;
        }
        Ok(true)
    }

    fn trust_of(&self, fact_id: i64) -> FactResult<Option<f64>> {
        self.conn
            .query_row(
                "SELECT trust_score FROM facts WHERE fact_id = ?1",
                [fact_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql)
    }

    /// Removes a fact and its entity links; `false` when there was none.
    pub fn remove(&self, fact_id: i64) -> FactResult<bool> {
        let category = self.category_of(fact_id)?;
        self.conn
            .execute("DELETE FROM fact_entities WHERE fact_id = ?1", [fact_id])
            .map_err(sql)?;
        let removed = self
            .conn
            .execute("DELETE FROM facts WHERE fact_id = ?1", [fact_id])
            .map_err(sql)?;
        self.rebuild_bank(&category)?;
        Ok(removed > 0)
    }

    /// Rates a fact: helpful +0.05 (and counted), unhelpful −0.10.
    pub fn feedback(&self, fact_id: i64, helpful: bool) -> FactResult<Value> {
        let Some(old) = self.trust_of(fact_id)? else {
            return Err(format!("'fact_id {fact_id} not found'"));
        };
        let new = (old + if helpful { 0.05 } else { -0.10 }).clamp(0.0, 1.0);
        self.conn
            .execute(
                "UPDATE facts SET trust_score = ?2, helpful_count = helpful_count + ?3, \
                 updated_at = CURRENT_TIMESTAMP WHERE fact_id = ?1",
                params![fact_id, new, i64::from(helpful)],
            )
            .map_err(sql)?;
        let count: i64 = self
            .conn
            .query_row(
                "SELECT helpful_count FROM facts WHERE fact_id = ?1",
                [fact_id],
                |r| r.get(0),
            )
            .map_err(sql)?;
        Ok(json!({"fact_id": fact_id, "old_trust": old, "new_trust": new, "helpful_count": count}))
    }
}

fn row_json(r: &rusqlite::Row<'_>) -> rusqlite::Result<Value> {
    Ok(json!({
        "fact_id": r.get::<_, i64>(0)?,
        "content": r.get::<_, String>(1)?,
        "category": r.get::<_, Option<String>>(2)?,
        "tags": r.get::<_, Option<String>>(3)?,
        "trust_score": r.get::<_, f64>(4)?,
        "retrieval_count": r.get::<_, i64>(5)?,
        "helpful_count": r.get::<_, i64>(6)?,
        "created_at": r.get::<_, Option<String>>(7)?,
        "updated_at": r.get::<_, Option<String>>(8)?,
    }))
}

/// Lower-cased words with their punctuation stripped.
fn tokenize(text: &str) -> HashSet<String> {
    text.to_lowercase()
        .split_whitespace()
        .map(|w| w.trim_matches(PUNCTUATION).to_owned())
        .filter(|w| !w.is_empty())
        .collect()
}

fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// The query's meaningful words as an FTS5 OR of phrases (the raw query when none remain).
fn fts_query(query: &str) -> String {
    static STOP: LazyLock<HashSet<&'static str>> = LazyLock::new(|| STOPWORDS.split(' ').collect());
    let words: Vec<String> = query
        .to_lowercase()
        .split_whitespace()
        .map(|w| {
            w.trim_matches(PUNCTUATION)
                .chars()
                .filter(|c| !"\"()*^:-+".contains(*c))
                .collect::<String>()
        })
        .filter(|w| w.chars().count() >= 2 && !STOP.contains(w.as_str()))
        .map(|w| format!("\"{w}\""))
        .collect();
    if words.is_empty() {
        query.to_owned()
    } else {
        words.join(" OR ")
    }
}

/// Names in a fact: runs of Capitalised Words, quoted text, and `X aka Y`.
pub fn extract_entities(text: &str) -> Vec<String> {
    static PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        [
            r"\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)+)\b",
            r#""([^"]+)""#,
            r"'([^']+)'",
            r"(?i)(\w+(?:\s+\w+)*)\s+(?:aka|also known as)\s+(\w+(?:\s+\w+)*)",
        ]
        .iter()
        .filter_map(|p| Regex::new(p).ok())
        .collect()
    });
    let mut seen = HashSet::new();
    let mut names = Vec::new();
    for pattern in PATTERNS.iter() {
        for caps in pattern.captures_iter(text) {
            for group in caps.iter().skip(1).flatten() {
                let name = group.as_str().trim();
                if !name.is_empty() && seen.insert(name.to_lowercase()) {
                    names.push(name.to_owned());
                }
            }
        }
    }
    names
}

#[path = "facts_vectors.rs"]
mod vectors;

#[cfg(test)]
#[path = "facts_tests.rs"]
mod tests;
