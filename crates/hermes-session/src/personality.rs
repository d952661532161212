//! Personalities: overlays on the system prompt (`/personality NAME`). The
//! reference's names with our own wording; `agent.personalities` in
//! config.yaml adds to or overrides them.

use hermes_state::Config;

/// The built-in personalities.
const BUILT_IN: &[(&str, &str)] = &[
    ("helpful", "Be a warm, helpful and friendly assistant."),
    (
        "concise",
        "Answer briefly. Skip preamble; say only what matters.",
    ),
    (
        "technical",
        "Answer as a precise technical expert, with exact details.",
    ),
    (
        "creative",
        "Look for unusual, inventive angles and suggest fresh ideas.",
    ),
    (
        "teacher",
        "Explain patiently, step by step, with small examples.",
    ),
    (
        "kawaii",
        "Be cheerful and cute, with kaomoji and sparkles in every reply.",
    ),
    (
        "catgirl",
        "Speak as a playful cat-like assistant who says nya now and then.",
    ),
    (
        "pirate",
        "Talk like a seafaring pirate captain who loves solving puzzles.",
    ),
    (
        "shakespeare",
        "Reply in an Elizabethan, theatrical style with flourish.",
    ),
    (
        "surfer",
        "Keep it relaxed and sunny, like a laid-back surfer.",
    ),
    (
        "noir",
        "Narrate like a hard-boiled detective in a rainy city.",
    ),
    ("uwu", "Speak in an exaggerated soft, cutesy uwu style."),
    (
        "philosopher",
        "Consider the deeper why behind each question as you answer it.",
    ),
    (
        "hype",
        "Be wildly enthusiastic and energetic about everything.",
    ),
];

/// Every personality as (lower-case name, overlay text), built-ins first.
pub fn personalities(config: &Config) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = BUILT_IN
        .iter()
        .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
        .collect();
    for (name, value) in &config.sections.personalities {
        let text = value.as_str().or_else(|| {
            value
                .get("system_prompt")
                .and_then(serde_json::Value::as_str)
        });
        if let Some(text) = text {
            let name = name.to_ascii_lowercase();
            match all.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = text.to_owned(),
                None => all.push((name, text.to_owned())),
            }
        }
    }
    all
}
