//! Programs that run a command they are given as text or argv, beyond the
//! plain prefix wrappers `commands::unwrap` strips: `awk` programs'
//! `system()` and pipes, `find -exec`, `xargs` with what it receives,
//! `script -c`, `flock -c`, `sqlite3 .shell`, `ssh host CMD`, `docker exec`,
//! `git -c core.*=…`/aliases, GNU `parallel`, makefiles, and interpreters
//! whose string arguments are code (`expect -c`, `gdb -ex`, `vim -c` …).
//! Each hands what it runs back to the analysis; what cannot be known is
//! never called safe.

use std::sync::LazyLock;

use regex::Regex;

use super::commands;
use super::detect::{Acc, analyze_isolated};
use super::expand::{Env, Field};
use super::interp;
use super::parse::Simple;
use super::scripts::{self, Lang};

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
fn skip_options(args: &[Field], valued: &[&str]) -> usize {
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

/// `awk 'BEGIN{system("rm -rf /")}'`, `print | "sh"`, `"cmd" | getline`.
pub(crate) fn awk(args: &[Field], depth: usize, env: &Env, acc: &mut Acc) {
    let mut i = 0;
    let mut program: Option<Field> = None;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        match t {
            "--" => {
                i += 1;
                break;
            }
            "-f" | "--file" => {
                if let Some(file) = args.get(i + 1) {
                    awk_file(file, depth, env, acc);
                    program = Some(literal(""));
                }
                i += 2;
            }
            "-F" | "-v" | "--assign" | "--field-separator" | "-i" | "--include" | "-l"
            | "--load" => i += 2,
            _ if t.starts_with("--source=") => {
                let mut f = a.clone();
                f.text = t["--source=".len()..].to_owned();
                awk_program(&f, depth, env, acc);
                i += 1;
            }
            "-e" | "--source" => {
                if let Some(p) = args.get(i + 1) {
                    awk_program(p, depth, env, acc);
                    program = Some(literal(""));
                }
                i += 2;
            }
            _ if t.starts_with('-') && t.len() > 1 => i += 1,
            _ => break,
        }
    }
    if program.is_none()
        && let Some(p) = args.get(i)
    {
        awk_program(p, depth, env, acc);
    }
}

fn awk_file(file: &Field, depth: usize, env: &Env, acc: &mut Acc) {
    if let Some(text) = scripts::text_of(file, env, acc) {
        awk_program(&literal(&text), depth, env, acc);
    }
}

/// The shell commands an awk program runs.
fn awk_program(program: &Field, depth: usize, env: &Env, acc: &mut Acc) {
    static SYSTEM_ANY: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"\bsystem\s*\(").ok());
    static STRING_CALL: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(r#"\bsystem\s*\(\s*"((?:[^"\\]|\\.)*)"\s*\)|\|&?\s*"((?:[^"\\]|\\.)*)"|"((?:[^"\\]|\\.)*)"\s*\|&?\s*getline"#).ok()
    });
    static VARIABLE_PIPE: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(r#"\bprintf?\b[^;}\n]*[^|]\|&?\s*[A-Za-z_(]|[A-Za-z_)]\s*\|&?\s*getline"#).ok()
    });
    if !program.certain {
        acc.danger("awk program that cannot be known before it runs");
    }
    let text = program.text.as_str();
    let (Some(any), Some(strings), Some(variable)) = (
        SYSTEM_ANY.as_ref(),
        STRING_CALL.as_ref(),
        VARIABLE_PIPE.as_ref(),
    ) else {
        return;
    };
    let mut literal_calls = 0;
    let mut prints_to_shell = false;
    for caps in strings.captures_iter(text) {
        let body = caps.get(1).or(caps.get(2)).or(caps.get(3));
        if let Some(body) = body {
            let command = unescape_awk(body.as_str());
            let first = command.split_whitespace().next().unwrap_or("");
            prints_to_shell |= caps.get(2).is_some()
                && commands::SHELLS.contains(&first.rsplit('/').next().unwrap_or(first));
            analyze_isolated(&command, depth + 1, env, acc);
        }
        if caps.get(1).is_some() {
            literal_calls += 1;
        }
    }
    if prints_to_shell {
        // `print "…" | "sh"`: every string the program prints is shell input.
        static LITERAL: LazyLock<Option<Regex>> =
            LazyLock::new(|| Regex::new(r#""((?:[^"\\]|\\.)*)""#).ok());
        if let Some(re) = LITERAL.as_ref() {
            for caps in re.captures_iter(text) {
                if let Some(m) = caps.get(1) {
                    analyze_isolated(&unescape_awk(m.as_str()), depth + 1, env, acc);
                }
            }
        }
    }
    if any.find_iter(text).count() > literal_calls {
        acc.danger("awk system() of a command that cannot be known");
    }
    if variable.is_match(text) {
        acc.danger("awk pipe to a command that cannot be known");
    }
}

fn unescape_awk(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
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

/// `sqlite3 DB '.shell CMD'`, `.system`, `.once '|CMD'`, `.output |CMD`, in
/// arguments, `-cmd` values and the statements it reads from stdin.
pub(crate) fn sqlite(args: &[Field], stage: &Simple, depth: usize, env: &Env, acc: &mut Acc) {
    let mut texts: Vec<(String, bool)> = args.iter().map(|a| (a.text.clone(), a.certain)).collect();
    texts.extend(stage.heredocs.iter().map(|h| (h.clone(), true)));
    for r in stage.redirects.iter().filter(|r| r.op == "<<<") {
        match super::expand::expand_unsplit(&r.target, env, depth) {
            Some(t) => texts.push((t, true)),
            None => acc.danger("sqlite3 input that cannot be known"),
        }
    }
    sqlite_text_all(&texts, depth, env, acc);
}

/// Dot-commands in sqlite3 input that run a shell.
pub(crate) fn sqlite_text_all(texts: &[(String, bool)], depth: usize, env: &Env, acc: &mut Acc) {
    static DOT: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(r#"(?m)^\s*\.(?:shell|system)\s+(.*)$|^\s*\.(?:once|output|import)\s+(?:-\S+\s+)*['"]?\|([^'"\n]*)"#).ok()
    });
    let Some(dot) = DOT.as_ref() else { return };
    for (text, certain) in texts {
        if !certain && text.contains('.') {
            acc.danger("sqlite3 input that cannot be known");
        }
        for caps in dot.captures_iter(text) {
            if let Some(cmd) = caps.get(1).or(caps.get(2)) {
                let cmd = cmd.as_str().trim().trim_matches(['"', '\'']);
                analyze_isolated(cmd, depth + 1, env, acc);
            }
        }
    }
}

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

fn join(words: &[Field]) -> Field {
    let text: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    let mut f = literal(&text.join(" "));
    f.certain = words.iter().all(|w| w.certain);
    f
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

/// `make [-f FILE] [--eval=TEXT]`: recipes are shell commands. An inline
/// makefile (`-f -` with a heredoc, `-f <(…)`) is read from the command;
/// a file from the host.
pub(crate) fn make(args: &[Field], stage: &Simple, depth: usize, env: &Env, acc: &mut Acc) {
    let mut files: Vec<&Field> = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if matches!(t, "-f" | "--file" | "--makefile") {
            if let Some(f) = args.get(i + 1) {
                files.push(f);
            }
            i += 2;
            continue;
        }
        if let Some(text) = t.strip_prefix("--eval=") {
            makefile(text, depth, env, acc);
        } else if t == "-E" || t == "--eval" {
            if let Some(text) = args.get(i + 1) {
                makefile(&text.text, depth, env, acc);
            }
            i += 1;
        } else if matches!(t, "-C" | "--directory" | "-I" | "-o" | "-W" | "-j") {
            i += 1;
        }
        i += 1;
    }
    if files.is_empty() {
        for name in ["GNUmakefile", "makefile", "Makefile"] {
            let f = literal(name);
            scripts::check_file(&f, Lang::Make, depth, env, acc);
        }
        return;
    }
    for f in files {
        if let Some(inner) = &f.process {
            match super::expand::static_output(inner, env, depth + 1) {
                Some(text) => makefile(&text, depth, env, acc),
                None => acc.danger("makefile that cannot be known before it runs"),
            }
        } else if matches!(f.text.as_str(), "-" | "/dev/stdin") {
            for body in &stage.heredocs {
                makefile(body, depth, env, acc);
            }
            if stage.heredocs.is_empty() {
                acc.danger("makefile read from input that cannot be known");
            }
        } else {
            scripts::check_file(f, Lang::Make, depth, env, acc);
        }
    }
}

/// Judges a makefile: recipe lines, `rule: ; recipe` and `$(shell …)`.
pub(crate) fn makefile(text: &str, depth: usize, env: &Env, acc: &mut Acc) {
    static SHELL_FN: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"\$[({]shell\s+([^)}]*)[)}]").ok());
    let mut commands = String::new();
    for line in text.lines() {
        if let Some(recipe) = line.strip_prefix('\t') {
            commands.push_str(recipe.trim_start_matches(['@', '-', '+']));
            commands.push('\n');
        } else if let Some((head, recipe)) = line.split_once(';')
            && head.contains(':')
            && !head.contains('=')
        {
            commands.push_str(recipe.trim_start_matches(['@', '-', '+', ' ']));
            commands.push('\n');
        }
    }
    if let Some(re) = SHELL_FN.as_ref() {
        for caps in re.captures_iter(text) {
            if let Some(inner) = caps.get(1) {
                analyze_isolated(inner.as_str(), depth + 1, env, acc);
            }
        }
    }
    if !commands.is_empty() {
        analyze_isolated(&commands, depth + 1, env, acc);
    }
}

/// Interpreters whose string arguments are code the gate cannot read in
/// their own language: judged by the strictest reading (as a shell script
/// and as code that calls a shell), never as safe.
pub(crate) fn string_interpreter(
    name: &str,
    args: &[Field],
    depth: usize,
    env: &Env,
    acc: &mut Acc,
) -> bool {
    let flags: &[&str] = match name {
        "expect" => &["-c"],
        "julia" => &["-e", "--eval", "-E", "--print"],
        "Rscript" | "R" => &["-e"],
        "osascript" => &["-e"],
        "gdb" | "lldb" => &["-ex", "--eval-command", "-o", "--one-line"],
        "vim" | "vi" | "nvim" | "ex" | "view" => &["-c", "--cmd"],
        "emacs" => &["--eval"],
        "tclsh" | "wish" => &[],
        "tmux" => &[
            "new-session",
            "new-window",
            "send-keys",
            "new",
            "neww",
            "send",
            "run-shell",
            "run",
        ],
        "screen" => &["-dm", "-dmS", "-X"],
        _ => return false,
    };
    for (i, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        let code = if flags.contains(&t) {
            args.get(i + 1..).map(|rest| {
                if matches!(name, "tmux" | "screen") {
                    const VALUED: &[&str] =
                        &["-s", "-n", "-c", "-t", "-x", "-y", "-F", "-e", "-f", "-S", "-T"];
                    join(&rest[skip_options(rest, VALUED)..])
                } else {
                    rest.first().cloned().unwrap_or_default()
                }
            })
        } else if let Some(cmd) = t
            .strip_prefix('+')
            .filter(|_| name.ends_with("vim") || name == "vi")
        {
            Some(literal(cmd))
        } else if let Some(v) = t.strip_prefix("--eval=") {
            Some(literal(v))
        } else {
            None
        };
        if let Some(code) = code {
            let text = code.text.trim_start_matches(':').trim_start();
            let text = text
                .strip_prefix('!')
                .or_else(|| text.strip_prefix("shell "))
                .unwrap_or(text);
            let mut f = code.clone();
            f.text = text.to_owned();
            run_text(&f, "interpreter code that cannot be known", depth, env, acc);
            interp::inspect_code(&code.text, depth, env, acc);
        }
    }
    true
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
