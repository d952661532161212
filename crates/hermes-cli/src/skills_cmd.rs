//! `hermes skills`: list, show, create and delete installed skills.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use hermes_state::skills::SkillStore;
use hermes_state::{Env, HermesHome};

/// `hermes skills` arguments.
#[derive(Debug, Args)]
pub struct SkillsArgs {
    #[command(subcommand)]
    action: Option<SkillsAction>,
}

#[derive(Debug, Subcommand)]
enum SkillsAction {
    /// List installed skills.
    List {
        /// Which skills to show: all, builtin (shipped with Hermes) or local (yours).
        #[arg(long, default_value = "all", value_parser = ["all", "hub", "builtin", "local"])]
        source: String,
        /// Hide skills disabled in config.yaml (`skills.disabled`).
        #[arg(long = "enabled-only")]
        enabled_only: bool,
    },
    /// Print a skill's SKILL.md and its linked files.
    #[command(alias = "inspect")]
    Show {
        /// Skill name.
        name: String,
    },
    /// Create a skill from a SKILL.md file, or a stub to fill in.
    Create {
        /// Skill name (lowercase letters, digits, '-', '_', '.').
        name: String,
        /// Read the full SKILL.md from this file.
        #[arg(long = "from", value_name = "FILE")]
        from: Option<std::path::PathBuf>,
        /// One-line description for the stub (ignored with --from).
        #[arg(long, short = 'd')]
        description: Option<String>,
        /// Category directory to group it under.
        #[arg(long)]
        category: Option<String>,
    },
    /// Delete an installed skill.
    #[command(alias = "uninstall")]
    Delete {
        /// Skill name.
        name: String,
    },
}

/// Runs a `hermes skills` action.
pub fn run(args: SkillsArgs) -> Result<ExitCode> {
    let env = Env::from_pairs(std::env::vars());
    let home = HermesHome::from_env(env.get("HERMES_HOME"), env.get("HOME"))
        .context("cannot locate the Hermes home: set HERMES_HOME or HOME")?;
    if let Err(problem) = hermes_session::bundled_skills::sync(&home) {
        writeln!(std::io::stderr(), "warning: {problem}")?;
    }
    let store = SkillStore::for_home(home.root());
    let mut out = std::io::stdout().lock();
    match args.action.unwrap_or(SkillsAction::List {
        source: "all".into(),
        enabled_only: false,
    }) {
        SkillsAction::List {
            source,
            enabled_only,
        } => {
            let bundled = hermes_session::bundled_skills::names();
            let skills: Vec<_> = store
                .discover_all()
                .into_iter()
                .filter(|s| !(enabled_only && store.is_disabled(&s.name)))
                .filter(|s| match source.as_str() {
                    "builtin" => bundled.contains(&s.name.as_str()),
                    "local" => !bundled.contains(&s.name.as_str()),
                    "hub" => false,
                    _ => true,
                })
                .collect();
            if skills.is_empty() {
                writeln!(out, "No skills installed.")?;
                return Ok(ExitCode::SUCCESS);
            }
            let width = skills
                .iter()
                .map(|s| s.name.len())
                .max()
                .unwrap_or(4)
                .max(4);
            for s in &skills {
                let category = s.category.as_deref().unwrap_or("-");
                let origin = if bundled.contains(&s.name.as_str()) {
                    "builtin"
                } else {
                    "local"
                };
                let state = if store.is_disabled(&s.name) {
                    "disabled"
                } else {
                    "enabled"
                };
                writeln!(
                    out,
                    "{:<width$}  {:<14} {:<8} {:<8} {}",
                    s.name, category, origin, state, s.description
                )?;
            }
            writeln!(out, "\n{} skill(s)", skills.len())?;
        }
        SkillsAction::Show { name } => {
            let Some(skill) = store.find(&name) else {
                bail!("skill '{name}' not found (see `hermes skills list`)");
            };
            let text = store.read(&name, None)?;
            writeln!(out, "{}", text.trim_end())?;
            let linked = store.linked_files(&skill);
            if !linked.is_empty() {
                writeln!(out, "\nLinked files:")?;
                for file in linked.iter().flat_map(|(_, f)| f) {
                    writeln!(out, "  {file}")?;
                }
            }
            writeln!(out, "\nPath: {}", skill.dir.display())?;
        }
        SkillsAction::Create {
            name,
            from,
            description,
            category,
        } => {
            let content = match from {
                Some(path) => std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?,
                None => stub(&name, description.as_deref()),
            };
            let dir = store.create(&name, &content, category.as_deref())?;
            writeln!(out, "Created skill '{name}' at {}", dir.display())?;
        }
        SkillsAction::Delete { name } => {
            let dir = store.delete(&name)?;
            writeln!(out, "Deleted skill '{name}' ({})", dir.display())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn stub(name: &str, description: Option<&str>) -> String {
    let description = description.unwrap_or("Describe when this skill applies.");
    let description = serde_json::to_string(description).unwrap_or_else(|_| "\"\"".into());
    format!(
        "---\nname: {name}\ndescription: {description}\nversion: 0.1.0\n---\n# {name}\n\n\
         ## When to use\n\n## Steps\n\n1. \n\n## Pitfalls\n\n## Verification\n"
    )
}

/// `name — description` lines for the installed skills (the REPL's `/skills`).
pub fn listing(hermes_home: &std::path::Path) -> String {
    let skills = SkillStore::for_home(hermes_home).discover();
    if skills.is_empty() {
        return "No skills installed yet (create one with `hermes skills create`).\n".to_owned();
    }
    let mut out = String::new();
    for s in skills {
        out.push_str(&format!("  /{:<24} {}\n", s.name, s.description));
    }
    out
}
