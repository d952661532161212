//! What a job's run asks the agent, as the reference assembles it: the
//! script's output (or its error) and the newest output of the jobs named
//! in `context_from` ahead of the prompt, the cron notice in front, and the
//! job's skills loaded around it.

use serde_json::Value;

use super::jobs::{Book, output_folder};

/// Put in front of every job's prompt, as the reference does.
pub const CRON_NOTICE: &str = "[IMPORTANT: You are running as a scheduled cron job. DELIVERY: Your final \
response will be automatically delivered to the user — do NOT use send_message or try to deliver \
the output yourself. SILENT: If there is genuinely nothing new to report, respond with exactly \
\"[SILENT]\" (nothing else) to suppress delivery. Never combine [SILENT] with content.]";

/// The longest earlier output `context_from` passes on.
const MAX_CONTEXT_CHARS: usize = 8000;

/// A job's skill names (`skills`, or the older single `skill`).
pub fn skill_names(job: &Value) -> Vec<String> {
    let listed = match &job["skills"] {
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Value::String(one) => vec![one.clone()],
        _ => job["skill"]
            .as_str()
            .map(|s| vec![s.to_owned()])
            .unwrap_or_default(),
    };
    listed
        .into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The newest saved output of job `id` (a 12 hex digit id; others are skipped).
fn latest_output(book: &Book, id: &str) -> Option<String> {
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let names = book.docs.list(&output_folder(id)).ok()?;
    let newest = names.iter().rev().find(|n| n.ends_with(".md"))?;
    let text = book.docs.read(newest).ok()??;
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    Some(if text.chars().count() > MAX_CONTEXT_CHARS {
        format!(
            "{}\n\n[... output truncated ...]",
            text.chars().take(MAX_CONTEXT_CHARS).collect::<String>()
        )
    } else {
        text.to_owned()
    })
}

/// The prompt of one run; `script` is the pre-run script's result when the
/// job has one. `None` when the script succeeded but printed nothing: the
/// run is silent, as in the reference.
pub fn build(book: &Book, job: &Value, script: Option<&Result<String, String>>) -> Option<String> {
    let mut prompt = job["prompt"].as_str().unwrap_or_default().to_owned();
    match script {
        Some(Ok(output)) if output.is_empty() => return None,
        Some(Ok(output)) => {
            prompt = format!(
                "## Script Output\nThe following data was collected by a pre-run script. Use it \
                 as context for your analysis.\n\n```\n{output}\n```\n\n{prompt}"
            );
        }
        Some(Err(error)) => {
            prompt = format!(
                "## Script Error\nThe data-collection script failed. Report this to the user.\n\n\
                 ```\n{error}\n```\n\n{prompt}"
            );
        }
        None => {}
    }
    let sources: Vec<String> = match &job["context_from"] {
        Value::String(one) => vec![one.clone()],
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    for source in sources {
        if let Some(output) = latest_output(book, &source) {
            prompt = format!(
                "## Output from job '{source}'\nThe following is the most recent output from a \
                 preceding cron job. Use it as context for your analysis.\n\n```\n{output}\n```\n\n{prompt}"
            );
        }
    }
    let prompt = format!("{CRON_NOTICE}\n\n{prompt}");
    let skills = skill_names(job);
    if skills.is_empty() {
        return Some(prompt);
    }
    Some(crate::skills::cron_message(&book.home, &skills, &prompt))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn script_output_and_earlier_jobs_ride_ahead_of_the_prompt() {
        let home = tempfile::tempdir().unwrap();
        let book = Book::at_home(home.path());
        let out = home.path().join("cron/output/aaaaaaaaaaaa");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("2026-01-01_00-00-00.md"), "old").unwrap();
        std::fs::write(out.join("2026-01-02_00-00-00.md"), "newest numbers").unwrap();
        let job = json!({"prompt": "Compare.", "context_from": ["aaaaaaaaaaaa", "../etc"]});
        let built = build(&book, &job, Some(&Ok("disk 91%".to_owned()))).unwrap();
        assert!(built.starts_with(CRON_NOTICE));
        let context = built.find("## Output from job 'aaaaaaaaaaaa'").unwrap();
        let script = built.find("## Script Output").unwrap();
        assert!(context < script && built.ends_with("Compare."), "{built}");
        assert!(built.contains("newest numbers") && !built.contains("old\n"));
        assert!(build(&book, &job, Some(&Ok(String::new()))).is_none());
        let failed = build(&book, &job, Some(&Err("boom".into()))).unwrap();
        assert!(failed.contains("## Script Error") && failed.contains("boom"));
    }

    #[test]
    fn skills_are_read_from_either_field() {
        assert_eq!(
            skill_names(&json!({"skills": ["a", " ", "b"]})),
            vec!["a", "b"]
        );
        assert_eq!(skill_names(&json!({"skill": "legacy"})), vec!["legacy"]);
        assert!(skill_names(&json!({})).is_empty());
    }
}
