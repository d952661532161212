//! The fact store's HRR side, as the reference computes it with numpy: a
//! vector per fact (its content and linked entities), a bank per category
//! (the bundle of its facts), and the structural queries — `probe` (facts
//! where an entity plays a role), `related` (facts sharing structure with
//! an entity), `reason` (facts where all of several entities play a role)
//! and `contradict` (facts about the same entities that say different
//! things). With no vectors to score, the first three fall back to search.

use std::collections::{BTreeSet, HashMap};

use rusqlite::{OptionalExtension, params};
use serde_json::{Value, json};

use super::{FactResult, FactStore, hrr, row_json, sql};

/// Above this many facts `contradict` compares only the most recently
/// updated ones (pairs grow quadratically).
const MAX_CONTRADICT_FACTS: usize = 500;

impl FactStore {
    /// A fact's category (empty when there is no such fact).
    pub(super) fn category_of(&self, fact_id: i64) -> FactResult<String> {
        let found: Option<Option<String>> = self
            .conn
            .query_row(
                "SELECT category FROM facts WHERE fact_id = ?1",
                [fact_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql)?;
        Ok(found
            .map(|c| c.unwrap_or_else(|| "general".to_owned()))
            .unwrap_or_default())
    }

    /// The canonical names of a fact's linked entities.
    fn entity_names(&self, fact_id: i64) -> FactResult<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT e.name FROM entities e JOIN fact_entities fe ON fe.entity_id = e.entity_id \
                 WHERE fe.fact_id = ?1",
            )
            .map_err(sql)?;
        let names = stmt.query_map([fact_id], |r| r.get(0)).map_err(sql)?;
        names.collect::<rusqlite::Result<_>>().map_err(sql)
    }

    /// Stores a fact's vector from its content and entities.
    pub(super) fn compute_vector(&self, fact_id: i64, content: &str) -> FactResult<()> {
        let entities = self.entity_names(fact_id)?;
        let vector = hrr::fact(content, &entities, self.settings.hrr_dim);
        self.conn
            .execute(
                "UPDATE facts SET hrr_vector = ?2 WHERE fact_id = ?1",
                params![fact_id, hrr::to_bytes(&vector)],
            )
            .map_err(sql)?;
        Ok(())
    }

    /// Rebuilds `cat:<category>` from its facts' vectors (dropped when none).
    pub(super) fn rebuild_bank(&self, category: &str) -> FactResult<()> {
        let bank = format!("cat:{category}");
        let vectors: Vec<hrr::Phases> = {
            let mut stmt = self
                .conn
                .prepare(
                    "SELECT hrr_vector FROM facts WHERE category = ?1 AND hrr_vector IS NOT NULL",
                )
                .map_err(sql)?;
            let rows = stmt
                .query_map([category], |r| r.get::<_, Vec<u8>>(0))
                .map_err(sql)?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(sql)?
                .iter()
                .map(|b| hrr::from_bytes(b))
                .collect()
        };
        if vectors.is_empty() {
            self.conn
                .execute("DELETE FROM memory_banks WHERE bank_name = ?1", [&bank])
                .map_err(sql)?;
            return Ok(());
        }
        let bundled = hrr::bundle(vectors.iter().map(Vec::as_slice));
        self.conn
            .execute(
                "INSERT INTO memory_banks (bank_name, vector, dim, fact_count, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, CURRENT_TIMESTAMP) ON CONFLICT(bank_name) DO UPDATE SET \
                 vector = excluded.vector, dim = excluded.dim, fact_count = excluded.fact_count, \
                 updated_at = excluded.updated_at",
                params![
                    bank,
                    hrr::to_bytes(&bundled),
                    i64::try_from(bundled.len()).unwrap_or(0),
                    i64::try_from(vectors.len()).unwrap_or(0)
                ],
            )
            .map_err(sql)?;
        Ok(())
    }

    /// Facts that have a vector of this store's length, with it.
    fn vector_rows(&self, category: Option<&str>) -> FactResult<Vec<(Value, hrr::Phases)>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT fact_id, content, category, tags, trust_score, retrieval_count, helpful_count, \
                 created_at, updated_at, hrr_vector FROM facts \
                 WHERE hrr_vector IS NOT NULL AND (?1 IS NULL OR category = ?1)",
            )
            .map_err(sql)?;
        let rows = stmt
            .query_map([category], |r| {
                Ok((row_json(r)?, hrr::from_bytes(&r.get::<_, Vec<u8>>(9)?)))
            })
            .map_err(sql)?;
        let dim = self.settings.hrr_dim;
        Ok(rows
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(sql)?
            .into_iter()
            .filter(|(_, v)| v.len() == dim)
            .collect())
    }

    /// The `limit` best rows by `similarity` (shifted to 0..1) × trust.
    fn ranked(
        rows: Vec<(Value, hrr::Phases)>,
        limit: usize,
        similarity: impl Fn(&Value, &[f64]) -> f64,
    ) -> Vec<Value> {
        let mut scored: Vec<(f64, Value)> = rows
            .into_iter()
            .map(|(mut row, vector)| {
                let trust = row["trust_score"].as_f64().unwrap_or(0.0);
                let score = (similarity(&row, &vector) + 1.0) / 2.0 * trust;
                row["score"] = json!(score);
                (score, row)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().take(limit).map(|(_, row)| row).collect()
    }

    /// Facts where `entity` plays a role: the category's bank unbound by
    /// the entity when a category is given, else each fact unbound and
    /// compared with its content.
    pub fn probe(
        &self,
        entity: &str,
        category: Option<&str>,
        limit: usize,
    ) -> FactResult<Vec<Value>> {
        let dim = self.settings.hrr_dim;
        let key = hrr::bind(
            &hrr::atom(&entity.to_lowercase(), dim),
            &hrr::atom(hrr::ROLE_ENTITY, dim),
        );
        if let Some(category) = category {
            let bank: Option<Vec<u8>> = self
                .conn
                .query_row(
                    "SELECT vector FROM memory_banks WHERE bank_name = ?1",
                    [format!("cat:{category}")],
                    |r| r.get(0),
                )
                .optional()
                .map_err(sql)?;
            if let Some(bank) = bank.map(|b| hrr::from_bytes(&b)).filter(|b| b.len() == dim) {
                let target = hrr::unbind(&bank, &key);
                let rows = self.vector_rows(Some(category))?;
                return Ok(Self::ranked(rows, limit, |_, v| {
                    hrr::similarity(&target, v)
                }));
            }
        }
        let rows = self.vector_rows(category)?;
        if rows.is_empty() {
            return Ok(self.search(entity, category, self.settings.min_trust_threshold, limit));
        }
        let role_content = hrr::atom(hrr::ROLE_CONTENT, dim);
        Ok(Self::ranked(rows, limit, |row, v| {
            let content = hrr::bind(
                &hrr::text(row["content"].as_str().unwrap_or(""), dim),
                &role_content,
            );
            hrr::similarity(&hrr::unbind(v, &key), &content)
        }))
    }

    /// Facts sharing structure with `entity` in either role.
    pub fn related(
        &self,
        entity: &str,
        category: Option<&str>,
        limit: usize,
    ) -> FactResult<Vec<Value>> {
        let rows = self.vector_rows(category)?;
        if rows.is_empty() {
            return Ok(self.search(entity, category, self.settings.min_trust_threshold, limit));
        }
        let dim = self.settings.hrr_dim;
        let atom = hrr::atom(&entity.to_lowercase(), dim);
        let roles = [
            hrr::atom(hrr::ROLE_ENTITY, dim),
            hrr::atom(hrr::ROLE_CONTENT, dim),
        ];
        Ok(Self::ranked(rows, limit, |_, v| {
            let residual = hrr::unbind(v, &atom);
            roles
                .iter()
                .map(|role| hrr::similarity(&residual, role))
                .fold(f64::NEG_INFINITY, f64::max)
        }))
    }

    /// Facts where every one of `entities` plays a role (the weakest decides).
    pub fn reason(
        &self,
        entities: &[&str],
        category: Option<&str>,
        limit: usize,
    ) -> FactResult<Vec<Value>> {
        let rows = self.vector_rows(category)?;
        if rows.is_empty() || entities.is_empty() {
            return Ok(self.search(
                &entities.join(" "),
                category,
                self.settings.min_trust_threshold,
                limit,
            ));
        }
        let dim = self.settings.hrr_dim;
        let role_entity = hrr::atom(hrr::ROLE_ENTITY, dim);
        let role_content = hrr::atom(hrr::ROLE_CONTENT, dim);
        let keys: Vec<hrr::Phases> = entities
            .iter()
            .map(|e| hrr::bind(&hrr::atom(&e.to_lowercase(), dim), &role_entity))
            .collect();
        Ok(Self::ranked(rows, limit, |_, v| {
            keys.iter()
                .map(|key| hrr::similarity(&hrr::unbind(v, key), &role_content))
                .fold(f64::INFINITY, f64::min)
        }))
    }

    /// Pairs of facts about the same entities (overlap ≥ 0.3) whose content
    /// differs: score = overlap × (1 − content similarity shifted to 0..1),
    /// kept at or above `threshold`, highest first.
    pub fn contradict(
        &self,
        category: Option<&str>,
        threshold: f64,
        limit: usize,
    ) -> FactResult<Vec<Value>> {
        let mut rows = self.vector_rows(category)?;
        if rows.len() < 2 {
            return Ok(Vec::new());
        }
        if rows.len() > MAX_CONTRADICT_FACTS {
            let stamp = |row: &Value| {
                row["updated_at"]
                    .as_str()
                    .or_else(|| row["created_at"].as_str())
                    .unwrap_or("")
                    .to_owned()
            };
            rows.sort_by_key(|(row, _)| std::cmp::Reverse(stamp(row)));
            rows.truncate(MAX_CONTRADICT_FACTS);
        }
        let mut entities: HashMap<i64, BTreeSet<String>> = HashMap::new();
        for (row, _) in &rows {
            let id = row["fact_id"].as_i64().unwrap_or(0);
            let names = self.entity_names(id)?;
            entities.insert(id, names.iter().map(|n| n.to_lowercase()).collect());
        }
        let mut found: Vec<(f64, Value)> = Vec::new();
        for (i, (a, va)) in rows.iter().enumerate() {
            for (b, vb) in &rows[i + 1..] {
                let (Some(ea), Some(eb)) = (
                    entities.get(&a["fact_id"].as_i64().unwrap_or(0)),
                    entities.get(&b["fact_id"].as_i64().unwrap_or(0)),
                ) else {
                    continue;
                };
                if ea.is_empty() || eb.is_empty() {
                    continue;
                }
                let shared: Vec<&String> = ea.intersection(eb).collect();
                let overlap = shared.len() as f64 / ea.union(eb).count() as f64;
                if overlap < 0.3 {
                    continue;
                }
                let content_sim = hrr::similarity(va, vb);
                let score = overlap * (1.0 - (content_sim + 1.0) / 2.0);
                if score >= threshold {
                    // The reference's pair rows carry no counters.
                    let bare = |row: &Value| {
                        let mut row = row.clone();
                        if let Some(map) = row.as_object_mut() {
                            map.remove("retrieval_count");
                            map.remove("helpful_count");
                        }
                        row
                    };
                    found.push((
                        score,
                        json!({
                            "fact_a": bare(a),
                            "fact_b": bare(b),
                            "entity_overlap": round3(overlap),
                            "content_similarity": round3(content_sim),
                            "contradiction_score": round3(score),
                            "shared_entities": shared,
                        }),
                    ));
                }
            }
        }
        found.sort_by(|x, y| y.0.total_cmp(&x.0));
        Ok(found.into_iter().take(limit).map(|(_, v)| v).collect())
    }
}

/// Rounded to three places, as the reference reports scores.
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
