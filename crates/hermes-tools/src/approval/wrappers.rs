//! Programs that run a command they are given as argv or text, beyond the
//! plain prefix wrappers `commands::unwrap` strips: `find -exec`, `xargs`
//! with what it receives, `script -c`, `flock -c`, GNU `parallel`, and the
//! namespace tools' options; plus the helpers the other runner modules
//! (`awk`, `remote`, `git`, `embedded`) share. Each hands what it runs back
//! to the analysis; what cannot be known is never called safe.

use super::commands;
use super::detect::{Acc, analyze_isolated};
use super::expand::{Env, Field};
use super::parse::Simple;

/// A literal word, as if written in single quotes.
pub(crate) fn literal(text: &str) -> Field {
    Field {
        text: text.to_owned(),
        certain: true,
        source: text.to_owned(),
        ..Field::default()
    }
}

/// Checks `argv` as a command of its own (what a wrapper runs).
pub(crate) fn run_argv(argv: Vec<Field>, depth: usize, env: &Env, acc: &mut Acc) {
    if argv.is_empty() {
        return;
    }
    let sub = commands::unwrap(argv, env, depth + 1, acc);
    commands::check(&Simple::default(), &sub, depth + 1, env, acc);
}

/// Checks `field` as a shell script (a `-c` style payload).
pub(crate) fn run_text(field: &Field, unknown: &str, depth: usize, env: &Env, acc: &mut Acc) {
    if !field.certain {
        acc.danger(unknown);
    }
    analyze_isolated(&field.text, depth + 1, env, acc);
}

/// Words taken by options at the start of `args` (`valued` take the next
/// word unless glued with `=` or, for one-letter ones, written together).
pub(crate) fn skip_options(args: &[Field], valued: &[&str]) -> usize {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if t == "--" {
            return i + 1;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        i += if valued.contains(&t) { 2 } else { 1 };
    }
    i
}

/// `find … -exec CMD {} ;` and `-execdir`/`-ok`/`-okdir`: each runs CMD with
/// the found paths; `{}` stands for every start path when nothing narrows
/// what is found.
pub(crate) fn find_exec(args: &[Field], narrowed: bool, depth: usize, env: &Env, acc: &mut Acc) {
    let starts: Vec<&Field> = args
        .iter()
        .take_while(|a| !a.text.starts_with('-') && a.text != "(" && a.text != "!")
        // Clearing out /tmp is housekeeping, as `commands::check_find` says.
        .filter(|a| a.text.trim_end_matches('/') != "/tmp")
        .collect();
    let mut i = 0;
    while i < args.len() {
        if !matches!(
            args[i].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            i += 1;
            continue;
        }
        let body: Vec<Field> = args[i + 1..]
            .iter()
            .take_while(|a| a.text != ";" && a.text != "+")
            .cloned()
            .collect();
        i += body.len() + 2;
        let fills: Vec<Field> = if narrowed || starts.is_empty() {
            vec![literal("{}")]
        } else {
            starts.iter().map(|s| (*s).clone()).collect()
        };
        for fill in fills {
            let argv: Vec<Field> = body
                .iter()
                .map(|w| {
                    if w.text.contains("{}") {
                        let mut f = w.clone();
                        f.text = w.text.replace("{}", &fill.text);
                        f.certain &= fill.certain;
                        f
                    } else {
                        w.clone()
                    }
                })
                .collect();
            run_argv(argv, depth, env, acc);
        }
    }
}

/// What `xargs [options] [command…]` runs: the command and how it takes
/// its input (`-I R` replaces R; otherwise items are appended).
pub(crate) struct Xargs {
    /// The command words (`echo` when none is given).
    pub(crate) command: Vec<Field>,
    /// `-I`/`-i` replacement string.
    pub(crate) replace: Option<String>,
}

/// Parses xargs' options.
pub(crate) fn xargs(args: &[Field]) -> Xargs {
    const VALUED: &[&str] = &[
        "-I",
        "-n",
        "-L",
        "-P",
        "-s",
        "-d",
        "-E",
        "-a",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-lines",
        "--max-procs",
        "--max-chars",
        "--eof",
        "--process-slot-var",
        "--replace",
    ];
    let mut replace = None;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        if t == "-I" || t == "--replace" {
            replace = args.get(i + 1).map(|f| f.text.clone());
        } else if let Some(r) = t.strip_prefix("-I") {
            replace = Some(r.to_owned());
        } else if t == "-i" {
            replace = Some("{}".into());
        } else if let Some(r) = t.strip_prefix("--replace=").or(t.strip_prefix("-i")) {
            replace = Some(if r.is_empty() {
                "{}".into()
            } else {
                r.to_owned()
            });
        }
        i += if VALUED.contains(&t) { 2 } else { 1 };
    }
    let mut command: Vec<Field> = args.get(i..).unwrap_or(&[]).to_vec();
    if command.is_empty() {
        command.push(literal("echo"));
    }
    Xargs { command, replace }
}

/// Checks what xargs runs given `input` (its stdin when known).
pub(crate) fn xargs_run(x: &Xargs, input: Option<&str>, depth: usize, env: &Env, acc: &mut Acc) {
    let Some(input) = input else {
        // Unknown input: the command as written, and a replacement string
        // that becomes a whole script runs whatever arrives.
        if let Some(r) = &x.replace
            && x.command.iter().any(|w| w.text == *r)
            && x.command
                .first()
                .is_some_and(|c| c.text == *r || commands::SHELLS.contains(&c.text.as_str()))
        {
            acc.danger("xargs runs input it receives as a command");
        }
        run_argv(x.command.clone(), depth, env, acc);
        return;
    };
    let items: Vec<&str> = input.split_whitespace().collect();
    match &x.replace {
        Some(r) => {
            for line in input.lines().filter(|l| !l.trim().is_empty()) {
                let argv = x
                    .command
                    .iter()
                    .map(|w| {
                        let mut f = w.clone();
                        f.text = w.text.replace(r.as_str(), line.trim());
                        f
                    })
                    .collect();
                run_argv(argv, depth, env, acc);
            }
        }
        None => {
            let mut argv = x.command.clone();
            argv.extend(items.iter().map(|i| literal(i)));
            run_argv(argv, depth, env, acc);
        }
    }
}

/// `script -c CMD`, `script -qc CMD`, `script --command=CMD`.
pub(crate) fn script(args: &[Field], depth: usize, env: &Env, acc: &mut Acc) {
    for (i, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        let payload = if let Some(glued) = t.strip_prefix("--command=") {
            let mut f = a.clone();
            f.text = glued.to_owned();
            Some(f)
        } else if t == "--command"
            || (t.starts_with('-') && !t.starts_with("--") && t.ends_with('c'))
        {
            args.get(i + 1).cloned()
        } else {
            None
        };
        if let Some(p) = payload {
            run_text(
                &p,
                "script -c of a command that cannot be known",
                depth,
                env,
                acc,
            );
        }
    }
}

/// `flock [opts] FILE -c CMD` (what is left after `unwrap` took `flock` and FILE).
pub(crate) fn flock_command(argv: &[Field], depth: usize, env: &Env, acc: &mut Acc) -> bool {
    let Some(first) = argv.first() else {
        return false;
    };
    if !matches!(first.text.as_str(), "-c" | "--command") {
        return false;
    }
    if let Some(p) = argv.get(1) {
        run_text(
            p,
            "flock -c of a command that cannot be known",
            depth,
            env,
            acc,
        );
    }
    true
}

pub(crate) fn join(words: &[Field]) -> Field {
    let text: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    let mut f = literal(&text.join(" "));
    f.certain = words.iter().all(|w| w.certain);
    f
}

/// GNU `parallel [opts] [CMD…] ::: ARGS`: each argument fills the command
/// (or is the command when none is given); run through the shell.
pub(crate) fn parallel(args: &[Field], depth: usize, env: &Env, acc: &mut Acc) {
    const VALUED: &[&str] = &[
        "-j",
        "--jobs",
        "-N",
        "-n",
        "-I",
        "-S",
        "--sshlogin",
        "--delay",
        "--timeout",
        "--joblog",
        "-a",
        "--arg-file",
        "--colsep",
        "-d",
        "--delimiter",
        "-E",
        "--env",
        "--tmpdir",
        "--results",
        "--halt",
        "--retries",
        "--workdir",
        "--basefile",
    ];
    let skip = skip_options(args, VALUED);
    let rest = args.get(skip..).unwrap_or(&[]);
    let sep = rest
        .iter()
        .position(|a| a.text.starts_with(":::"))
        .unwrap_or(rest.len());
    let template = &rest[..sep];
    let values: Vec<&Field> = rest[sep..]
        .iter()
        .filter(|a| !a.text.starts_with(":::"))
        .collect();
    let from_files = rest[sep..].iter().any(|a| a.text.starts_with("::::"));
    if template.is_empty() {
        if values.is_empty() || from_files {
            acc.danger("parallel runs commands it reads from its input");
        }
        for v in values {
            run_text(
                v,
                "parallel of a command that cannot be known",
                depth,
                env,
                acc,
            );
        }
        return;
    }
    let base = join(template);
    if values.is_empty() {
        run_text(
            &base,
            "parallel of a command that cannot be known",
            depth,
            env,
            acc,
        );
    }
    for v in values {
        let mut f = base.clone();
        f.text = if base.text.contains("{}") {
            base.text.replace("{}", &v.text)
        } else {
            format!("{} {}", base.text, v.text)
        };
        f.certain &= v.certain;
        run_text(
            &f,
            "parallel of a command that cannot be known",
            depth,
            env,
            acc,
        );
    }
}

/// `unshare`/`nsenter`/`pkexec`… prefix options: words to skip before the command.
pub(crate) fn namespace_options(name: &str, w: &[Field]) -> usize {
    let valued: &[&str] = match name {
        "unshare" => &[
            "-S",
            "--setuid",
            "-G",
            "--setgid",
            "-R",
            "--root",
            "-w",
            "--wd",
            "--map-user",
            "--map-group",
            "--map-users",
            "--map-groups",
            "--propagation",
            "--setgroups",
        ],
        "nsenter" => &[
            "-t", "--target", "-S", "--setuid", "-G", "--setgid", "--env",
        ],
        "pkexec" => &["--user", "-u"],
        _ => &[],
    };
    1 + skip_options(&w[1..], valued)
}
