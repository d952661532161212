//! Discovery, reading and writing of skills on disk.

use std::path::{Component, Path, PathBuf};

use super::{
    EXCLUDED_DIRS, MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH, MAX_SKILL_FILE_BYTES, SUPPORT_DIRS,
    parse_frontmatter, validate_name, validate_skill_md,
};

/// A failed skill operation; the message is meant for the model or the user.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    /// Bad input: the message says what to change.
    #[error("{0}")]
    Invalid(String),
    /// The filesystem refused.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

fn invalid(msg: impl Into<String>) -> SkillError {
    SkillError::Invalid(msg.into())
}

/// One discovered skill.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillInfo {
    /// Its name (frontmatter `name`, else the directory name).
    pub name: String,
    /// Its description (frontmatter, else the body's first non-heading line).
    pub description: String,
    /// The directory directly under `skills/` when the skill is nested, e.g. `devops`.
    pub category: Option<String>,
    /// The skill's directory.
    pub dir: PathBuf,
}

/// The skills directory of one Hermes home.
#[derive(Debug, Clone)]
pub struct SkillStore {
    root: PathBuf,
    disabled: Vec<String>,
}

impl SkillStore {
    /// A store rooted at `root` (normally `$HERMES_HOME/skills`), with nothing disabled.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            disabled: Vec::new(),
        }
    }

    /// The store of a Hermes home: `skills/`, minus the names listed under
    /// `skills.disabled` in its `config.yaml` (read directly; a bad file disables nothing).
    pub fn for_home(hermes_home: &Path) -> Self {
        let disabled = std::fs::read_to_string(hermes_home.join("config.yaml"))
            .ok()
            .and_then(|text| serde_saphyr::from_str::<serde_json::Value>(&text).ok())
            .and_then(|v| v.get("skills")?.get("disabled").cloned())
            .map(|v| match v {
                serde_json::Value::Array(items) => items
                    .iter()
                    .filter_map(|i| i.as_str().map(|s| s.trim().to_owned()))
                    .filter(|s| !s.is_empty())
                    .collect(),
                serde_json::Value::String(s) => vec![s.trim().to_owned()],
                _ => Vec::new(),
            })
            .unwrap_or_default();
        Self {
            root: hermes_home.join("skills"),
            disabled,
        }
    }

    /// Whether config disables the skill `name`.
    pub fn is_disabled(&self, name: &str) -> bool {
        self.disabled.iter().any(|d| d == name)
    }

    /// Every enabled skill for this OS, sorted by path; the first of duplicate names wins.
    pub fn discover(&self) -> Vec<SkillInfo> {
        self.discover_all()
            .into_iter()
            .filter(|s| !self.is_disabled(&s.name))
            .collect()
    }

    /// The skills directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Like [`Self::discover`], disabled skills included.
    pub fn discover_all(&self) -> Vec<SkillInfo> {
        let mut files = Vec::new();
        walk(&self.root, &mut files);
        files.sort();
        let mut out: Vec<SkillInfo> = Vec::new();
        for skill_md in files {
            let Ok(content) = std::fs::read_to_string(&skill_md) else {
                continue;
            };
            let head: String = content.chars().take(4000).collect();
            let (fm, body) = parse_frontmatter(&head);
            if !fm.matches_platform(std::env::consts::OS) {
                continue;
            }
            let Some(dir) = skill_md.parent().map(Path::to_path_buf) else {
                continue;
            };
            let dir_name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let name: String = fm
                .name
                .clone()
                .filter(|n| !n.trim().is_empty())
                .unwrap_or(dir_name)
                .chars()
                .take(MAX_NAME_LENGTH)
                .collect();
            if out.iter().any(|s| s.name == name) {
                continue;
            }
            let mut description = fm.description.clone().unwrap_or_default();
            if description.trim().is_empty() {
                description = body
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty() && !l.starts_with('#'))
                    .unwrap_or_default()
                    .to_owned();
            }
            if description.chars().count() > MAX_DESCRIPTION_LENGTH {
                description = description
                    .chars()
                    .take(MAX_DESCRIPTION_LENGTH - 3)
                    .collect::<String>()
                    + "...";
            }
            let category = dir
                .strip_prefix(&self.root)
                .ok()
                .filter(|rel| rel.components().count() > 1)
                .and_then(|rel| rel.components().next())
                .map(|c| c.as_os_str().to_string_lossy().into_owned());
            out.push(SkillInfo {
                name,
                description: description.trim().to_owned(),
                category,
                dir,
            });
        }
        out
    }

    /// The skill called `name`, if installed.
    pub fn find(&self, name: &str) -> Option<SkillInfo> {
        self.discover().into_iter().find(|s| s.name == name)
    }

    fn require(&self, name: &str) -> Result<SkillInfo, SkillError> {
        self.find(name).ok_or_else(|| {
            invalid(format!(
                "Skill '{name}' not found. Use skills_list to see the installed skills."
            ))
        })
    }

    /// Supporting files of a skill, relative paths grouped by directory.
    pub fn linked_files(&self, skill: &SkillInfo) -> Vec<(String, Vec<String>)> {
        let mut out = Vec::new();
        for sub in SUPPORT_DIRS {
            let mut files = Vec::new();
            collect_files(&skill.dir.join(sub), &skill.dir, &mut files);
            files.sort();
            if !files.is_empty() {
                out.push((sub.to_owned(), files));
            }
        }
        out
    }

    /// Reads SKILL.md, or `file_path` inside the skill when given (no escaping the skill).
    pub fn read(&self, name: &str, file_path: Option<&str>) -> Result<String, SkillError> {
        let skill = self.require(name)?;
        let path = match file_path.map(str::trim).filter(|p| !p.is_empty()) {
            None => skill.dir.join("SKILL.md"),
            Some(rel) => contained(&skill.dir, rel)?,
        };
        if !path.is_file() {
            return Err(invalid(format!(
                "File '{}' not found in skill '{name}'. Call skill_view without file_path to \
                 see its linked files.",
                file_path.unwrap_or("SKILL.md")
            )));
        }
        Ok(std::fs::read_to_string(path)?)
    }

    /// Creates a new skill from full SKILL.md text; returns its directory.
    pub fn create(
        &self,
        name: &str,
        content: &str,
        category: Option<&str>,
    ) -> Result<PathBuf, SkillError> {
        validate_name(name, "Skill").map_err(invalid)?;
        let category = category.map(str::trim).filter(|c| !c.is_empty());
        if let Some(c) = category {
            validate_name(c, "Category").map_err(invalid)?;
        }
        validate_skill_md(content).map_err(invalid)?;
        if let Some(existing) = self.discover_all().into_iter().find(|s| s.name == name) {
            return Err(invalid(format!(
                "A skill named '{name}' already exists at {}. Use action 'patch' or 'edit' to \
                 change it.",
                existing.dir.display()
            )));
        }
        let dir = match category {
            Some(c) => self.root.join(c).join(name),
            None => self.root.join(name),
        };
        std::fs::create_dir_all(&dir)?;
        write_atomic(&dir.join("SKILL.md"), content.as_bytes())?;
        Ok(dir)
    }

    /// Replaces a skill's SKILL.md with full new text.
    pub fn edit(&self, name: &str, content: &str) -> Result<PathBuf, SkillError> {
        let skill = self.require(name)?;
        validate_skill_md(content).map_err(invalid)?;
        let path = skill.dir.join("SKILL.md");
        write_atomic(&path, content.as_bytes())?;
        Ok(path)
    }

    /// Replaces `old` with `new` in SKILL.md or a supporting file; returns the count replaced.
    pub fn patch(
        &self,
        name: &str,
        file_path: Option<&str>,
        old: &str,
        new: &str,
        replace_all: bool,
    ) -> Result<usize, SkillError> {
        if old.is_empty() {
            return Err(invalid("old_string must not be empty."));
        }
        let skill = self.require(name)?;
        let rel = file_path.map(str::trim).filter(|p| !p.is_empty());
        let path = match rel {
            None => skill.dir.join("SKILL.md"),
            Some(rel) => contained(&skill.dir, rel)?,
        };
        let text = std::fs::read_to_string(&path).map_err(|e| {
            invalid(format!(
                "Cannot read '{}' in skill '{name}': {e}",
                rel.unwrap_or("SKILL.md")
            ))
        })?;
        let count = text.matches(old).count();
        if count == 0 {
            return Err(invalid(
                "old_string was not found. Load the current text with skill_view and copy the \
                 passage exactly.",
            ));
        }
        if count > 1 && !replace_all {
            return Err(invalid(format!(
                "old_string matches {count} places. Add surrounding context to make it unique, \
                 or set replace_all=true."
            )));
        }
        let updated = if replace_all {
            text.replace(old, new)
        } else {
            text.replacen(old, new, 1)
        };
        if rel.is_none() {
            validate_skill_md(&updated)
                .map_err(|e| invalid(format!("The patch would break SKILL.md: {e}")))?;
        }
        write_atomic(&path, updated.as_bytes())?;
        Ok(if replace_all { count } else { 1 })
    }

    /// Deletes a skill and its files; returns the removed directory.
    pub fn delete(&self, name: &str) -> Result<PathBuf, SkillError> {
        let skill = self.require(name)?;
        std::fs::remove_dir_all(&skill.dir)?;
        // Drop an emptied category directory.
        if let Some(parent) = skill.dir.parent()
            && parent != self.root
            && parent.starts_with(&self.root)
        {
            let _ = std::fs::remove_dir(parent);
        }
        Ok(skill.dir)
    }

    /// Writes a supporting file under one of [`SUPPORT_DIRS`].
    pub fn write_file(&self, name: &str, rel: &str, content: &str) -> Result<PathBuf, SkillError> {
        let skill = self.require(name)?;
        let path = support_path(&skill.dir, rel)?;
        if content.len() > MAX_SKILL_FILE_BYTES {
            return Err(invalid(format!(
                "The file is {} bytes (limit: {MAX_SKILL_FILE_BYTES}). Split it into smaller \
                 files.",
                content.len()
            )));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        write_atomic(&path, content.as_bytes())?;
        Ok(path)
    }

    /// Removes a supporting file.
    pub fn remove_file(&self, name: &str, rel: &str) -> Result<PathBuf, SkillError> {
        let skill = self.require(name)?;
        let path = support_path(&skill.dir, rel)?;
        if !path.is_file() {
            return Err(invalid(format!(
                "File '{rel}' not found in skill '{name}'."
            )));
        }
        std::fs::remove_file(&path)?;
        Ok(path)
    }
}

/// Joins `rel` under `base`, refusing absolute paths and `..`.
fn contained(base: &Path, rel: &str) -> Result<PathBuf, SkillError> {
    let p = Path::new(rel);
    let ok = p
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !ok || rel.contains('\\') {
        return Err(invalid(format!(
            "Path '{rel}' must be relative to the skill directory and must not contain '..'."
        )));
    }
    let joined = base.join(p);
    // Refuse symlinks that lead outside the skill.
    if let (Ok(real), Ok(real_base)) = (joined.canonicalize(), base.canonicalize())
        && !real.starts_with(&real_base)
    {
        return Err(invalid(format!(
            "Path '{rel}' leads outside the skill directory."
        )));
    }
    Ok(joined)
}

/// Like [`contained`], and the first component must be a support directory.
fn support_path(base: &Path, rel: &str) -> Result<PathBuf, SkillError> {
    let path = contained(base, rel)?;
    let mut comps = Path::new(rel)
        .components()
        .filter(|c| !matches!(c, Component::CurDir));
    let first = comps
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    let has_file = comps.next().is_some();
    match first {
        Some(f) if SUPPORT_DIRS.contains(&f.as_str()) && has_file => Ok(path),
        _ => Err(invalid(format!(
            "file_path '{rel}' must be a file under one of {}/ (e.g. 'references/notes.md').",
            SUPPORT_DIRS.join("/, ")
        ))),
    }
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let skill_md = dir.join("SKILL.md");
    let is_skill = skill_md.is_file();
    if is_skill {
        out.push(skill_md);
    }
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !path.is_dir() || EXCLUDED_DIRS.contains(&name.as_str()) {
            continue;
        }
        if is_skill && SUPPORT_DIRS.contains(&name.as_str()) {
            continue;
        }
        walk(&path, out);
    }
}

fn collect_files(dir: &Path, base: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, base, out);
        } else if let Ok(rel) = path.strip_prefix(base) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    hermes_fs::write_atomic(path, bytes, hermes_fs::Access::Keep)
}
