//! Skills as messages: the ones a session preloads (`-s NAME[,NAME]`) and the
//! one a user invokes by name (`/NAME [request]`).

use hermes_state::HermesHome;
use hermes_state::skills::SkillStore;

/// The text that rides in front of a session's first user message for the
/// skills named in `names` (comma-separated): each SKILL.md behind a note that
/// it is active. The second value lists unknown names; it fails only when none
/// of them exists.
pub fn preload_text(home: &HermesHome, names: &[String]) -> Result<(String, Vec<String>), String> {
    // Seeding failures leave the installed skills usable; they are not fatal here.
    let _ = crate::bundled_skills::sync(home);
    let store = SkillStore::for_home(home.root());
    let mut parts = Vec::new();
    let mut missing = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        if seen.contains(&name) {
            continue;
        }
        seen.push(name);
        let activation = |skill: &str| {
            format!(
                "[IMPORTANT: This session was started with the \"{skill}\" skill preloaded. Follow \
                 its instructions for the rest of the session unless the user says otherwise.]"
            )
        };
        match skill_message(&store, name, &activation) {
            Some(text) => parts.push(text),
            None => missing.push(name.to_owned()),
        }
    }
    if parts.is_empty() {
        return Err(format!(
            "no such skill: {} (see `hermes skills list`)",
            missing.join(", ")
        ));
    }
    Ok((parts.join("\n\n"), missing))
}

/// The user message for `/NAME [instruction]`: the skill, marked as invoked by
/// the user, then what they asked. `None` when no installed skill has that name.
pub fn invocation_message(
    hermes_home: &std::path::Path,
    name: &str,
    instruction: &str,
) -> Option<String> {
    let store = SkillStore::for_home(hermes_home);
    let activation = |skill: &str| {
        format!(
            "[IMPORTANT: The user invoked the \"{skill}\" skill and wants you to follow its \
             instructions. The whole skill is loaded below.]"
        )
    };
    let message = skill_message(&store, name, &activation)?;
    let instruction = instruction.trim();
    Some(if instruction.is_empty() {
        message
    } else {
        format!("{message}\n\nThe user's request: {instruction}")
    })
}

/// A cron run's message for a job with skills: each skill marked as invoked,
/// a notice for those not installed (so the answer mentions them), then the
/// job's prompt as the instruction.
pub fn cron_message(hermes_home: &std::path::Path, names: &[String], prompt: &str) -> String {
    let store = SkillStore::for_home(hermes_home);
    let activation = |skill: &str| {
        format!(
            "[IMPORTANT: The user invoked the \"{skill}\" skill and wants you to follow its \
             instructions. The whole skill is loaded below.]"
        )
    };
    let mut parts = Vec::new();
    let mut skipped = Vec::new();
    for name in names {
        match skill_message(&store, name, &activation) {
            Some(text) => parts.push(text),
            None => skipped.push(name.as_str()),
        }
    }
    if !skipped.is_empty() {
        let list = skipped.join(", ");
        parts.insert(
            0,
            format!(
                "[IMPORTANT: These skill(s) were listed for this job but are not installed, so \
                 they were skipped: {list}. Begin your answer with a short notice, e.g. \
                 '⚠️ Skill(s) not found and skipped: {list}']"
            ),
        );
    }
    parts.push(format!(
        "The user gave this instruction along with the skill invocation: {prompt}"
    ));
    parts.join("\n\n")
}

/// A skill's SKILL.md behind an activation note, with its directory so relative paths
/// resolve; `None` when there is no such skill.
fn skill_message(
    store: &SkillStore,
    name: &str,
    activation: &dyn Fn(&str) -> String,
) -> Option<String> {
    let skill = store.find(name)?;
    let text = store.read(name, None).ok()?;
    Some(format!(
        "{}\n\n{}\n\n[Skill directory: {}]\nRelative paths in this skill (such as scripts/ or \
         templates/ files) are relative to that directory; use absolute paths when running them.",
        activation(&skill.name),
        text.trim(),
        skill.dir.display()
    ))
}
