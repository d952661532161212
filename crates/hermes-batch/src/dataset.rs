//! The input: a JSONL file with one `{"prompt": …}` object per line.

use std::path::Path;

use crate::BatchError;

/// One prompt of the dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its 0-based position among the valid entries (not the line number).
    pub index: usize,
    /// The user message.
    pub prompt: String,
}

/// The valid entries of a dataset file, with what was skipped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Dataset {
    /// Valid entries in file order, truncated to `max_samples`.
    pub entries: Vec<Entry>,
    /// Lines that were skipped, and fields we do not act on.
    pub warnings: Vec<String>,
}

/// Reads `path`: blank lines are skipped; invalid JSON, a line that is not an
/// object or has no string `prompt` is skipped with a warning. With
/// `max_samples`, only that many valid entries are kept. A missing file or
/// no valid entry at all is an error.
pub fn load(path: &Path, max_samples: Option<usize>) -> Result<Dataset, BatchError> {
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(BatchError::Usage(format!(
                "Dataset file not found: {} (give the path of a JSONL file with one {{\"prompt\": \"…\"}} per line)",
                path.display()
            )));
        }
        Err(e) => return Err(BatchError::io(path, e)),
    };
    let data = parse(&text, max_samples);
    if data.entries.is_empty() {
        return Err(BatchError::Usage(format!(
            "No valid entries found in dataset file: {} (each line must be a JSON object with a string \"prompt\" field)",
            path.display()
        )));
    }
    Ok(data)
}

/// The entries of JSONL `text` (see [`load`]).
pub fn parse(text: &str, max_samples: Option<usize>) -> Dataset {
    let mut data = Dataset::default();
    let mut images = 0usize;
    for (n, line) in text.lines().enumerate() {
        let line_num = n + 1;
        if max_samples.is_some_and(|max| data.entries.len() >= max) {
            break;
        }
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let value: serde_json::Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                data.warnings
                    .push(format!("Invalid JSON on line {line_num}: {e}"));
                continue;
            }
        };
        let Some(obj) = value.as_object() else {
            data.warnings
                .push(format!("Line {line_num} is not a JSON object, skipping"));
            continue;
        };
        match obj.get("prompt") {
            None => data
                .warnings
                .push(format!("Line {line_num} missing 'prompt' field, skipping")),
            Some(serde_json::Value::String(prompt)) => {
                if obj.contains_key("image") || obj.contains_key("docker_image") {
                    images += 1;
                }
                data.entries.push(Entry {
                    index: data.entries.len(),
                    prompt: prompt.clone(),
                });
            }
            Some(_) => data.warnings.push(format!(
                "Line {line_num} has a 'prompt' that is not a string, skipping"
            )),
        }
    }
    if images > 0 {
        data.warnings.push(format!(
            "{images} entr{} name a container image ('image'/'docker_image'): per-prompt images are not supported, the prompts run in the current terminal backend",
            if images == 1 { "y" } else { "ies" }
        ));
    }
    data
}

#[cfg(test)]
#[path = "dataset_tests.rs"]
mod tests;
