//! The `checkpoints:` section of config.yaml, with the reference's
//! defaults: the session's [`Checkpoints`] and the store's daily upkeep.

use std::time::SystemTime;

use hermes_tools::checkpoints::{Checkpoints, PruneReport, PruneRules};
use serde_json::Value;

/// The session's checkpoints: on when `forced` (`--checkpoints`), or, when
/// `from_config`, with `checkpoints.enabled` (`checkpoints: true` is short for
/// it); `max_snapshots` per project (20); the store held under
/// `max_total_size_mb` (500, 0 for no cap).
pub fn checkpoints(setup: &crate::Setup, forced: bool, from_config: bool) -> Checkpoints {
    let section = setup.config.get("checkpoints");
    let enabled = forced
        || from_config
            && match section {
                Some(Value::Bool(on)) => *on,
                Some(v) => v.get("enabled").and_then(Value::as_bool) == Some(true),
                None => false,
            };
    let max = usize::try_from(number(section, "max_snapshots", 20)).unwrap_or(20);
    Checkpoints::new(setup.home.root(), enabled, max).with_size_cap(number(
        section,
        "max_total_size_mb",
        500,
    ))
}

/// The checkpoints of a session whose commands run in `env`: on this host's
/// store for the host and its sandbox, else in a store inside `env` (where
/// the files are), with the same switches as [`checkpoints`].
pub fn checkpoints_in(
    setup: &crate::Setup,
    forced: bool,
    from_config: bool,
    env: &std::sync::Arc<dyn hermes_env::Environment>,
) -> Checkpoints {
    let on_host = checkpoints(setup, forced, from_config);
    if env.is_host() {
        return on_host;
    }
    let max =
        usize::try_from(number(setup.config.get("checkpoints"), "max_snapshots", 20)).unwrap_or(20);
    Checkpoints::in_environment(env.clone(), on_host.enabled(), max)
}

/// The reference's startup sweep of the checkpoint store (whether or not
/// checkpoints are on): with `checkpoints.auto_prune` (true), at most once
/// per `min_interval_hours` (24), drops projects whose directory is gone
/// (`delete_orphans`, true) or untouched for `retention_days` (7), and
/// evicts the oldest checkpoints past `max_total_size_mb` (500). `None`
/// when it did not run. It runs `git gc`: call it off the async runtime.
pub fn checkpoint_upkeep(setup: &crate::Setup, now: SystemTime) -> Option<PruneReport> {
    let section = setup.config.get("checkpoints");
    if !flag(section, "auto_prune", true) {
        return None;
    }
    let rules = PruneRules {
        retention_days: number(section, "retention_days", 7),
        delete_orphans: flag(section, "delete_orphans", true),
        max_total_size_mb: number(section, "max_total_size_mb", 500),
    };
    let interval = number(section, "min_interval_hours", 24);
    Checkpoints::new(setup.home.root(), false, 1).auto_prune(&rules, interval, now)
}

/// A whole number of the section; the reference takes `int()` of it, so
/// `7.5` is 7 and `"7"` is 7; negative is 0.
fn number(section: Option<&Value>, key: &str, default: u64) -> u64 {
    match section.and_then(|s| s.get(key)) {
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().map(|f| f.max(0.0) as u64))
            .unwrap_or(0),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(default),
        _ => default,
    }
}

fn flag(section: Option<&Value>, key: &str, default: bool) -> bool {
    section
        .and_then(|s| s.get(key))
        .and_then(Value::as_bool)
        .unwrap_or(default)
}
