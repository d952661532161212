//! SKILL.md frontmatter: parsing and validation.

use serde::Deserialize;

use super::{MAX_DESCRIPTION_LENGTH, MAX_SKILL_CONTENT_CHARS};

/// The fields Hermes reads from a SKILL.md frontmatter block (unknown keys are ignored).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Frontmatter {
    /// The skill's name.
    pub name: Option<String>,
    /// One-paragraph summary shown in the index.
    pub description: Option<String>,
    /// Free-form version string.
    pub version: Option<serde_json::Value>,
    /// License identifier.
    pub license: Option<String>,
    /// Operating systems the skill applies to (`linux`, `macos`, `windows`); empty = all.
    pub platforms: Vec<String>,
    /// Free-form prerequisites.
    pub prerequisites: Option<serde_json::Value>,
    /// `metadata.hermes.{tags, related_skills}` and anything else.
    pub metadata: Option<serde_json::Value>,
}

impl Frontmatter {
    /// `metadata.hermes.tags`.
    pub fn tags(&self) -> Vec<String> {
        self.hermes_list("tags")
    }

    /// `metadata.hermes.related_skills`.
    pub fn related_skills(&self) -> Vec<String> {
        self.hermes_list("related_skills")
    }

    fn hermes_list(&self, key: &str) -> Vec<String> {
        self.metadata
            .as_ref()
            .and_then(|m| m.get("hermes"))
            .and_then(|h| h.get(key))
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the skill applies to `os` (Rust's `std::env::consts::OS` spelling).
    pub fn matches_platform(&self, os: &str) -> bool {
        if self.platforms.is_empty() {
            return true;
        }
        let alias = match os {
            "macos" => "darwin",
            "windows" => "win32",
            other => other,
        };
        self.platforms.iter().any(|p| {
            let p = p.trim().to_ascii_lowercase();
            p == os || p == alias
        })
    }
}

/// Splits `content` into (raw YAML, body); `None` when there is no closed `---` block.
fn split(content: &str) -> Option<(&str, &str)> {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    let rest = content.strip_prefix("---")?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if offset > 0 && line.trim_end() == "---" && line.ends_with('\n') {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    // A closing fence on the very last line without a newline.
    let last_start = rest.trim_end_matches('\n').rfind('\n')?;
    (rest[last_start + 1..].trim_end() == "---").then(|| (&rest[..last_start + 1], ""))
}

/// Parses the frontmatter (empty when absent or malformed) and returns it with the body.
pub fn parse_frontmatter(content: &str) -> (Frontmatter, String) {
    match split(content) {
        Some((yaml, body)) => (
            serde_saphyr::from_str::<Frontmatter>(yaml).unwrap_or_default(),
            body.to_owned(),
        ),
        None => (
            Frontmatter::default(),
            content
                .strip_prefix('\u{feff}')
                .unwrap_or(content)
                .to_owned(),
        ),
    }
}

/// Checks a full SKILL.md text the way `skill_manage` requires it; the error says what to fix.
pub fn validate_skill_md(content: &str) -> Result<Frontmatter, String> {
    if content.trim().is_empty() {
        return Err("Content cannot be empty.".into());
    }
    let chars = content.chars().count();
    if chars > MAX_SKILL_CONTENT_CHARS {
        return Err(format!(
            "SKILL.md content is {chars} characters (limit: {MAX_SKILL_CONTENT_CHARS}). Move \
             detail into files under references/ or templates/ and keep SKILL.md short."
        ));
    }
    let trimmed = content.strip_prefix('\u{feff}').unwrap_or(content);
    if !trimmed.starts_with("---") {
        return Err(
            "SKILL.md must start with a YAML frontmatter block ('---' line, 'name:' and \
             'description:', then a closing '---' line)."
                .into(),
        );
    }
    let Some((yaml, body)) = split(trimmed) else {
        return Err("The frontmatter is not closed: add a line containing only '---'.".into());
    };
    let value: serde_json::Value = serde_saphyr::from_str(yaml)
        .map_err(|e| format!("The YAML frontmatter does not parse: {e}"))?;
    if !value.is_object() {
        return Err("The frontmatter must be a YAML mapping of 'key: value' lines.".into());
    }
    if value.get("name").is_none() {
        return Err("The frontmatter needs a 'name' field.".into());
    }
    let Some(description) = value.get("description") else {
        return Err("The frontmatter needs a 'description' field.".into());
    };
    let desc_len = match description {
        serde_json::Value::String(s) => s.chars().count(),
        other => other.to_string().chars().count(),
    };
    if desc_len > MAX_DESCRIPTION_LENGTH {
        return Err(format!(
            "The description is {desc_len} characters; shorten it to at most \
             {MAX_DESCRIPTION_LENGTH}."
        ));
    }
    if body.trim().is_empty() {
        return Err(
            "SKILL.md needs instructions after the frontmatter (steps, commands, pitfalls).".into(),
        );
    }
    serde_saphyr::from_str::<Frontmatter>(yaml)
        .map_err(|e| format!("A frontmatter field has the wrong type: {e}"))
}
