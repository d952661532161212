//! Turning a command string into a [`Verdict`]: parse it, unwrap every
//! simple command (env prefixes, `sudo`, absolute paths, git global options),
//! match the canonical lines, and follow nested scripts.

use super::Verdict;
use super::parse::{MAX_COMMAND_LEN, MAX_DEPTH, Parsed, Simple, parse};
use super::patterns::{
    ARGV_LIST, BLOCK_DEVICE, DANGEROUS, HARDLINE, HOME_PATH, INTERP_SHELL, PY_RMTREE, QUOTED_ITEM,
    RAW_DANGEROUS, RAW_HARDLINE, ROOT_PATH, SENSITIVE, SQL_DELETE, SQL_WHERE, SYSTEM_DIR,
};

/// Description used when the input is too large or too deeply nested to analyse.
pub const PARSER_LIMIT: &str = "command too large or too deeply nested to analyse";

const SHELLS: &[&str] = &["bash", "sh", "zsh", "ksh", "dash", "ash", "fish", "mksh"];

/// Classifies one command string.
pub fn classify(command: &str) -> Verdict {
    classify_with_home(command, None)
}

/// Classifies a command, also treating the user's resolved home directory
/// (`/home/alice`) like `~` for the home-deletion floor.
pub fn classify_with_home(command: &str, home: Option<&std::path::Path>) -> Verdict {
    if command.len() > MAX_COMMAND_LEN {
        return Verdict::Dangerous {
            reason: PARSER_LIMIT.into(),
        };
    }
    let mut acc = Acc {
        home: home
            .and_then(|h| h.to_str())
            .map(|h| h.trim_end_matches('/').to_owned())
            .filter(|h| !h.is_empty()),
        ..Acc::default()
    };
    analyze(command, 0, &mut acc);
    acc.verdict()
}

/// The strongest finding so far (hardline beats dangerous; first of each kind wins).
#[derive(Default)]
struct Acc {
    hardline: Option<String>,
    dangerous: Option<String>,
    /// Bounds total work so hostile input cannot explode through nesting.
    budget_used: usize,
    /// The user's home directory as an absolute path, without a trailing slash.
    home: Option<String>,
}

impl Acc {
    fn hard(&mut self, why: &str) {
        self.hardline.get_or_insert_with(|| why.to_owned());
    }
    fn danger(&mut self, why: &str) {
        self.dangerous.get_or_insert_with(|| why.to_owned());
    }
    fn verdict(self) -> Verdict {
        match (self.hardline, self.dangerous) {
            (Some(reason), _) => Verdict::Hardline { reason },
            (None, Some(reason)) => Verdict::Dangerous { reason },
            (None, None) => Verdict::Safe,
        }
    }
}

fn analyze(script: &str, depth: usize, acc: &mut Acc) {
    acc.budget_used += script.len() + 1;
    if depth > MAX_DEPTH || acc.budget_used > 4 * MAX_COMMAND_LEN {
        acc.danger(PARSER_LIMIT);
        return;
    }
    for rule in RAW_HARDLINE.iter() {
        if rule.re.is_match(script) {
            acc.hard(rule.description);
        }
    }
    for rule in RAW_DANGEROUS.iter() {
        if rule.re.is_match(script) {
            acc.danger(rule.description);
        }
    }
    if let (Some(del), Some(wh)) = (SQL_DELETE.as_ref(), SQL_WHERE.as_ref()) {
        // A WHERE on the *same line* counts; one on the next line is another statement.
        if script
            .lines()
            .any(|l| del.find(l).is_some_and(|m| !wh.is_match(&l[m.end()..])))
        {
            acc.danger("SQL DELETE without WHERE");
        }
    }
    let Parsed { pipelines, nested } = parse(script);
    for inner in &nested {
        analyze(inner, depth + 1, acc);
    }
    for pipeline in &pipelines {
        let argvs: Vec<Vec<String>> = pipeline.iter().map(|s| unwrap(s, acc)).collect();
        for (stage, argv) in pipeline.iter().zip(&argvs) {
            check_stage(stage, argv, depth, acc);
        }
        check_pipeline(&argvs, acc);
        feed_to_shell(pipeline, &argvs, depth, acc);
    }
}

/// Strips what runs *another* command (env assignments, `sudo`, `env`, `nice`, …)
/// and reduces the command word to its base name, so `FOO=1 sudo /bin/rm` reads `rm`.
fn unwrap(simple: &Simple, acc: &mut Acc) -> Vec<String> {
    let mut w: &[String] = &simple.words;
    while let Some(first) = w.first() {
        let name = base_name(first);
        if is_assignment(first) {
            w = &w[1..];
            continue;
        }
        match name {
            "sudo" | "doas" => {
                let mut i = 1;
                while let Some(a) = w.get(i) {
                    if !a.starts_with('-') || a == "--" {
                        if a == "--" {
                            i += 1;
                        }
                        break;
                    }
                    if matches!(a.as_str(), "--stdin" | "--askpass" | "--shell")
                        || a.starts_with("--st")
                        || a.starts_with("--a")
                        || (!a.starts_with("--")
                            && a[1..].chars().any(|c| matches!(c, 'S' | 'A' | 's' | 'a')))
                    {
                        acc.danger("sudo with privilege flag (stdin/askpass/shell/list)");
                    }
                    let takes_value = matches!(
                        a.as_str(),
                        "-u" | "-g" | "-C" | "-D" | "-h" | "-p" | "-r" | "-t" | "-U" | "-T" | "-R"
                    );
                    i += if takes_value { 2 } else { 1 };
                }
                w = w.get(i..).unwrap_or(&[]);
            }
            "env" => {
                let mut i = 1;
                while let Some(a) = w.get(i) {
                    if a == "-u" || a == "-C" || a == "-S" {
                        i += 2;
                    } else if a.starts_with('-') || is_assignment(a) {
                        i += 1;
                    } else {
                        break;
                    }
                }
                w = w.get(i..).unwrap_or(&[]);
            }
            "nice" | "ionice" | "chrt" | "taskset" | "stdbuf" | "timeout" | "nohup" | "setsid"
            | "time" | "exec" | "command" | "builtin" | "caffeinate" | "unbuffer" | "!" | "{"
            | "then" | "do" | "else" | "elif" | "if" | "while" | "until" => {
                let mut i = 1;
                while let Some(a) = w.get(i) {
                    if a.starts_with('-') {
                        i += 1;
                        // Options with a separate value (`nice -n 10`, `timeout -s KILL 5`).
                        if matches!(
                            a.as_str(),
                            "-n" | "-s" | "-k" | "-c" | "-p" | "-o" | "-e" | "-i"
                        ) && name != "command"
                        {
                            i += 1;
                        }
                    } else {
                        break;
                    }
                }
                // `timeout 5 cmd` and `taskset 0x3 cmd` take one positional first.
                if matches!(name, "timeout" | "taskset" | "chrt")
                    && w.get(i)
                        .is_some_and(|a| a.chars().next().is_some_and(|c| c.is_ascii_digit()))
                {
                    i += 1;
                }
                w = w.get(i..).unwrap_or(&[]);
            }
            _ => break,
        }
    }
    let mut argv: Vec<String> = w.to_vec();
    if let Some(first) = argv.first_mut() {
        *first = base_name(first).to_owned();
    }
    if argv.first().is_some_and(|a| a == "git") {
        argv = strip_git_globals(argv);
    }
    argv
}

fn base_name(word: &str) -> &str {
    let trimmed = word.trim_start_matches('\\');
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// `git -C dir -c k=v --no-pager push` → `git push`.
fn strip_git_globals(argv: Vec<String>) -> Vec<String> {
    let mut out = vec!["git".to_owned()];
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        if matches!(
            a.as_str(),
            "-C" | "-c"
                | "--git-dir"
                | "--work-tree"
                | "--namespace"
                | "--exec-path"
                | "--config-env"
        ) {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    out.extend(argv.into_iter().skip(i));
    out
}

fn check_stage(stage: &Simple, argv: &[String], depth: usize, acc: &mut Acc) {
    for r in &stage.redirects {
        if r.op.starts_with('>') {
            if BLOCK_DEVICE
                .as_ref()
                .is_some_and(|re| re.is_match(&r.target))
            {
                acc.hard("redirect to raw block device");
            } else if r.target.starts_with("/etc/") || r.target.starts_with("/private/etc/") {
                acc.danger("overwrite system config");
            } else if SENSITIVE.as_ref().is_some_and(|re| re.is_match(&r.target)) {
                acc.danger("overwrite system file via redirection");
            }
        }
    }
    let Some(cmd) = argv.first() else { return };
    let line = argv.join(" ");
    for rule in HARDLINE.iter() {
        if rule.re.is_match(&line) {
            acc.hard(rule.description);
        }
    }
    for rule in DANGEROUS.iter() {
        if rule.re.is_match(&line) {
            acc.danger(rule.description);
        }
    }
    let args = &argv[1..];
    match cmd.as_str() {
        "rm" => check_rm(args, acc),
        "chmod" | "chown" | "chgrp" => {
            let recursive = args.iter().any(|a| {
                a == "--recursive"
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains('R'))
            });
            if recursive && args.iter().any(|a| is_root_or_system(a)) {
                acc.hard("recursive permission change of root or system directory");
            }
        }
        "kill" => check_kill(args, acc),
        "cp" | "mv" | "install" | "ln" | "rsync" => {
            // Only the destination is written: `-t DIR`, else the last operand.
            let dest = args
                .iter()
                .position(|a| a == "-t" || a == "--target-directory")
                .and_then(|i| args.get(i + 1))
                .or_else(|| args.iter().rev().find(|a| !a.starts_with('-')));
            if let Some(d) =
                dest.filter(|_| args.iter().filter(|a| !a.starts_with('-')).count() >= 2)
            {
                if d == "/etc" || d.starts_with("/etc/") || d.starts_with("/private/etc") {
                    acc.danger("copy/move file into system config path");
                } else if SENSITIVE.as_ref().is_some_and(|re| re.is_match(d)) {
                    acc.danger("copy/move file into sensitive credential/SSH/shell-rc path");
                }
            }
        }
        "tee"
            if args
                .iter()
                .any(|a| SENSITIVE.as_ref().is_some_and(|re| re.is_match(a))) =>
        {
            acc.danger("overwrite system file via tee");
        }
        "xargs" => {
            // The rest of an xargs line is a command run once per input batch.
            let rest: Vec<String> = args
                .iter()
                .skip_while(|a| a.starts_with('-'))
                .cloned()
                .collect();
            if !rest.is_empty() {
                let sub = Simple {
                    words: rest,
                    ..Simple::default()
                };
                let sub_argv = unwrap(&sub, acc);
                check_stage(&sub, &sub_argv, depth + 1, acc);
            }
        }
        "eval" => analyze(&args.join(" "), depth + 1, acc),
        "su" => {
            let payload = args
                .iter()
                .position(|a| a == "-c" || a == "--command")
                .and_then(|pos| args.get(pos + 1));
            if let Some(payload) = payload {
                acc.danger("shell command via -c/-lc flag");
                analyze(payload, depth + 1, acc);
            }
        }
        c if SHELLS.contains(&c) => check_shell(args, stage, depth, acc),
        c if interpreter_flag(c).is_some() => check_interpreter(c, args, depth, acc),
        _ => {}
    }
}

fn is_root_or_system(arg: &str) -> bool {
    ROOT_PATH.as_ref().is_some_and(|re| re.is_match(arg))
        || SYSTEM_DIR.as_ref().is_some_and(|re| re.is_match(arg))
        || HOME_PATH.as_ref().is_some_and(|re| re.is_match(arg))
}

fn check_rm(args: &[String], acc: &mut Acc) {
    let mut options_done = false;
    for a in args {
        if !options_done && a == "--" {
            options_done = true;
            continue;
        }
        if !options_done && a.starts_with('-') && a.len() > 1 {
            continue;
        }
        // `/tmp/../` is `/`: resolve dot segments lexically before matching.
        let normalized = normalize_abs(a);
        let a = normalized.as_deref().unwrap_or(a);
        if ROOT_PATH.as_ref().is_some_and(|re| re.is_match(a)) {
            acc.hard("recursive delete of root filesystem");
        } else if SYSTEM_DIR.as_ref().is_some_and(|re| re.is_match(a)) {
            acc.hard("recursive delete of system directory");
        } else if HOME_PATH.as_ref().is_some_and(|re| re.is_match(a))
            || acc
                .home
                .as_deref()
                .is_some_and(|h| a.trim_end_matches(['/', '*']) == h)
        {
            acc.hard("recursive delete of home directory");
        }
    }
}

/// Lexically resolves `.`/`..` and repeated slashes in an absolute path,
/// keeping a trailing glob; `None` when nothing changes or it is not absolute.
fn normalize_abs(path: &str) -> Option<String> {
    if !path.starts_with('/') || !(path.contains("/.") || path.contains("//")) {
        return None;
    }
    let (body, glob) = match path.find('*') {
        Some(i) if path[i..].chars().all(|c| c == '*' || c == '/') => (&path[..i], "*"),
        _ => (path, ""),
    };
    let mut parts: Vec<&str> = Vec::new();
    for seg in body.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    let mut out = format!("/{}", parts.join("/"));
    if !glob.is_empty() {
        if !out.ends_with('/') {
            out.push('/');
        }
        out.push_str(glob);
    }
    Some(out)
}

/// `kill -9 -1` / `kill -- -1` signal every process; `kill -1 PID` is just SIGHUP.
fn check_kill(args: &[String], acc: &mut Acc) {
    let mut i = 0;
    // Skip the signal specification, then any `-1` left is a PID.
    if let Some(first) = args.first() {
        if first == "-s" || first == "-n" {
            i = 2;
        } else if (first.starts_with('-') && first != "--" && first != "-1")
            || (first == "-1" && args.len() > 1)
        {
            i = 1;
        }
    }
    if args.iter().skip(i).any(|a| a == "-1") {
        acc.hard("kill all processes");
    }
}

/// `bash -c 'payload'` runs the payload: analyse it; the reference also treats
/// the `-c` form itself as needing approval, and a shell reading a heredoc too.
fn check_shell(args: &[String], stage: &Simple, depth: usize, acc: &mut Acc) {
    let mut has_c = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "--" {
            i += 1;
            break;
        }
        if matches!(
            a.as_str(),
            "--rcfile" | "--init-file" | "-o" | "+o" | "-O" | "+O"
        ) {
            i += 2;
            continue;
        }
        if a.starts_with("--") {
            i += 1;
            continue;
        }
        if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 {
            has_c |= a[1..].contains('c');
            i += 1;
            continue;
        }
        break;
    }
    if has_c {
        acc.danger("shell command via -c/-lc flag");
        if let Some(payload) = args.get(i) {
            analyze(payload, depth + 1, acc);
        }
    }
    if stage
        .redirects
        .iter()
        .any(|r| r.op.starts_with("<<") && r.op != "<<<")
    {
        acc.danger("shell execution via heredoc");
        for body in &stage.heredocs {
            analyze(body, depth + 1, acc);
        }
    }
    if stage.redirects.iter().any(|r| r.op == "<<<") {
        for r in stage.redirects.iter().filter(|r| r.op == "<<<") {
            analyze(&r.target, depth + 1, acc);
        }
    }
    if stage
        .redirects
        .iter()
        .any(|r| r.op == "<" && (r.target.starts_with("<(curl") || r.target.starts_with("<(wget")))
    {
        acc.danger("execute remote script via process substitution");
    }
}

/// The inline-code flag of an interpreter family, if `cmd` is one.
fn interpreter_flag(cmd: &str) -> Option<&'static str> {
    let family = cmd.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    match family {
        "python" | "pypy" => Some("c"),
        "perl" | "ruby" | "node" | "nodejs" | "deno" | "bun" | "php" | "lua" => Some("e"),
        _ => None,
    }
}

fn check_interpreter(cmd: &str, args: &[String], depth: usize, acc: &mut Acc) {
    let Some(flag) = interpreter_flag(cmd) else {
        return;
    };
    let mut code = None;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if !a.starts_with('-') || a == "--" || a == "-" {
            break;
        }
        let short = !a.starts_with("--");
        let is_exec = (short && a[1..].contains(flag))
            || matches!(a.as_str(), "--eval" | "--exec" | "--print" | "-p")
            || (cmd.starts_with("php") && a == "-r");
        if is_exec {
            // `-c'code'` glued, or the next word.
            let glued = a.split_once(flag).map(|(_, rest)| rest).unwrap_or("");
            code = if glued.is_empty() || !short {
                args.get(i + 1).cloned()
            } else {
                Some(glued.to_owned())
            };
            break;
        }
        i += 1;
    }
    let Some(code) = code else { return };
    acc.danger("script execution via -e/-c flag");
    inspect_code(&code, depth, acc);
}

/// Looks inside interpreter code for tree deletion and shell-outs.
fn inspect_code(code: &str, depth: usize, acc: &mut Acc) {
    if let Some(re) = PY_RMTREE.as_ref() {
        for cap in re.captures_iter(code) {
            let target = cap.get(1).or_else(|| cap.get(3)).map(|m| m.as_str());
            match target {
                Some(t) if ROOT_PATH.as_ref().is_some_and(|r| r.is_match(t)) => {
                    acc.hard("recursive delete of root filesystem");
                }
                Some(t) if is_root_or_system(t) || t.starts_with('~') => {
                    acc.hard("recursive delete of system directory");
                }
                _ => acc.danger("recursive delete"),
            }
        }
    }
    if let Some(re) = INTERP_SHELL.as_ref() {
        for cap in re.captures_iter(code) {
            if let Some(m) = cap.get(1).or_else(|| cap.get(2)) {
                analyze(m.as_str(), depth + 1, acc);
            }
        }
    }
    if let (Some(list), Some(item)) = (ARGV_LIST.as_ref(), QUOTED_ITEM.as_ref()) {
        for cap in list.captures_iter(code) {
            if let Some(m) = cap.get(1) {
                let words: Vec<String> = item
                    .captures_iter(m.as_str())
                    .filter_map(|c| c.get(1).map(|x| x.as_str().to_owned()))
                    .collect();
                let sub = Simple {
                    words,
                    ..Simple::default()
                };
                let argv = unwrap(&sub, acc);
                check_stage(&sub, &argv, depth + 1, acc);
            }
        }
    }
}

/// `echo 'rm -rf /' | sh` and `cat <<EOF | bash`: the text fed to a shell's
/// stdin is a script, so analyse it as one.
fn feed_to_shell(pipeline: &[Simple], argvs: &[Vec<String>], depth: usize, acc: &mut Acc) {
    let shell_reads_stdin = argvs.iter().skip(1).any(|argv| {
        argv.first().is_some_and(|c| SHELLS.contains(&c.as_str()))
            && !argv
                .iter()
                .skip(1)
                .any(|a| a.starts_with('-') && a[1..].contains('c'))
    });
    if !shell_reads_stdin {
        return;
    }
    if let Some(first) = argvs.first()
        && matches!(first.first().map(String::as_str), Some("echo" | "printf"))
    {
        let text: Vec<&str> = first
            .iter()
            .skip(1)
            .filter(|a| !a.starts_with('-'))
            .map(String::as_str)
            .collect();
        analyze(&text.join(" "), depth + 1, acc);
    }
    let bodies: Vec<&String> = pipeline.iter().flat_map(|s| &s.heredocs).collect();
    if !bodies.is_empty() {
        acc.danger("shell execution via heredoc");
        for body in bodies {
            analyze(body, depth + 1, acc);
        }
    }
}

/// Rules that need the whole pipeline: remote or decoded content fed to a shell.
fn check_pipeline(argvs: &[Vec<String>], acc: &mut Acc) {
    let is_shell = |argv: &Vec<String>| {
        argv.first()
            .is_some_and(|c| SHELLS.contains(&c.as_str()) || interpreter_flag(c).is_some())
    };
    for (i, argv) in argvs.iter().enumerate() {
        let Some(cmd) = argv.first() else { continue };
        let later_shell = argvs[i + 1..].iter().any(is_shell);
        if !later_shell {
            continue;
        }
        let has = |f: &str| argv.iter().skip(1).any(|a| a == f);
        match cmd.as_str() {
            "curl" | "wget" | "fetch" | "aria2c" | "http" | "xh" => {
                acc.danger("pipe remote content to shell");
            }
            "base64" | "base32" | "base16" | "basenc"
                if has("-d") || has("-D") || has("--decode") =>
            {
                acc.danger("pipe decoded content to shell (possible command obfuscation)");
            }
            "xxd" if has("-r") => {
                acc.danger("pipe xxd-decoded content to shell (possible command obfuscation)");
            }
            "tr" | "rev" => {
                acc.danger("pipe tr-transformed output to shell (possible command obfuscation)");
            }
            "openssl" if has("-d") || has("-D") => {
                acc.danger("pipe openssl-decoded content to shell (possible command obfuscation)");
            }
            _ => {}
        }
    }
}
