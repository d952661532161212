//! Profiles, as the reference lays them out: separate homes under
//! `<root>/profiles/<name>` (the root is `~/.hermes`, or `HERMES_HOME` when it
//! points elsewhere), picked per command with `-p NAME` or stickily with
//! `hermes profile use NAME` (`<root>/active_profile`). The choice is made
//! before anything else reads the home: the binary runs itself again with
//! `HERMES_HOME` set to the profile, so every part of it sees one home.

use std::path::{Path, PathBuf};

/// Set in the re-run process: the profile is already chosen.
const RESOLVED: &str = "HERMES_PROFILE_RESOLVED";

/// The root file naming the sticky profile.
pub(crate) const ACTIVE_FILE: &str = "active_profile";

/// Top-level flags that take a value (their value is not a `-p`).
pub(crate) const VALUE_FLAGS: &[&str] = &[
    "-z",
    "--oneshot",
    "-m",
    "--model",
    "--provider",
    "-t",
    "--toolsets",
    "-r",
    "--resume",
    "-s",
    "--skills",
];

/// What the command line and the sticky choice ask for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Choice {
    /// Run as is.
    Keep,
    /// Run again with `HERMES_HOME = home` and these arguments.
    Switch {
        /// The profile's home.
        home: PathBuf,
        /// The arguments without `-p NAME`.
        args: Vec<String>,
    },
    /// Say this and stop.
    Fail(String),
}

/// `~/.hermes`.
pub(crate) fn native_root(home: Option<&str>) -> Option<PathBuf> {
    home.map(|h| Path::new(h).join(".hermes"))
}

/// The root that holds `profiles/` and `active_profile`.
pub(crate) fn root(hermes_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    let native = native_root(home);
    let Some(env_home) = hermes_home.filter(|h| !h.is_empty()).map(PathBuf::from) else {
        return native;
    };
    if let Some(native) = &native
        && env_home.starts_with(native)
    {
        return Some(native.clone());
    }
    if env_home.parent().and_then(Path::file_name) == Some("profiles".as_ref()) {
        return env_home
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf);
    }
    Some(env_home)
}

/// The canonical name: `default` in any case, others lower-cased.
pub(crate) fn normalize(name: &str) -> String {
    let trimmed = name.trim();
    if trimmed.eq_ignore_ascii_case("default") {
        "default".to_owned()
    } else {
        trimmed.to_lowercase()
    }
}

/// Whether `name` may name a profile (`[a-z0-9][a-z0-9_-]{0,63}`).
pub(crate) fn valid(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 64
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_' || *b == b'-')
}

/// The home of profile `name` under `root`.
pub(crate) fn dir(root: &Path, name: &str) -> PathBuf {
    if name == "default" {
        root.to_path_buf()
    } else {
        root.join("profiles").join(name)
    }
}

/// The sticky profile (`default` when none).
pub(crate) fn active(root: &Path) -> String {
    std::fs::read_to_string(root.join(ACTIVE_FILE))
        .ok()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "default".to_owned())
}

/// The names of every profile, `default` first.
pub(crate) fn names(root: &Path) -> Vec<String> {
    let mut named: Vec<String> = std::fs::read_dir(root.join("profiles"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| valid(n))
        .collect();
    named.sort();
    std::iter::once("default".to_owned()).chain(named).collect()
}

/// Where `-p NAME` is in `args`: its index, how many words, and the name.
fn flag(args: &[String]) -> Option<(usize, usize, String)> {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "--" {
            return None;
        }
        // `mcp add … --args CMD…`: what follows is the server's command line.
        if arg == "--args"
            && args[..i].iter().any(|a| a == "mcp")
            && args[..i].iter().any(|a| a == "add")
        {
            return None;
        }
        if (arg == "-p" || arg == "--profile") && i + 1 < args.len() {
            return Some((i, 2, args[i + 1].clone()));
        }
        if let Some(name) = arg.strip_prefix("--profile=") {
            return Some((i, 1, name.to_owned()));
        }
        i += if VALUE_FLAGS.contains(&arg) { 2 } else { 1 };
    }
    None
}

/// Decides the profile for `args` given the environment variable lookup.
pub(crate) fn choose(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Choice {
    let hermes_home = env("HERMES_HOME");
    let Some(root) = root(hermes_home.as_deref(), env("HOME").as_deref()) else {
        return Choice::Keep;
    };
    let (name, rest) = match flag(args) {
        // An explicit `-p` always counts (even in a hermes started by one:
        // the flag was taken off the line before it re-ran).
        Some((at, words, name)) => {
            let mut rest = args.to_vec();
            rest.drain(at..at + words);
            (normalize(&name), rest)
        }
        // A process this one re-ran already has its profile.
        None if env(RESOLVED).is_some() => return Choice::Keep,
        None => {
            // A home that already is a profile stays; otherwise the sticky one.
            if hermes_home
                .as_deref()
                .map(Path::new)
                .and_then(Path::parent)
                .and_then(Path::file_name)
                == Some("profiles".as_ref())
            {
                return Choice::Keep;
            }
            let sticky = active(&root);
            if sticky == "default" {
                return Choice::Keep;
            }
            (sticky, args.to_vec())
        }
    };
    if !valid(&name) && name != "default" {
        return Choice::Fail(format!(
            "'{name}' is not a profile name (lowercase letters, digits, - and _; 64 at most)"
        ));
    }
    let home = dir(&root, &name);
    if name != "default" && !home.is_dir() {
        return Choice::Fail(format!(
            "Profile '{name}' does not exist. Create it with: hermes profile create {name}"
        ));
    }
    Choice::Switch { home, args: rest }
}

/// Runs this binary again as `choice` says (never returns on success).
pub(crate) fn switch(home: &Path, args: &[String]) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return e,
    };
    std::process::Command::new(exe)
        .args(args)
        .env("HERMES_HOME", home)
        .env(RESOLVED, "1")
        .exec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn the_root_is_the_native_home_or_the_parent_of_a_profile() {
        let home = Some("/home/ann");
        assert_eq!(root(None, home), Some("/home/ann/.hermes".into()));
        assert_eq!(
            root(Some("/home/ann/.hermes/profiles/work"), home),
            Some("/home/ann/.hermes".into())
        );
        assert_eq!(
            root(Some("/opt/data/profiles/work"), home),
            Some("/opt/data".into())
        );
        assert_eq!(root(Some("/opt/data"), home), Some("/opt/data".into()));
    }

    #[test]
    fn a_rerun_process_keeps_its_profile_unless_told_another() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("profiles/work")).unwrap();
        std::fs::write(root.path().join(ACTIVE_FILE), "work\n").unwrap();
        let home = root.path().to_string_lossy().into_owned();
        let env = |rerun: bool| {
            let home = home.clone();
            move |name: &str| match name {
                "HERMES_HOME" => Some(home.clone()),
                "HERMES_PROFILE_RESOLVED" if rerun => Some("1".into()),
                _ => None,
            }
        };
        assert!(matches!(
            choose(&words("status"), &env(false)),
            Choice::Switch { .. }
        ));
        assert_eq!(choose(&words("status"), &env(true)), Choice::Keep);
        match choose(&words("-p default status"), &env(true)) {
            Choice::Switch { home: to, args } => {
                assert_eq!(to, root.path());
                assert_eq!(args, words("status"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_flag_is_found_past_value_flags_and_not_in_a_servers_arguments() {
        assert_eq!(flag(&words("-p work chat")).unwrap().2, "work");
        assert_eq!(
            flag(&words("chat -q hi --profile coder")).unwrap().2,
            "coder"
        );
        assert_eq!(flag(&words("--profile=x")).unwrap(), (0, 1, "x".into()));
        assert_eq!(flag(&words("-m -p chat")), None, "-p is -m's value");
        assert_eq!(flag(&words("mcp add d --args docker -p prof")), None);
        assert!(valid("work_2-x") && !valid("Work") && !valid("-x") && !valid("no:xdist"));
    }
}
