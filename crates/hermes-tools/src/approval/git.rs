//! git configuration whose value is a command git runs (`core.pager`,
//! `core.sshCommand`, `!`-aliases …), set for one run with `git -c` or
//! stored with `git config` for later runs.

use super::detect::Acc;
use super::expand::{Env, Field};
use super::wrappers::run_text;

/// git configuration whose value is a command git runs later or now.
fn git_command_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    const EXACT: &[&str] = &[
        "core.pager",
        "core.editor",
        "core.sshcommand",
        "core.askpass",
        "core.fsmonitor",
        "core.gitproxy",
        "sequence.editor",
        "diff.external",
        "gpg.program",
        "gpg.ssh.program",
        "gpg.x509.program",
        "credential.helper",
        "web.browser",
        "uploadpack.packobjectshook",
        "interactive.difffilter",
        "sendemail.sendmailcmd",
    ];
    EXACT.contains(&key.as_str())
        || key.starts_with("pager.")
        || key.starts_with("alias.")
        || (key.starts_with("filter.")
            && (key.ends_with(".clean") || key.ends_with(".smudge") || key.ends_with(".process")))
        || (key.starts_with("diff.") && (key.ends_with(".textconv") || key.ends_with(".command")))
        || (key.starts_with("merge.") && key.ends_with(".driver"))
        || (key.starts_with("remote.")
            && (key.ends_with(".uploadpack") || key.ends_with(".receivepack")))
        || ((key.starts_with("mergetool.") || key.starts_with("difftool."))
            && key.ends_with(".cmd"))
}

/// A git configuration `key = value` the command sets: a command-valued key
/// has its command judged; `core.hooksPath` points hooks at a directory.
pub(crate) fn git_setting(key: &str, value: &Field, depth: usize, env: &Env, acc: &mut Acc) {
    let lower = key.to_ascii_lowercase();
    if lower == "core.hookspath" {
        acc.danger("git hooks path changed (its scripts run on later git commands)");
        return;
    }
    if !git_command_key(&lower) {
        return;
    }
    let text = value.text.trim();
    let text = if lower.starts_with("alias.") || lower == "credential.helper" {
        match text.strip_prefix('!') {
            Some(shell) => shell,
            None => return,
        }
    } else {
        text
    };
    let mut f = value.clone();
    f.text = text.to_owned();
    run_text(
        &f,
        "git configuration runs a command that cannot be known",
        depth,
        env,
        acc,
    );
}

/// `git -c k=v …`, `git --config-env=k=VAR`, `git config [scope] k v`.
pub(crate) fn git(argv: &[Field], depth: usize, env: &Env, acc: &mut Acc) {
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        let t = a.text.as_str();
        if t == "-c" {
            if let Some(kv) = argv.get(i + 1)
                && let Some((k, v)) = kv.text.split_once('=')
            {
                let mut value = kv.clone();
                value.text = v.to_owned();
                git_setting(k, &value, depth, env, acc);
            }
            i += 2;
        } else if let Some(kv) = t.strip_prefix("--config-env=").or_else(|| {
            (t == "--config-env")
                .then(|| argv.get(i + 1).map(|f| f.text.as_str()))
                .flatten()
        }) {
            if let Some((k, _)) = kv.split_once('=')
                && (git_command_key(k) || k.eq_ignore_ascii_case("core.hookspath"))
            {
                acc.danger("git configuration runs a command that cannot be known");
            }
            i += if t == "--config-env" { 2 } else { 1 };
        } else if matches!(
            t,
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path"
        ) {
            i += 2;
        } else if t.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    if argv.get(i).is_some_and(|a| a.text == "config") {
        let rest: Vec<&Field> = argv[i + 1..]
            .iter()
            .filter(|a| !a.text.starts_with('-'))
            .collect();
        let rest: Vec<&Field> = match rest.first().map(|a| a.text.as_str()) {
            Some("set") => rest[1..].to_vec(),
            _ => rest,
        };
        if let [key, value, ..] = rest.as_slice() {
            git_setting(&key.text, value, depth, env, acc);
        }
    }
}
