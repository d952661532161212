//! `hermes gateway install|uninstall|start|stop|restart`: the gateway as a
//! systemd service — a user unit by default, a system unit with `--system`
//! — one per profile (`hermes-gateway-<profile>`). Where systemd is not
//! there it says so and prints the command to run instead.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;
use hermes_session::Setup;

/// `--system`: a system unit (needs root) instead of the user's.
#[derive(Debug, Args)]
pub struct Scope {
    /// The system's systemd (/etc/systemd/system, run as root) instead of the user's.
    #[arg(long)]
    system: bool,
}

/// `hermes gateway install` flags.
#[derive(Debug, Args)]
pub struct InstallArgs {
    #[command(flatten)]
    scope: Scope,
    /// Only write the unit file; do not call systemctl.
    #[arg(long = "no-enable")]
    no_enable: bool,
    /// Print the unit and where it would go; write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// The profile a home is (`profiles/<name>`), for the unit's name and ExecStart.
fn profile_of(home: &Path) -> Option<String> {
    (home.parent()?.file_name()? == "profiles")
        .then(|| home.file_name().map(|n| n.to_string_lossy().into_owned()))
        .flatten()
}

/// `hermes-gateway`, or `hermes-gateway-<profile>`.
fn unit_name(home: &Path) -> String {
    profile_of(home).map_or_else(
        || "hermes-gateway".to_owned(),
        |p| format!("hermes-gateway-{p}"),
    )
}

/// The unit for this binary and home (a system unit runs as `user`).
fn unit_text(exe: &Path, home: &Path, user: Option<&str>) -> String {
    let profile = profile_of(home);
    let flag = profile
        .as_ref()
        .map_or_else(String::new, |p| format!(" -p {p}"));
    let label = profile.map_or_else(String::new, |p| format!(" (profile {p})"));
    let user_line = user.map_or_else(String::new, |u| format!("User={u}\n"));
    let wanted = if user.is_some() {
        "multi-user.target"
    } else {
        "default.target"
    };
    format!(
        "[Unit]\nDescription=Hermes Agent gateway{label}\nAfter=network-online.target\n\n\
         [Service]\nType=simple\n{user_line}Environment=HERMES_HOME={home}\n\
         ExecStart={exe}{flag} gateway run --replace\n\
         Restart=on-failure\nRestartSec=5\nKillSignal=SIGTERM\nTimeoutStopSec=40\n\n\
         [Install]\nWantedBy={wanted}\n",
        home = home.display(),
        exe = exe.display()
    )
}

/// Where the unit file goes.
fn unit_dir(setup: &Setup, scope: &Scope) -> Result<PathBuf> {
    if scope.system {
        return Ok(PathBuf::from("/etc/systemd/system"));
    }
    let config = setup
        .env
        .get("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| setup.env.get("HOME").map(|h| Path::new(h).join(".config")))
        .ok_or_else(|| anyhow::anyhow!("HOME is not set: cannot find ~/.config/systemd/user"))?;
    Ok(config.join("systemd/user"))
}

/// `systemctl [--user] ARGS…`; whether it succeeded.
fn systemctl(scope: &Scope, args: &[&str]) -> bool {
    let mut command = std::process::Command::new("systemctl");
    if !scope.system {
        command.arg("--user");
    }
    command
        .args(args)
        .status()
        .is_ok_and(|status| status.success())
}

/// The command a person runs by hand.
fn by_hand(scope: &Scope, args: &str) -> String {
    if scope.system {
        format!("sudo systemctl {args}")
    } else {
        format!("systemctl --user {args}")
    }
}

/// `hermes gateway install`.
pub(crate) fn install(setup: &Setup, args: &InstallArgs) -> Result<ExitCode> {
    let exe = std::env::current_exe()?;
    let name = unit_name(setup.home.root());
    let path = unit_dir(setup, &args.scope)?.join(format!("{name}.service"));
    let user = args
        .scope
        .system
        .then(|| setup.env.get("USER").unwrap_or("root").to_owned());
    let text = unit_text(&exe, setup.home.root(), user.as_deref());
    let mut out = std::io::stdout().lock();
    if args.dry_run {
        writeln!(out, "# {}\n{text}", path.display())?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if let Err(e) = std::fs::write(&path, text) {
        bail!(
            "cannot write {}: {e}{}",
            path.display(),
            if args.scope.system {
                " (a system unit needs root: sudo)"
            } else {
                ""
            }
        );
    }
    writeln!(out, "Wrote {}", path.display())?;
    let manual = by_hand(
        &args.scope,
        &format!("daemon-reload && systemctl enable --now {name}"),
    );
    if args.no_enable {
        writeln!(out, "Enable it with: {manual}")?;
        return Ok(ExitCode::SUCCESS);
    }
    if systemctl(&args.scope, &["daemon-reload"])
        && systemctl(&args.scope, &["enable", "--now", &name])
    {
        writeln!(
            out,
            "Enabled and started {name} ({})",
            by_hand(&args.scope, &format!("status {name}"))
        )?;
        Ok(ExitCode::SUCCESS)
    } else {
        writeln!(
            out,
            "systemctl did not succeed (no systemd session here?); start it yourself: {manual}\n\
             or run the gateway in the foreground: hermes gateway run"
        )?;
        Ok(ExitCode::FAILURE)
    }
}

/// `hermes gateway uninstall`.
pub(crate) fn uninstall(setup: &Setup, scope: &Scope) -> Result<ExitCode> {
    let name = unit_name(setup.home.root());
    let path = unit_dir(setup, scope)?.join(format!("{name}.service"));
    let mut out = std::io::stdout().lock();
    if !path.exists() {
        writeln!(
            out,
            "No {name} unit is installed ({} is not there).",
            path.display()
        )?;
        return Ok(ExitCode::FAILURE);
    }
    let disabled = systemctl(scope, &["disable", "--now", &name]);
    std::fs::remove_file(&path)?;
    let _ = systemctl(scope, &["daemon-reload"]);
    writeln!(out, "Removed {}", path.display())?;
    if !disabled {
        writeln!(
            out,
            "systemctl could not disable it (no systemd session here?); if it still runs: {}",
            by_hand(scope, &format!("disable --now {name}"))
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `hermes gateway start|restart`.
pub(crate) fn control(setup: &Setup, scope: &Scope, verb: &str) -> Result<ExitCode> {
    let name = unit_name(setup.home.root());
    let mut out = std::io::stdout().lock();
    if systemctl(scope, &[verb, &name]) {
        writeln!(
            out,
            "{name}: {verb} done ({})",
            by_hand(scope, &format!("status {name}"))
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "systemctl could not {verb} {name}: is it installed (hermes gateway install) and is there a \
         systemd session? Without systemd run it in the foreground: hermes gateway run"
    )?;
    Ok(ExitCode::FAILURE)
}

/// `hermes gateway stop`: the service, else the gateway running for this home.
pub(crate) fn stop(setup: &Setup, scope: &Scope) -> Result<ExitCode> {
    let name = unit_name(setup.home.root());
    let mut out = std::io::stdout().lock();
    if systemctl(scope, &["stop", &name]) {
        writeln!(out, "{name}: stopped")?;
        return Ok(ExitCode::SUCCESS);
    }
    match hermes_gateway::lock::running_pid(setup.home.root()) {
        Some(pid) => {
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            )?;
            writeln!(
                out,
                "Stopped the gateway running for this home (pid {pid})."
            )?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            writeln!(out, "No gateway runs for {}.", setup.home.root().display())?;
            Ok(ExitCode::FAILURE)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_name_the_profile_and_a_system_unit_its_user() {
        let home = Path::new("/home/ann/.hermes/profiles/bot");
        assert_eq!(unit_name(home), "hermes-gateway-bot");
        assert_eq!(unit_name(Path::new("/home/ann/.hermes")), "hermes-gateway");
        let text = unit_text(Path::new("/usr/bin/hermes"), home, Some("ann"));
        assert!(text.contains("ExecStart=/usr/bin/hermes -p bot gateway run --replace"));
        assert!(text.contains("User=ann\n") && text.contains("WantedBy=multi-user.target"));
        let user = unit_text(Path::new("/usr/bin/hermes"), Path::new("/h/.hermes"), None);
        assert!(!user.contains("User=") && user.contains("WantedBy=default.target"));
    }
}
