//! Skills shipped inside the binary and seeded into `$HERMES_HOME/skills/`.

use hermes_state::HermesHome;
use hermes_state::skills::sync::{BundledSkill, sync_bundled};

/// Every bundled skill.
pub const BUNDLED: &[BundledSkill] = &[
    BundledSkill {
        path: "software-development/commit-messages",
        files: &[(
            "SKILL.md",
            include_str!("../skills/software-development/commit-messages/SKILL.md"),
        )],
    },
    BundledSkill {
        path: "note-taking/meeting-notes",
        files: &[
            (
                "SKILL.md",
                include_str!("../skills/note-taking/meeting-notes/SKILL.md"),
            ),
            (
                "templates/notes.md",
                include_str!("../skills/note-taking/meeting-notes/templates/notes.md"),
            ),
        ],
    },
];

/// Names of the bundled skills.
pub fn names() -> Vec<&'static str> {
    BUNDLED.iter().map(BundledSkill::name).collect()
}

/// Seeds or refreshes the bundled skills; `Err` says why they could not be
/// (callers warn and go on: the skills already installed still work).
pub fn sync(home: &HermesHome) -> Result<(), String> {
    sync_bundled(&home.skills_dir(), BUNDLED)
        .map(|_| ())
        .map_err(|e| format!("cannot sync bundled skills: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_skills_are_valid() {
        for skill in BUNDLED {
            let (_, md) = skill.files.iter().find(|(p, _)| *p == "SKILL.md").unwrap();
            let fm = hermes_state::skills::validate_skill_md(md).unwrap();
            assert_eq!(fm.name.as_deref(), Some(skill.name()));
        }
    }
}
