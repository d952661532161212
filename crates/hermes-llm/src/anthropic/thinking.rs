//! Extended-thinking request parameters from the user's reasoning effort
//! (`agent.reasoning_effort`), as the reference maps them: Claude 4.6 and later use
//! adaptive thinking with an `output_config.effort`; older Claude families and other
//! Messages-API models take a manual `budget_tokens` (with `temperature` 1); Haiku
//! and `none` get no thinking. Claude 4.7 and later reject sampling parameters.

use serde_json::{Map, Value, json};

/// Older Claude families that only accept manual, budget-based thinking.
const MANUAL_THINKING: &[&str] = &[
    "claude-3",
    "claude-opus-4-0",
    "claude-opus-4.0",
    "claude-opus-4-1",
    "claude-opus-4.1",
    "claude-sonnet-4-0",
    "claude-sonnet-4.0",
    "claude-opus-4-2025",
    "claude-sonnet-4-2025",
    "claude-opus-4-5",
    "claude-opus-4.5",
    "claude-sonnet-4-5",
    "claude-sonnet-4.5",
    "claude-haiku-4-5",
    "claude-haiku-4.5",
];

/// Adaptive models without the `xhigh` level (it arrived with 4.7).
const NO_XHIGH: &[&str] = &[
    "claude-opus-4-6",
    "claude-opus-4.6",
    "claude-sonnet-4-6",
    "claude-sonnet-4.6",
];

fn any_in(model: &str, list: &[&str]) -> bool {
    list.iter().any(|s| model.contains(s))
}

fn is_kimi(model: &str) -> bool {
    model.contains("kimi") || model.contains("moonshot")
}

/// Claude 4.6+ (and unknown future Claude models) and Kimi use adaptive thinking.
fn adaptive(model: &str) -> bool {
    is_kimi(model) || (model.contains("claude") && !any_in(model, MANUAL_THINKING))
}

/// Claude 4.7+ reject any `temperature`/`top_p`/`top_k`.
fn forbids_sampling(model: &str) -> bool {
    model.contains("claude") && !any_in(model, NO_XHIGH) && !any_in(model, MANUAL_THINKING)
}

fn budget(effort: &str) -> u64 {
    match effort {
        "xhigh" => 32_000,
        "high" => 16_000,
        "low" => 4_000,
        _ => 8_000,
    }
}

fn adaptive_effort(effort: &str, model: &str) -> &'static str {
    let level = match effort {
        "ultra" | "max" => "max",
        "xhigh" => "xhigh",
        "high" => "high",
        "low" | "minimal" => "low",
        _ => "medium",
    };
    if level == "xhigh" && any_in(model, NO_XHIGH) {
        "max"
    } else {
        level
    }
}

/// Adds thinking parameters for `effort` (`None`/empty: the provider's default, no
/// thinking requested) to a Messages request `body` for `model`.
pub(crate) fn apply(body: &mut Map<String, Value>, model: &str, effort: Option<&str>) {
    let model = model.to_ascii_lowercase();
    let effort = effort.map(|e| e.trim().to_ascii_lowercase());
    if let Some(effort) = effort.as_deref().filter(|e| !e.is_empty() && *e != "none")
        && !model.contains("haiku")
    {
        if adaptive(&model) {
            body.insert(
                "thinking".into(),
                json!({"type": "adaptive", "display": "summarized"}),
            );
            body.insert(
                "output_config".into(),
                json!({"effort": adaptive_effort(effort, &model)}),
            );
        } else {
            let budget = budget(effort);
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget}),
            );
            body.insert("temperature".into(), json!(1));
            let max = body.get("max_tokens").and_then(Value::as_u64).unwrap_or(0);
            body.insert("max_tokens".into(), json!(max.max(budget + 4096)));
        }
    }
    if forbids_sampling(&model) {
        for key in ["temperature", "top_p", "top_k"] {
            body.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(model: &str, effort: Option<&str>) -> Value {
        let mut b = Map::new();
        b.insert("max_tokens".into(), json!(4096));
        b.insert("temperature".into(), json!(0.3));
        apply(&mut b, model, effort);
        Value::Object(b)
    }

    #[test]
    fn adaptive_models_get_an_effort() {
        let b = body("claude-opus-4-7", Some("high"));
        assert_eq!(
            b["thinking"],
            json!({"type": "adaptive", "display": "summarized"})
        );
        assert_eq!(b["output_config"], json!({"effort": "high"}));
        assert!(
            b.get("temperature").is_none(),
            "4.7 forbids sampling params"
        );
        let b = body("claude-sonnet-4-6", Some("xhigh"));
        assert_eq!(b["output_config"], json!({"effort": "max"}));
        assert_eq!(b["temperature"], json!(0.3), "4.6 keeps sampling params");
        assert_eq!(
            body("claude-opus-4-8", Some("minimal"))["output_config"],
            json!({"effort": "low"})
        );
        assert_eq!(
            body("kimi-k2.6", Some("medium"))["thinking"]["type"],
            "adaptive"
        );
    }

    #[test]
    fn older_models_get_a_budget() {
        let b = body("claude-sonnet-4-5-20250929", Some("high"));
        assert_eq!(
            b["thinking"],
            json!({"type": "enabled", "budget_tokens": 16000})
        );
        assert_eq!(b["temperature"], json!(1));
        assert_eq!(b["max_tokens"], json!(16000 + 4096));
        let b = body("MiniMax-M2", Some("low"));
        assert_eq!(b["thinking"]["budget_tokens"], 4000);
    }

    #[test]
    fn no_thinking_for_haiku_none_or_unset() {
        for (model, effort) in [
            ("claude-haiku-4-5", Some("high")),
            ("claude-sonnet-4-5", Some("none")),
            ("claude-sonnet-4-5", None),
            ("claude-sonnet-4-5", Some("")),
        ] {
            let b = body(model, effort);
            assert!(b.get("thinking").is_none(), "{model} {effort:?}");
            assert_eq!(b["max_tokens"], json!(4096));
        }
    }
}
