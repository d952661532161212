//! What the search and extract calls of one vendor share: its key (and the
//! reference's message when it is missing), its address and headers, and
//! reading the `results` it answers with.

use serde_json::Value;

use crate::settings::Keys;

/// A JSON value as text (`""` for null).
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The entries of an answer's `results` list.
pub fn results(answer: &Value) -> impl Iterator<Item = &Value> {
    answer["results"].as_array().into_iter().flatten()
}

/// Tavily's base address and key.
pub fn tavily(keys: &Keys) -> Result<(&str, &str), String> {
    let key = keys.tavily.as_deref().ok_or(
        "TAVILY_API_KEY environment variable not set. Get your API key at https://app.tavily.com/home",
    )?;
    Ok((
        keys.tavily_base
            .as_deref()
            .unwrap_or("https://api.tavily.com"),
        key,
    ))
}

/// A POST to Exa's `path` with its key and integration header.
pub fn exa(
    http: &reqwest::Client,
    keys: &Keys,
    path: &str,
) -> Result<reqwest::RequestBuilder, String> {
    let key = keys
        .exa
        .as_deref()
        .ok_or("EXA_API_KEY environment variable not set. Get your API key at https://exa.ai")?;
    Ok(http
        .post(format!("https://api.exa.ai/{path}"))
        .header("x-api-key", key)
        .header("x-exa-integration", "hermes-agent"))
}

/// A POST to Parallel's `path` (under `PARALLEL_BASE_URL`) with its key and beta header.
pub fn parallel(
    http: &reqwest::Client,
    keys: &Keys,
    path: &str,
) -> Result<reqwest::RequestBuilder, String> {
    let key = keys.parallel.as_deref().ok_or(
        "PARALLEL_API_KEY environment variable not set. Get your API key at https://parallel.ai",
    )?;
    let base = keys
        .parallel_base
        .as_deref()
        .unwrap_or("https://api.parallel.ai");
    Ok(http
        .post(format!("{base}/{path}"))
        .header("x-api-key", key)
        .header("parallel-beta", "search-extract-2025-10-10"))
}
