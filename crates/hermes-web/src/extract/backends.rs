//! Reading pages through an extract API (Tavily, Exa, Parallel, Firecrawl),
//! asked as the reference asks them.

use std::time::Duration;

use serde_json::{Value, json};

use super::Row;
use crate::http::json_of as post;
use crate::settings::{Backend, Keys};
use crate::vendors::{self, results, text};

/// Every URL read through `backend`, one row each (in the backend's order).
pub async fn extract(
    http: &reqwest::Client,
    keys: &Keys,
    backend: Backend,
    urls: &[String],
) -> Vec<Row> {
    let failed = |e: String| urls.iter().map(|u| Row::failed(u, e.clone())).collect();
    match backend {
        Backend::Tavily => tavily(http, keys, urls).await.unwrap_or_else(failed),
        Backend::Exa => exa(http, keys, urls).await.unwrap_or_else(failed),
        Backend::Parallel => parallel(http, keys, urls).await.unwrap_or_else(failed),
        Backend::Firecrawl => firecrawl(http, keys, urls).await,
        other => failed(format!("{} cannot read pages", other.name())),
    }
}

async fn tavily(http: &reqwest::Client, keys: &Keys, urls: &[String]) -> Result<Vec<Row>, String> {
    let (base, key) = vendors::tavily(keys)?;
    let answer = post(
        http.post(format!("{base}/extract"))
            .json(&json!({"urls": urls, "include_images": false, "api_key": key}))
            .timeout(Duration::from_secs(120)),
        "Tavily",
    )
    .await
    .map_err(|e| format!("Tavily extract failed: {e}"))?;
    let mut rows: Vec<Row> = results(&answer)
        .map(|r| {
            let content = r["raw_content"]
                .as_str()
                .or(r["content"].as_str())
                .unwrap_or("");
            let url = r["url"]
                .as_str()
                .map_or_else(|| urls.first().cloned().unwrap_or_default(), str::to_owned);
            Row::ok(&url, &text(&r["title"]), content)
        })
        .collect();
    for fail in answer["failed_results"].as_array().into_iter().flatten() {
        let error = fail["error"]
            .as_str()
            .unwrap_or("extraction failed")
            .to_owned();
        rows.push(Row::failed(&text(&fail["url"]), error));
    }
    for url in answer["failed_urls"].as_array().into_iter().flatten() {
        rows.push(Row::failed(&text(url), "extraction failed".to_owned()));
    }
    Ok(rows)
}

async fn exa(http: &reqwest::Client, keys: &Keys, urls: &[String]) -> Result<Vec<Row>, String> {
    let request = vendors::exa(http, keys, "contents")?;
    let body = json!({"urls": urls, "text": true});
    let answer = post(request.json(&body).timeout(Duration::from_secs(120)), "Exa")
        .await
        .map_err(|e| format!("Exa extract failed: {e}"))?;
    Ok(results(&answer)
        .map(|r| {
            Row::ok(
                &text(&r["url"]),
                &text(&r["title"]),
                r["text"].as_str().unwrap_or(""),
            )
        })
        .collect())
}

async fn parallel(
    http: &reqwest::Client,
    keys: &Keys,
    urls: &[String],
) -> Result<Vec<Row>, String> {
    let request = vendors::parallel(http, keys, "v1beta/extract")?;
    let body = json!({"urls": urls, "full_content": true});
    let answer = post(
        request.json(&body).timeout(Duration::from_secs(300)),
        "Parallel",
    )
    .await
    .map_err(|e| format!("Parallel extract failed: {e}"))?;
    let mut rows: Vec<Row> = results(&answer)
        .map(|r| {
            let content = match r["full_content"].as_str() {
                Some(full) if !full.is_empty() => full.to_owned(),
                _ => r["excerpts"]
                    .as_array()
                    .map(|e| {
                        e.iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join("\n\n")
                    })
                    .unwrap_or_default(),
            };
            Row::ok(&text(&r["url"]), &text(&r["title"]), &content)
        })
        .collect();
    for error in answer["errors"].as_array().into_iter().flatten() {
        let why = error["content"]
            .as_str()
            .or(error["error_type"].as_str())
            .unwrap_or("extraction failed");
        rows.push(Row::failed(&text(&error["url"]), why.to_owned()));
    }
    Ok(rows)
}

async fn firecrawl(http: &reqwest::Client, keys: &Keys, urls: &[String]) -> Vec<Row> {
    let (base, key) = match crate::search::backends::firecrawl_endpoint(keys) {
        Ok(found) => found,
        Err(e) => return urls.iter().map(|u| Row::failed(u, e.clone())).collect(),
    };
    let mut rows = Vec::new();
    for url in urls {
        let mut request = http
            .post(format!("{base}/v2/scrape"))
            .json(&json!({"url": url, "formats": ["markdown"]}))
            .timeout(Duration::from_secs(60));
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        rows.push(match post(request, "Firecrawl").await {
            Ok(answer) => {
                let data = &answer["data"];
                Row::ok(
                    data["metadata"]["sourceURL"].as_str().unwrap_or(url),
                    &text(&data["metadata"]["title"]),
                    data["markdown"].as_str().unwrap_or(""),
                )
            }
            Err(e) if e.ends_with("timed out") => Row::failed(
                url,
                "Scrape timed out after 60s — page may be too large or unresponsive. Try browser_navigate instead.".to_owned(),
            ),
            Err(e) => Row::failed(url, e),
        });
    }
    rows
}
