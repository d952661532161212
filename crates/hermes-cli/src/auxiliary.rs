//! The `compression:` and `auxiliary.compression:` settings: when the agent compresses,
//! and which model writes the summaries (the main model unless configured).

use std::io::Write;
use std::sync::Arc;

use anyhow::Result;
use hermes_agent::Agent;
use hermes_agent::compress::CompressorConfig;
use hermes_llm::Provider;
use hermes_llm::api_mode;
use serde_json::Value;

use crate::runtime::Runtime;
use crate::setup::Setup;

/// `compression:` from config.yaml over the reference's defaults.
pub fn compressor_config(setup: &Setup) -> CompressorConfig {
    let defaults = CompressorConfig::default();
    let get = |key: &str| setup.config.get(&format!("compression.{key}"));
    let number = |key: &str| get(key).and_then(Value::as_f64);
    CompressorConfig {
        enabled: get("enabled")
            .and_then(Value::as_bool)
            .unwrap_or(defaults.enabled),
        threshold_percent: number("threshold").unwrap_or(defaults.threshold_percent),
        target_ratio: number("target_ratio").unwrap_or(defaults.target_ratio),
        protect_first: number("protect_first_n")
            .map_or(defaults.protect_first, |n| n.max(0.0) as usize),
    }
}

fn field<'a>(setup: &'a Setup, key: &str) -> Option<&'a str> {
    setup
        .config
        .get(&format!("auxiliary.compression.{key}"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// The runtime `auxiliary.compression` names: its own provider (or `auto`, the main one),
/// model and endpoint. `None` when nothing differs from the main model.
pub fn summarizer_runtime(setup: &Setup, main: &Runtime) -> Result<Option<Runtime>> {
    let provider = field(setup, "provider").filter(|p| !p.eq_ignore_ascii_case("auto"));
    let model = field(setup, "model");
    let base_url = field(setup, "base_url");
    let api_key = field(setup, "api_key");
    if provider.is_none() && model.is_none() && base_url.is_none() {
        return Ok(None);
    }
    let mut rt = match (base_url, provider) {
        (Some(url), _) => Runtime {
            provider: provider.unwrap_or("custom").to_owned(),
            base_url: url.trim_end_matches('/').to_owned(),
            api_key: None,
            model: None,
            api_mode: api_mode::resolve(None, None, url),
        },
        (None, Some(p)) => setup.runtime(Some(p), model)?,
        (None, None) => main.clone(),
    };
    if let Some(key) = api_key {
        rt.api_key = Some(key.to_owned());
    } else if rt.api_key.is_none() && rt.base_url == main.base_url {
        rt.api_key.clone_from(&main.api_key);
    }
    rt.model = model
        .map(str::to_owned)
        .or(rt.model)
        .or_else(|| main.model.clone());
    Ok(Some(rt))
}

/// Applies both settings to `agent`. A summarizer that cannot be set up is reported and
/// the main model summarizes instead; the session goes on.
pub fn configure(agent: &mut Agent, setup: &Setup, main: &Runtime) {
    agent.set_compressor_config(compressor_config(setup));
    let built = summarizer_runtime(setup, main).and_then(|rt| match rt {
        Some(rt) if rt.provider != "local" => {
            let provider: Arc<dyn Provider> =
                crate::chat::remote_provider(&rt, &setup.home, &setup.config, &setup.env)?;
            Ok(Some((provider, rt.model.unwrap_or_default())))
        }
        _ => Ok(None),
    });
    match built {
        Ok(Some((provider, model))) => agent.set_auxiliary(provider, model),
        Ok(None) => {}
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "warning: auxiliary.compression is not usable ({e:#}); the main model will write compression summaries"
            );
        }
    }
}
