//! The search APIs, each asked the way the reference (or its vendor SDK)
//! asks it, and their answers mapped to one list of hits.

use std::time::Duration;

use serde_json::{Value, json};

use super::Hit;
use crate::http::json_of;
use crate::settings::{Backend, Keys};
use crate::vendors::{self, results, text};

fn joined(v: &Value) -> String {
    v.as_array()
        .map(|parts| parts.iter().map(text).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Searches `backend` for `query`; up to `limit` hits.
pub async fn search(
    http: &reqwest::Client,
    keys: &Keys,
    backend: Backend,
    query: &str,
    limit: usize,
) -> Result<Vec<Hit>, String> {
    let hits = match backend {
        Backend::Searxng => searxng(http, keys, query).await?,
        Backend::Brave => brave(http, keys, query, limit).await?,
        Backend::Tavily => tavily(http, keys, query, limit).await?,
        Backend::Exa => exa(http, keys, query, limit).await?,
        Backend::Parallel => parallel(http, keys, query, limit).await?,
        Backend::Firecrawl => firecrawl(http, keys, query, limit).await?,
        Backend::Ddgs => super::ddg::search(http, keys, query, limit).await?,
    };
    Ok(hits.into_iter().take(limit).collect())
}

async fn searxng(http: &reqwest::Client, keys: &Keys, query: &str) -> Result<Vec<Hit>, String> {
    let base = keys
        .searxng_url
        .as_deref()
        .ok_or("SEARXNG_URL is not set")?;
    let answer = json_of(
        http.get(format!("{base}/search"))
            .query(&[("q", query), ("format", "json"), ("pageno", "1")])
            .header("Accept", "application/json")
            .timeout(Duration::from_secs(15)),
        "SearXNG",
    )
    .await?;
    let mut results: Vec<&Value> = answer["results"].as_array().into_iter().flatten().collect();
    // Best first, as SearXNG scores them.
    results.sort_by(|a, b| {
        let score = |v: &Value| v["score"].as_f64().unwrap_or(0.0);
        score(b).total_cmp(&score(a))
    });
    Ok(results
        .into_iter()
        .map(|r| Hit::new(text(&r["title"]), text(&r["url"]), text(&r["content"])))
        .collect())
}

async fn brave(
    http: &reqwest::Client,
    keys: &Keys,
    query: &str,
    limit: usize,
) -> Result<Vec<Hit>, String> {
    let key = keys
        .brave
        .as_deref()
        .ok_or("BRAVE_SEARCH_API_KEY is not set")?;
    let count = limit.clamp(1, 20).to_string();
    let answer = json_of(
        http.get("https://api.search.brave.com/res/v1/web/search")
            .query(&[("q", query), ("count", count.as_str())])
            .header("X-Subscription-Token", key)
            .header("Accept", "application/json")
            .timeout(Duration::from_secs(15)),
        "Brave Search",
    )
    .await?;
    Ok(answer["web"]["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| Hit::new(text(&r["title"]), text(&r["url"]), text(&r["description"])))
        .collect())
}

async fn tavily(
    http: &reqwest::Client,
    keys: &Keys,
    query: &str,
    limit: usize,
) -> Result<Vec<Hit>, String> {
    let (base, key) = vendors::tavily(keys)?;
    let body = json!({"query": query, "max_results": limit.min(20), "include_raw_content": false,
                      "include_images": false, "api_key": key});
    let answer = json_of(
        http.post(format!("{base}/search"))
            .json(&body)
            .timeout(Duration::from_secs(60)),
        "Tavily",
    )
    .await
    .map_err(|e| format!("Tavily search failed: {e}"))?;
    Ok(hits(&answer, |r| text(&r["content"])))
}

/// The `results` of an answer as hits, each described by `describe`.
fn hits(answer: &Value, describe: impl Fn(&Value) -> String) -> Vec<Hit> {
    results(answer)
        .map(|r| Hit::new(text(&r["title"]), text(&r["url"]), describe(r)))
        .collect()
}

async fn exa(
    http: &reqwest::Client,
    keys: &Keys,
    query: &str,
    limit: usize,
) -> Result<Vec<Hit>, String> {
    let body = json!({"query": query, "numResults": limit, "contents": {"highlights": true}});
    let request = vendors::exa(http, keys, "search")?;
    let answer = json_of(request.json(&body).timeout(Duration::from_secs(60)), "Exa")
        .await
        .map_err(|e| format!("Exa search failed: {e}"))?;
    Ok(hits(&answer, |r| joined(&r["highlights"])))
}

async fn parallel(
    http: &reqwest::Client,
    keys: &Keys,
    query: &str,
    limit: usize,
) -> Result<Vec<Hit>, String> {
    let mode = keys.parallel_mode.as_deref().unwrap_or("agentic");
    let body = json!({"search_queries": [query], "objective": query, "mode": mode,
                      "max_results": limit.min(20)});
    let request = vendors::parallel(http, keys, "v1beta/search")?;
    let answer = json_of(
        request.json(&body).timeout(Duration::from_secs(120)),
        "Parallel",
    )
    .await
    .map_err(|e| format!("Parallel search failed: {e}"))?;
    Ok(hits(&answer, |r| joined(&r["excerpts"])))
}

async fn firecrawl(
    http: &reqwest::Client,
    keys: &Keys,
    query: &str,
    limit: usize,
) -> Result<Vec<Hit>, String> {
    let (base, key) = firecrawl_endpoint(keys)?;
    let mut request = http
        .post(format!("{base}/v2/search"))
        .json(&json!({"query": query, "limit": limit, "timeout": 300_000}))
        .timeout(Duration::from_secs(300));
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let answer = json_of(request, "Firecrawl")
        .await
        .map_err(|e| format!("Firecrawl search failed: {e}"))?;
    let rows = ["/data/web", "/data/results", "/web", "/results"]
        .iter()
        .find_map(|p| answer.pointer(p).and_then(Value::as_array))
        .cloned()
        .unwrap_or_default();
    Ok(rows
        .iter()
        .map(|r| Hit::new(text(&r["title"]), text(&r["url"]), text(&r["description"])))
        .collect())
}

/// Firecrawl's base URL and key (a self-hosted one may need none).
pub fn firecrawl_endpoint(keys: &Keys) -> Result<(String, Option<&str>), String> {
    if keys.firecrawl.is_none() && keys.firecrawl_url.is_none() {
        return Err("Web tools are not configured. Set FIRECRAWL_API_KEY for cloud Firecrawl or set FIRECRAWL_API_URL for a self-hosted Firecrawl instance.".into());
    }
    let base = keys
        .firecrawl_url
        .clone()
        .unwrap_or_else(|| "https://api.firecrawl.dev".to_owned());
    Ok((base, keys.firecrawl.as_deref()))
}
