//! Commands run somewhere else on the user's behalf: `ssh host CMD` (and
//! the local `ProxyCommand`), `docker`/`podman`/`nerdctl exec`, `kubectl
//! exec --`. Destroying a remote machine or a container is still
//! destruction, so what they run is analysed like a local command.

use super::detect::{Acc, analyze_isolated};
use super::expand::{Env, Field};
use super::wrappers::{join, run_argv, run_text, skip_options};

/// `ssh [opts] HOST CMD…`: the remote shell runs CMD; `-o ProxyCommand=…`
/// and `LocalCommand` run locally.
pub(crate) fn ssh(args: &[Field], depth: usize, env: &Env, acc: &mut Acc) {
    const VALUED: &[&str] = &[
        "-B", "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o",
        "-p", "-Q", "-R", "-S", "-W", "-w",
    ];
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') {
            break;
        }
        let option = if t == "-o" {
            args.get(i + 1).map(|f| f.text.clone())
        } else {
            t.strip_prefix("-o").map(str::to_owned)
        };
        if let Some(option) = option {
            let lower = option.to_ascii_lowercase();
            for key in ["proxycommand", "localcommand", "knownhostscommand"] {
                if let Some(rest) = lower.strip_prefix(key) {
                    let value = option[option.len() - rest.len()..]
                        .trim_start_matches(['=', ' '])
                        .to_owned();
                    analyze_isolated(&value, depth + 1, env, acc);
                }
            }
        }
        i += if VALUED.contains(&t) { 2 } else { 1 };
    }
    let remote = args.get(i + 1..).unwrap_or(&[]);
    if remote.is_empty() {
        return;
    }
    let joined = join(remote);
    run_text(&joined, "ssh command that cannot be known", depth, env, acc);
}

/// `docker|podman|nerdctl exec [opts] CONTAINER CMD…`, `kubectl exec … -- CMD…`.
pub(crate) fn container_exec(tool: &str, args: &[Field], depth: usize, env: &Env, acc: &mut Acc) {
    let sub = args.first().map(|a| a.text.as_str());
    let rest = match (tool, sub) {
        (_, Some("exec")) => &args[1..],
        ("docker" | "podman" | "nerdctl", Some("container"))
            if args.get(1).is_some_and(|a| a.text == "exec") =>
        {
            &args[2..]
        }
        _ => return,
    };
    if tool == "kubectl" || tool == "oc" {
        if let Some(dash) = rest.iter().position(|a| a.text == "--") {
            run_argv(rest[dash + 1..].to_vec(), depth, env, acc);
        }
        return;
    }
    const VALUED: &[&str] = &[
        "-e",
        "--env",
        "--env-file",
        "-u",
        "--user",
        "-w",
        "--workdir",
        "--detach-keys",
        "--preserve-fds",
    ];
    let skip = skip_options(rest, VALUED);
    // The container name, then the command.
    if let Some(cmd) = rest.get(skip + 1..) {
        run_argv(cmd.to_vec(), depth, env, acc);
    }
}
