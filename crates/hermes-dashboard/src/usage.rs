//! The usage page: tokens and cost per day and per model, and the busiest
//! sessions, summed by the store.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State as Extract};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::State;
use crate::api::{ApiResult, admin, blocking};

/// `?days=`.
#[derive(Deserialize)]
pub(crate) struct Range {
    days: Option<u32>,
}

/// Per-day or per-model sums.
#[derive(Default)]
struct Sum {
    sessions: i64,
    input: i64,
    output: i64,
    cost: f64,
}

impl Sum {
    fn add(&mut self, row: &hermes_state::session_db::UsageRow) {
        self.sessions += row.sessions;
        self.input += row.input_tokens;
        self.output += row.output_tokens;
        self.cost += row.cost_usd;
    }

    fn json(&self, key: &str, name: &str) -> Value {
        json!({key: name, "sessions": self.sessions, "input_tokens": self.input,
               "output_tokens": self.output, "cost_usd": self.cost})
    }
}

/// `GET /api/usage?days=30`: every day of the range (empty days as zeros).
pub(crate) async fn report(
    Extract(state): Extract<Arc<State>>,
    Query(range): Query<Range>,
) -> ApiResult {
    let admin = admin(&state)?;
    let days = range.days.unwrap_or(30).clamp(1, 366);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // From the start of the first day (UTC) of the range.
    let first = (now / 86_400).saturating_sub(u64::from(days) - 1) * 86_400;
    blocking(move || {
        let report = admin.usage_report(first as f64, 10)?;
        let mut by_day: BTreeMap<String, Sum> = (0..days)
            .map(|n| (day_name(first + u64::from(n) * 86_400), Sum::default()))
            .collect();
        let mut by_model: BTreeMap<String, Sum> = BTreeMap::new();
        for row in &report.rows {
            by_day.entry(row.day.clone()).or_default().add(row);
            let model = row.model.clone().unwrap_or_else(|| "(unknown)".to_owned());
            by_model.entry(model).or_default().add(row);
        }
        let mut models: Vec<(String, Sum)> = by_model.into_iter().collect();
        models.sort_by_key(|m| std::cmp::Reverse(m.1.input + m.1.output));
        Ok(Json(json!({
            "days": by_day.iter().map(|(d, s)| s.json("day", d)).collect::<Vec<_>>(),
            "models": models.iter().map(|(m, s)| s.json("model", m)).collect::<Vec<_>>(),
            "busiest": report.busiest,
        })))
    })
    .await
}

/// `YYYY-MM-DD` of a Unix time (UTC).
fn day_name(unix: u64) -> String {
    let t = hermes_state::time::UtcTime::from_unix(i64::try_from(unix).unwrap_or(0));
    format!("{:04}-{:02}-{:02}", t.year, t.month, t.day)
}
