//! Rules that need the whole pipeline: remote or decoded content piped
//! into a shell, what a stage feeds a shell or interpreter reading stdin
//! (its script), and what it feeds `xargs` (its arguments).

use super::commands::{Command, SHELLS};
use super::detect::{Acc, analyze_isolated};
use super::expand::{self, Env};
use super::interp;
use super::parse::Simple;

/// Rules that need the whole pipeline: content fed to a shell or interpreter.
pub(crate) fn check_pipeline(
    stages: &[Simple],
    commands: &[Command],
    depth: usize,
    env: &Env,
    acc: &mut Acc,
) {
    for (i, cmd) in commands.iter().enumerate() {
        let Some(name) = cmd.name() else { continue };
        let later_shell = commands[i + 1..].iter().any(|c| {
            c.name()
                .is_some_and(|n| SHELLS.contains(&n) || interp::flag_of(n).is_some())
        });
        if !later_shell {
            continue;
        }
        match name {
            "curl" | "wget" | "fetch" | "aria2c" | "http" | "xh" => {
                acc.danger("pipe remote content to shell");
            }
            "base64" | "base32" | "base16" | "basenc"
                if cmd.has("-d") || cmd.has("-D") || cmd.has("--decode") =>
            {
                acc.danger("pipe decoded content to shell (possible command obfuscation)");
            }
            "xxd" if cmd.has("-r") => {
                acc.danger("pipe xxd-decoded content to shell (possible command obfuscation)");
            }
            "tr" | "rev" => {
                acc.danger("pipe tr-transformed output to shell (possible command obfuscation)");
            }
            "openssl" if cmd.has("-d") || cmd.has("-D") => {
                acc.danger("pipe openssl-decoded content to shell (possible command obfuscation)");
            }
            _ => {}
        }
    }
    feed_to_shell(stages, commands, depth, env, acc);
    feed_to_xargs(stages, commands, depth, env, acc);
}

/// `echo / | xargs rm -rf`: what a stage feeds xargs becomes arguments.
fn feed_to_xargs(stages: &[Simple], commands: &[Command], depth: usize, env: &Env, acc: &mut Acc) {
    for (i, cmd) in commands.iter().enumerate().skip(1) {
        if cmd.name() != Some("xargs") {
            continue;
        }
        let producers = super::parse::Script {
            nodes: vec![super::parse::Node::Pipeline {
                stages: stages[..i].to_vec(),
                background: false,
            }],
        };
        if let Some(fed) = expand::static_output_of_script(&producers, env, depth + 1) {
            let x = super::wrappers::xargs(cmd.args());
            super::wrappers::xargs_run(&x, Some(&fed), depth, env, acc);
        }
    }
}

/// `echo 'rm -rf /' | sh`, `echo cm0… | base64 -d | bash`, `cat <<EOF | bash`:
/// what a stage feeds a shell (or an interpreter) reading stdin is its script.
fn feed_to_shell(stages: &[Simple], commands: &[Command], depth: usize, env: &Env, acc: &mut Acc) {
    for (i, cmd) in commands.iter().enumerate().skip(1) {
        let Some(name) = cmd.name() else { continue };
        let is_shell = SHELLS.contains(&name)
            && !cmd
                .args()
                .iter()
                .any(|a| a.text.starts_with('-') && a.text[1..].contains('c'));
        let is_interp =
            interp::flag_of(name).is_some() && !cmd.args().iter().any(|a| !a.text.starts_with('-'));
        if !is_shell && !is_interp {
            continue;
        }
        let producers = super::parse::Script {
            nodes: vec![super::parse::Node::Pipeline {
                stages: stages[..i].to_vec(),
                background: false,
            }],
        };
        let fed = expand::static_output_of_script(&producers, env, depth + 1);
        let bodies: Vec<&String> = stages[..i].iter().flat_map(|s| &s.heredocs).collect();
        if !bodies.is_empty() {
            acc.danger("shell execution via heredoc");
        }
        let texts = fed.into_iter().chain(bodies.into_iter().cloned());
        for text in texts {
            if is_shell {
                analyze_isolated(&text, depth + 1, env, acc);
            } else {
                interp::inspect_code(&text, depth, env, acc);
            }
        }
    }
}
