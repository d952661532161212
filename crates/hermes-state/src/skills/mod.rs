//! The skill library: `$HERMES_HOME/skills/[<category>/]<name>/SKILL.md`, each a YAML
//! frontmatter block plus a markdown body, with optional supporting files under
//! `references/`, `templates/`, `scripts/` and `assets/`.

mod frontmatter;
mod md5;
mod store;
pub mod sync;

pub use frontmatter::{Frontmatter, parse_frontmatter, validate_skill_md};
pub use store::{SkillError, SkillInfo, SkillStore};

/// Longest allowed skill (and category) name.
pub const MAX_NAME_LENGTH: usize = 64;
/// Longest allowed description.
pub const MAX_DESCRIPTION_LENGTH: usize = 1024;
/// Largest SKILL.md an agent may write, in characters.
pub const MAX_SKILL_CONTENT_CHARS: usize = 100_000;
/// Largest supporting file an agent may write, in bytes.
pub const MAX_SKILL_FILE_BYTES: usize = 1_048_576;
/// Directories that may hold a skill's supporting files.
pub const SUPPORT_DIRS: [&str; 4] = ["references", "templates", "scripts", "assets"];
/// Directories never walked when discovering skills.
pub const EXCLUDED_DIRS: [&str; 14] = [
    ".git",
    ".github",
    ".hub",
    ".archive",
    ".venv",
    "venv",
    "node_modules",
    "site-packages",
    "__pycache__",
    ".tox",
    ".nox",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
];

/// Checks a skill or category name; the error says how to fix it.
pub fn validate_name(name: &str, what: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err(format!("{what} name is required."));
    }
    if name.chars().count() > MAX_NAME_LENGTH {
        return Err(format!("{what} name exceeds {MAX_NAME_LENGTH} characters."));
    }
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c));
    if !first_ok || !rest_ok {
        return Err(format!(
            "Invalid {} name '{name}'. Use lowercase letters, digits, hyphens, dots and \
             underscores, starting with a letter or digit.",
            what.to_lowercase()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod sync_tests;
#[cfg(test)]
mod tests;
