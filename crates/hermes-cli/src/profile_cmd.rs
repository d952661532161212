//! `hermes profile`: list, use, create (optionally cloned), show, rename,
//! delete, export and import profiles — separate Hermes homes under
//! `<root>/profiles/`, in the reference's layout so either program opens the
//! other's.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};

use crate::profile::{self, ACTIVE_FILE};

/// `hermes profile` arguments.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    #[command(subcommand)]
    action: Option<ProfileAction>,
}

#[derive(Debug, Subcommand)]
enum ProfileAction {
    /// Every profile, the active one marked.
    #[command(alias = "ls")]
    List,
    /// Make a profile the default for every command (`default`: the root home).
    Use {
        /// The profile.
        profile_name: String,
    },
    /// Create a profile (empty, or a copy of the active one's settings).
    Create {
        /// The new profile's name.
        profile_name: String,
        /// Copy config.yaml, .env, SOUL.md, memories and skills from the active profile.
        #[arg(long)]
        clone: bool,
        /// Copy everything but session history and logs from the active profile.
        #[arg(long)]
        clone_all: bool,
        /// Clone from this profile instead of the active one.
        #[arg(long)]
        clone_from: Option<String>,
    },
    /// A profile's home, model, gateway and sizes.
    Show {
        /// The profile.
        profile_name: String,
    },
    /// Rename a profile.
    Rename {
        /// Its name now.
        old_name: String,
        /// Its new name.
        new_name: String,
    },
    /// Delete a profile and everything in it.
    #[command(alias = "rm")]
    Delete {
        /// The profile.
        profile_name: String,
        /// Do not ask.
        #[arg(short = 'y', long)]
        yes: bool,
    },
    /// Write a profile to a .tar.gz (session history included; logs left out).
    Export {
        /// The profile.
        profile_name: String,
        /// The archive (default: ./NAME.tar.gz).
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
    },
    /// Make a profile from an exported .tar.gz.
    Import {
        /// The archive.
        archive: PathBuf,
        /// The new profile's name (default: the archive's).
        #[arg(long)]
        name: Option<String>,
    },
}

/// Folders every new profile starts with (the reference's).
const PROFILE_DIRS: &[&str] = &[
    "memories",
    "sessions",
    "skills",
    "skins",
    "logs",
    "plans",
    "workspace",
    "cron",
    "home",
];

/// What `--clone` copies, when the source has it.
const CLONE_FILES: &[&str] = &[
    "config.yaml",
    ".env",
    "SOUL.md",
    "memories/MEMORY.md",
    "memories/USER.md",
];

/// Left behind by `--clone-all`: history, logs and this process's runtime files.
const CLONE_ALL_SKIP: &[&str] = &[
    "state.db",
    "state.db-wal",
    "state.db-shm",
    "sessions",
    "logs",
    "checkpoints",
    "profiles",
    "active_profile",
    "gateway.pid",
    "gateway_state.json",
    "dashboard.pid",
    "processes.json",
];

/// The root, from the environment (`-p` already applied to `HERMES_HOME`).
fn root() -> Result<PathBuf> {
    profile::root(
        std::env::var("HERMES_HOME").ok().as_deref(),
        std::env::var("HOME").ok().as_deref(),
    )
    .context("cannot locate the Hermes root: set HOME or HERMES_HOME")
}

/// The name of the profile this process runs as.
fn current(root: &Path) -> String {
    let home = std::env::var("HERMES_HOME").ok().map(PathBuf::from);
    match home {
        Some(home) if home.parent() == Some(&root.join("profiles")) => home
            .file_name()
            .map_or_else(|| "default".into(), |n| n.to_string_lossy().into_owned()),
        _ => "default".into(),
    }
}

fn checked(name: &str) -> Result<String> {
    let name = profile::normalize(name);
    if name != "default" && !profile::valid(&name) {
        bail!("'{name}' is not a profile name (lowercase letters, digits, - and _; 64 at most)");
    }
    Ok(name)
}

fn existing(root: &Path, name: &str) -> Result<(String, PathBuf)> {
    let name = checked(name)?;
    let dir = profile::dir(root, &name);
    if !dir.is_dir() {
        bail!("Profile '{name}' does not exist. Create it with: hermes profile create {name}");
    }
    Ok((name, dir))
}

/// The model config.yaml names, if any.
fn model_of(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("config.yaml")).ok()?;
    let tree = hermes_state::config_edit::parse_user_yaml(&text, &dir.join("config.yaml")).ok()?;
    match &tree["model"] {
        serde_json::Value::String(m) => Some(m.clone()),
        serde_json::Value::Object(m) => {
            m.get("default").and_then(|v| v.as_str()).map(str::to_owned)
        }
        _ => None,
    }
}

fn skill_count(dir: &Path) -> usize {
    hermes_state::skills::SkillStore::for_home(dir)
        .discover_all()
        .len()
}

/// Runs `hermes profile …`.
pub fn run(args: ProfileArgs) -> Result<ExitCode> {
    let root = root()?;
    let mut out = std::io::stdout().lock();
    match args.action {
        None => current_summary(&mut out, &root)?,
        Some(ProfileAction::List) => list(&mut out, &root)?,
        Some(ProfileAction::Use { profile_name }) => {
            let (name, _) = existing(&root, &profile_name)?;
            let path = root.join(ACTIVE_FILE);
            if name == "default" {
                let _ = std::fs::remove_file(&path);
                writeln!(out, "Switched to: default ({})", root.display())?;
            } else {
                std::fs::create_dir_all(&root)?;
                std::fs::write(&path, format!("{name}\n"))?;
                writeln!(out, "Switched to: {name}")?;
            }
        }
        Some(ProfileAction::Create {
            profile_name,
            clone,
            clone_all,
            clone_from,
        }) => create(&mut out, &root, &profile_name, clone, clone_all, clone_from)?,
        Some(ProfileAction::Show { profile_name }) => show(&mut out, &root, &profile_name)?,
        Some(ProfileAction::Rename { old_name, new_name }) => {
            rename(&mut out, &root, &old_name, &new_name)?;
        }
        Some(ProfileAction::Delete { profile_name, yes }) => {
            return delete(&mut out, &root, &profile_name, yes);
        }
        Some(ProfileAction::Export {
            profile_name,
            output,
        }) => {
            let (name, dir) = existing(&root, &profile_name)?;
            let output = output.unwrap_or_else(|| PathBuf::from(format!("{name}.tar.gz")));
            export(&dir, &name, &output)?;
            writeln!(out, "Exported profile '{name}' to {}", output.display())?;
        }
        Some(ProfileAction::Import { archive, name }) => {
            let made = import(&root, &archive, name.as_deref())?;
            writeln!(
                out,
                "Imported profile '{made}' ({}).",
                profile::dir(&root, &made).display()
            )?;
            writeln!(
                out,
                "Use it with: hermes -p {made}   (or hermes profile use {made})"
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `hermes profile`: the profile this command runs as.
fn current_summary(out: &mut impl Write, root: &Path) -> Result<()> {
    let name = current(root);
    let dir = profile::dir(root, &name);
    writeln!(
        out,
        "\nActive profile: {name}\nPath:           {}",
        dir.display()
    )?;
    if let Some(model) = model_of(&dir) {
        writeln!(out, "Model:          {model}")?;
    }
    let gateway = hermes_gateway::lock::running_pid(&dir).is_some();
    writeln!(
        out,
        "Gateway:        {}",
        if gateway { "running" } else { "stopped" }
    )?;
    writeln!(out, "Skills:         {} installed\n", skill_count(&dir))?;
    Ok(())
}

/// `hermes profile show NAME`.
fn show(out: &mut impl Write, root: &Path, profile_name: &str) -> Result<()> {
    let (name, dir) = existing(root, profile_name)?;
    writeln!(out, "Profile: {name}\nPath:    {}", dir.display())?;
    writeln!(
        out,
        "Model:   {}",
        model_of(&dir).unwrap_or_else(|| "—".into())
    )?;
    let gateway = hermes_gateway::lock::running_pid(&dir).is_some();
    writeln!(
        out,
        "Gateway: {}",
        if gateway { "running" } else { "stopped" }
    )?;
    writeln!(out, "Skills:  {} installed", skill_count(&dir))?;
    writeln!(
        out,
        "Active:  {}",
        if profile::active(root) == name {
            "yes"
        } else {
            "no"
        }
    )?;
    Ok(())
}

/// `hermes profile rename OLD NEW` (the sticky choice follows it).
fn rename(out: &mut impl Write, root: &Path, old_name: &str, new_name: &str) -> Result<()> {
    let (old, from) = existing(root, old_name)?;
    let new = checked(new_name)?;
    if old == "default" || new == "default" {
        bail!("the default profile is the root home itself: it cannot be renamed");
    }
    let to = profile::dir(root, &new);
    if to.exists() {
        bail!("Profile '{new}' already exists at {}", to.display());
    }
    std::fs::rename(&from, &to)?;
    if profile::active(root) == old {
        std::fs::write(root.join(ACTIVE_FILE), format!("{new}\n"))?;
    }
    writeln!(out, "Renamed profile '{old}' to '{new}' ({})", to.display())?;
    Ok(())
}

fn list(out: &mut impl Write, root: &Path) -> Result<()> {
    let active = profile::active(root);
    writeln!(
        out,
        "\n {:<16} {:<28} {:<12}",
        "Profile", "Model", "Gateway"
    )?;
    writeln!(
        out,
        " {}    {}    {}",
        "─".repeat(15),
        "─".repeat(27),
        "─".repeat(11)
    )?;
    for name in profile::names(root) {
        let dir = profile::dir(root, &name);
        let marker = if name == active { " ◆" } else { "  " };
        let model: String = model_of(&dir)
            .unwrap_or_else(|| "—".into())
            .chars()
            .take(26)
            .collect();
        let gateway = if hermes_gateway::lock::running_pid(&dir).is_some() {
            "running"
        } else {
            "stopped"
        };
        writeln!(out, "{marker}{name:<15} {model:<28} {gateway:<12}")?;
    }
    writeln!(out)?;
    Ok(())
}

fn create(
    out: &mut impl Write,
    root: &Path,
    requested: &str,
    clone: bool,
    clone_all: bool,
    clone_from: Option<String>,
) -> Result<()> {
    let name = checked(requested)?;
    if name == "default" {
        bail!(
            "Cannot create a profile named 'default' — it is the built-in profile ({})",
            root.display()
        );
    }
    let dir = profile::dir(root, &name);
    if dir.exists() {
        bail!("Profile '{name}' already exists at {}", dir.display());
    }
    let cloning = clone || clone_all || clone_from.is_some();
    let source_name = match &clone_from {
        Some(from) => checked(from)?,
        None => current(root),
    };
    let source = profile::dir(root, &source_name);
    if cloning && !source.is_dir() {
        bail!(
            "Source profile '{source_name}' does not exist at {}",
            source.display()
        );
    }
    std::fs::create_dir_all(&dir)?;
    for sub in PROFILE_DIRS {
        std::fs::create_dir_all(dir.join(sub))?;
    }
    if clone_all {
        copy_tree(&source, &dir, &|rel| !CLONE_ALL_SKIP.contains(&rel))?;
        writeln!(out, "\nProfile '{name}' created at {}", dir.display())?;
        writeln!(
            out,
            "Full copy from {source_name} (excluding session history and logs)."
        )?;
    } else if cloning {
        for file in CLONE_FILES {
            let from = source.join(file);
            if from.is_file() {
                std::fs::copy(&from, dir.join(file))?;
            }
        }
        if source.join("skills").is_dir() {
            copy_tree(&source.join("skills"), &dir.join("skills"), &|_| true)?;
        }
        writeln!(out, "\nProfile '{name}' created at {}", dir.display())?;
        writeln!(
            out,
            "Cloned config, .env, SOUL.md, and skills from {source_name}."
        )?;
    } else {
        writeln!(out, "\nProfile '{name}' created at {}", dir.display())?;
    }
    writeln!(
        out,
        "Use it with: hermes -p {name}   (or hermes profile use {name})\n"
    )?;
    Ok(())
}

/// Copies `from` into `to`, top-level entries filtered by `keep` (by name).
fn copy_tree(from: &Path, to: &Path, keep: &dyn Fn(&str) -> bool) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !keep(&name) || name.ends_with(".sock") || name.ends_with(".tmp") {
            continue;
        }
        let kind = entry.file_type()?;
        let target = to.join(&name);
        if kind.is_dir() {
            copy_tree(&entry.path(), &target, &|_| true)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        } else if kind.is_symlink() {
            let link = std::fs::read_link(entry.path())?;
            let _ = std::os::unix::fs::symlink(link, &target);
        }
    }
    Ok(())
}

fn delete(out: &mut impl Write, root: &Path, requested: &str, yes: bool) -> Result<ExitCode> {
    let (name, dir) = existing(root, requested)?;
    if name == "default" {
        bail!("the default profile is the root home itself: it cannot be deleted");
    }
    if hermes_gateway::lock::running_pid(&dir).is_some() {
        bail!(
            "a gateway runs for profile '{name}': stop it first (hermes -p {name} gateway status)"
        );
    }
    if !yes {
        if !std::io::stdin().is_terminal() {
            bail!(
                "deleting profile '{name}' removes its sessions, keys and memory: pass --yes to confirm"
            );
        }
        write!(
            out,
            "Delete profile '{name}' and everything in {}? [y/N]: ",
            dir.display()
        )?;
        out.flush()?;
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            writeln!(out, "Cancelled.")?;
            return Ok(ExitCode::FAILURE);
        }
    }
    std::fs::remove_dir_all(&dir)?;
    if profile::active(root) == name {
        let _ = std::fs::remove_file(root.join(ACTIVE_FILE));
        writeln!(
            out,
            "Deleted profile '{name}'; the active profile is default again."
        )?;
    } else {
        writeln!(out, "Deleted profile '{name}'.")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `tar czf` of the profile under a top folder named after it (logs and
/// runtime files left out).
fn export(dir: &Path, name: &str, output: &Path) -> Result<()> {
    let parent = dir.parent().context("a profile has a parent folder")?;
    let folder = dir.file_name().context("a profile has a name")?;
    let mut tar = std::process::Command::new("tar");
    tar.arg("czf").arg(output).arg("-C").arg(parent);
    for skip in [
        "logs",
        "gateway.pid",
        "gateway_state.json",
        "dashboard.pid",
        "processes.json",
        "profiles",
        "active_profile",
        "*.sock",
    ] {
        tar.arg(format!("--exclude={}/{skip}", folder.to_string_lossy()));
    }
    // The default profile's folder is the root: store it under its name.
    if name == "default" {
        tar.arg(format!(
            "--transform=s,^{},default,",
            folder.to_string_lossy()
        ));
    }
    let status = tar.arg(folder).status().context("cannot run tar")?;
    if !status.success() {
        bail!("tar could not write {}", output.display());
    }
    Ok(())
}

/// Unpacks an export into a new profile, refusing archives that would
/// write outside it.
fn import(root: &Path, archive: &Path, name: Option<&str>) -> Result<String> {
    let listing = std::process::Command::new("tar")
        .arg("tzf")
        .arg(archive)
        .output()
        .context("cannot run tar")?;
    if !listing.status.success() {
        bail!("{} is not a profile archive (.tar.gz)", archive.display());
    }
    let members = String::from_utf8_lossy(&listing.stdout).into_owned();
    let mut tops: Vec<&str> = members
        .lines()
        .filter_map(|m| m.trim_start_matches("./").split('/').next())
        .filter(|t| !t.is_empty())
        .collect();
    tops.sort_unstable();
    tops.dedup();
    if members
        .lines()
        .any(|m| m.starts_with('/') || m.split('/').any(|p| p == ".."))
    {
        bail!(
            "{} holds paths outside its folder: not importing it",
            archive.display()
        );
    }
    let [top] = tops.as_slice() else {
        bail!(
            "{} does not hold exactly one profile folder",
            archive.display()
        );
    };
    let new = checked(name.unwrap_or(top))?;
    if new == "default" {
        bail!("import into a named profile: --name NAME");
    }
    let dest = profile::dir(root, &new);
    if dest.exists() {
        bail!("Profile '{new}' already exists at {}", dest.display());
    }
    let scratch = root
        .join("profiles")
        .join(format!(".import-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let status = std::process::Command::new("tar")
        .arg("xzf")
        .arg(archive)
        .arg("-C")
        .arg(&scratch)
        .arg("--no-same-owner")
        .status()
        .context("cannot run tar")?;
    let moved = status.success() && std::fs::rename(scratch.join(top), &dest).is_ok();
    let _ = std::fs::remove_dir_all(&scratch);
    if !moved {
        bail!("could not unpack {}", archive.display());
    }
    Ok(new)
}
