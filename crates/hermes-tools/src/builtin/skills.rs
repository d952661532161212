//! `skills_list`, `skill_view` and `skill_manage`: the model's reusable procedures,
//! stored under `$HERMES_HOME/skills/` (see [`hermes_state::skills`]).

use futures_util::future::BoxFuture;
use hermes_protocol::ToolSchema;
use hermes_state::skills::{SkillError, SkillStore, parse_frontmatter};
use serde_json::{Value, json};

use crate::{ParallelClass, Tool, ToolContext, ToolError, ToolResult, arg_bool, arg_str};

/// The skill store of the session's Hermes home.
fn store(ctx: &ToolContext) -> Result<SkillStore, ToolError> {
    ctx.homes
        .hermes_home
        .as_ref()
        .map(|h| SkillStore::for_home(h))
        .ok_or_else(|| ToolError::model("Skills are unavailable: HERMES_HOME is not known."))
}

fn failure(msg: impl std::fmt::Display) -> String {
    json!({"success": false, "error": msg.to_string()}).to_string()
}

/// Lists installed skills.
#[derive(Debug, Default, Clone, Copy)]
pub struct SkillsListTool;

impl Tool for SkillsListTool {
    fn name(&self) -> &str {
        "skills_list"
    }
    fn toolset(&self) -> &str {
        "skills"
    }
    fn emoji(&self) -> &str {
        "📚"
    }
    fn parallel_class(&self) -> ParallelClass {
        ParallelClass::ReadOnly
    }
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "skills_list".into(),
            description: "Show the installed skills, each with its name and a short description. \
                          Load one in full with skill_view(name)."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "category": {
                        "type": "string",
                        "description": "Only list skills in this category (optional)."
                    }
                },
                "required": []
            }),
        }
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let store = store(ctx)?;
            let category = arg_str(&args, "category")
                .map(str::trim)
                .filter(|c| !c.is_empty());
            let all = store.discover();
            let mut categories: Vec<String> =
                all.iter().filter_map(|s| s.category.clone()).collect();
            categories.sort();
            categories.dedup();
            let skills: Vec<Value> = all
                .iter()
                .filter(|s| category.is_none_or(|c| s.category.as_deref() == Some(c)))
                .map(|s| json!({"name": s.name, "description": s.description, "category": s.category}))
                .collect();
            if all.is_empty() {
                return Ok(json!({
                    "success": true, "skills": [], "categories": [],
                    "message": "No skills installed yet."
                })
                .to_string());
            }
            Ok(json!({
                "success": true,
                "skills": skills,
                "categories": categories,
                "count": skills.len(),
                "hint": "Call skill_view(name) for a skill's full text, tags and linked files",
            })
            .to_string())
        })
    }
}

/// Loads a skill's SKILL.md or one of its linked files.
#[derive(Debug, Default, Clone, Copy)]
pub struct SkillViewTool;

impl Tool for SkillViewTool {
    fn name(&self) -> &str {
        "skill_view"
    }
    fn toolset(&self) -> &str {
        "skills"
    }
    fn emoji(&self) -> &str {
        "📚"
    }
    fn parallel_class(&self) -> ParallelClass {
        ParallelClass::ReadOnly
    }
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "skill_view".into(),
            description: "Load a skill: the procedures, commands and pitfalls saved for a kind of \
                          task. Without file_path it returns SKILL.md plus a 'linked_files' map of \
                          the skill's references, templates, scripts and assets; call again with \
                          file_path to read one of them."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "name": {
                        "type": "string",
                        "description": "Name of the skill, as shown by skills_list. Plugin skills use the 'plugin:skill' form."
                    },
                    "file_path": {
                        "type": "string",
                        "description": "OPTIONAL: a linked file inside the skill, e.g. 'references/api.md' or 'scripts/check.py'. Leave out to read SKILL.md."
                    }
                },
                "required": ["name"]
            }),
        }
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let store = store(ctx)?;
            let name = arg_str(&args, "name").unwrap_or_default().trim();
            if name.is_empty() {
                return Ok(failure(
                    "name is required. Call skills_list to see the skills.",
                ));
            }
            let file_path = arg_str(&args, "file_path").filter(|p| !p.trim().is_empty());
            let content = match store.read(name, file_path) {
                Ok(c) => c,
                Err(e) => return Ok(failure(e)),
            };
            if let Some(fp) = file_path {
                return Ok(
                    json!({"success": true, "name": name, "file": fp, "content": content})
                        .to_string(),
                );
            }
            let Some(skill) = store.find(name) else {
                return Ok(failure(format!("Skill '{name}' not found.")));
            };
            let (fm, _) = parse_frontmatter(&content);
            let linked: serde_json::Map<String, Value> = store
                .linked_files(&skill)
                .into_iter()
                .map(|(dir, files)| (dir, json!(files)))
                .collect();
            let has_linked = !linked.is_empty();
            let rel = skill
                .dir
                .strip_prefix(store.root())
                .map(|p| p.join("SKILL.md").to_string_lossy().into_owned())
                .unwrap_or_else(|_| "SKILL.md".into());
            Ok(json!({
                "success": true,
                "name": skill.name,
                "description": fm.description.clone().unwrap_or_default(),
                "tags": fm.tags(),
                "related_skills": fm.related_skills(),
                "content": content,
                "path": rel,
                "skill_dir": skill.dir.to_string_lossy(),
                "linked_files": if has_linked { Value::Object(linked) } else { Value::Null },
                "usage_hint": if has_linked {
                    json!("Read a linked file with skill_view(name, file_path), e.g. file_path='references/api.md'")
                } else {
                    Value::Null
                },
            })
            .to_string())
        })
    }
}

/// Creates, changes and deletes skills.
#[derive(Debug, Default, Clone, Copy)]
pub struct SkillManageTool;

const ACTIONS: [&str; 6] = [
    "create",
    "patch",
    "edit",
    "delete",
    "write_file",
    "remove_file",
];

impl Tool for SkillManageTool {
    fn name(&self) -> &str {
        "skill_manage"
    }
    fn toolset(&self) -> &str {
        "skills"
    }
    fn emoji(&self) -> &str {
        "📝"
    }
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "skill_manage".into(),
            description: include_str!("skills_manage_description.txt").trim().into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ACTIONS, "description": "What to do."},
                    "name": {"type": "string", "description": "The skill's name: lowercase letters, digits, hyphens, dots, underscores; at most 64 characters. For every action but create it must name an installed skill."},
                    "content": {"type": "string", "description": "The whole SKILL.md (YAML frontmatter, then the markdown body). Needed by 'create' and 'edit'; before an edit, read the skill with skill_view and send the full revised text."},
                    "old_string": {"type": "string", "description": "For 'patch': the exact text to replace. It must occur once unless replace_all is true, so include enough context."},
                    "new_string": {"type": "string", "description": "For 'patch': the replacement; an empty string deletes the match."},
                    "replace_all": {"type": "boolean", "description": "For 'patch': replace every occurrence rather than requiring exactly one (default false)."},
                    "category": {"type": "string", "description": "For 'create' only: an optional grouping directory such as 'devops' or 'data-science'."},
                    "file_path": {"type": "string", "description": "A supporting file inside the skill. Required for 'write_file' and 'remove_file', and must lie under references/, templates/, scripts/ or assets/. For 'patch' it is optional and defaults to SKILL.md."},
                    "file_content": {"type": "string", "description": "For 'write_file': the file's content."},
                    "absorbed_into": {"type": "string", "description": "For 'delete' only: the name of an existing skill this one was merged into, or an empty string when it is simply being retired. Lets later tooling tell a merge from a removal."}
                },
                "required": ["action", "name"]
            }),
        }
    }
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let store = store(ctx)?;
            // A skill's scripts run whenever the skill is used: writing one
            // needs approval like a dangerous command.
            if arg_str(&args, "action") == Some("write_file")
                && let Some(fp) = arg_str(&args, "file_path")
                && fp.trim_start_matches("./").starts_with("scripts/")
            {
                let name = arg_str(&args, "name").unwrap_or_default();
                let subject = format!("skill_manage write_file {name}/{fp}");
                if let Err(refused) = ctx
                    .approve_action(
                        &subject,
                        "write to a skill's scripts/ (run when the skill is used)",
                    )
                    .await
                {
                    return Ok(refused);
                }
            }
            let result = tokio::task::spawn_blocking(move || manage(&store, &args))
                .await
                .map_err(|e| ToolError::Fatal(format!("skill_manage worker failed: {e}")))?;
            Ok(match result {
                Ok(v) => v.to_string(),
                Err(e) => failure(e),
            })
        })
    }
}

/// Refuses text that looks like prompt injection or data exfiltration.
fn guard(text: &str, what: &str) -> Result<(), SkillError> {
    match crate::injection::scan_strict(text) {
        Some(threat) => Err(SkillError::Invalid(format!(
            "Security scan blocked this {what}: {threat}. Remove the flagged text and try again."
        ))),
        None => Ok(()),
    }
}

fn need<'a>(args: &'a Value, key: &str, action: &str, hint: &str) -> Result<&'a str, SkillError> {
    arg_str(args, key)
        .ok_or_else(|| SkillError::Invalid(format!("{key} is required for '{action}'. {hint}")))
}

/// Runs one `skill_manage` call.
pub fn manage(store: &SkillStore, args: &Value) -> Result<Value, SkillError> {
    let action = arg_str(args, "action").unwrap_or_default();
    let name = arg_str(args, "name").unwrap_or_default().trim();
    let message = match action {
        "create" => {
            let content = need(args, "content", action, "Send the full SKILL.md text.")?;
            guard(content, "skill")?;
            let dir = store.create(name, content, arg_str(args, "category"))?;
            return Ok(json!({
                "success": true,
                "message": format!("Skill '{name}' created."),
                "path": dir.to_string_lossy(),
            }));
        }
        "edit" => {
            let content = need(args, "content", action, "Send the full revised SKILL.md.")?;
            guard(content, "skill")?;
            store.edit(name, content)?;
            format!("Skill '{name}' rewritten.")
        }
        "patch" => {
            let old = need(args, "old_string", action, "Give the text to find.")?;
            let new = need(
                args,
                "new_string",
                action,
                "Use an empty string to delete the match.",
            )?;
            guard(new, "patch")?;
            let file_path = arg_str(args, "file_path");
            let replace_all = arg_bool(args, "replace_all").unwrap_or(false);
            let n = store.patch(name, file_path, old, new, replace_all)?;
            format!(
                "Patched {} in skill '{name}' ({n} replacement{}).",
                file_path.unwrap_or("SKILL.md"),
                if n == 1 { "" } else { "s" }
            )
        }
        "delete" => {
            if let Some(target) = arg_str(args, "absorbed_into").map(str::trim)
                && !target.is_empty()
                && store.find(target).is_none()
            {
                return Err(SkillError::Invalid(format!(
                    "absorbed_into names '{target}', which does not exist. Create or patch that \
                     skill first, then delete this one."
                )));
            }
            store.delete(name)?;
            format!("Skill '{name}' deleted.")
        }
        "write_file" => {
            let fp = need(
                args,
                "file_path",
                action,
                "Example: 'references/api-guide.md'.",
            )?;
            let content = need(args, "file_content", action, "Send the file's content.")?;
            guard(content, "file")?;
            store.write_file(name, fp, content)?;
            format!("File '{fp}' written to skill '{name}'.")
        }
        "remove_file" => {
            let fp = need(args, "file_path", action, "Name the file to remove.")?;
            store.remove_file(name, fp)?;
            format!("File '{fp}' removed from skill '{name}'.")
        }
        other => {
            return Err(SkillError::Invalid(format!(
                "Unknown action '{other}'. Use one of: {}.",
                ACTIONS.join(", ")
            )));
        }
    };
    Ok(json!({"success": true, "message": message}))
}

#[cfg(test)]
#[path = "skills_tests.rs"]
mod tests;
