//! One command after expansion: stripping what runs another command (`sudo`,
//! `env`, `exec -a`, `busybox` …), then the checks per command (`rm`, `find`,
//! `dd`, `chmod`, shells, interpreters …) and per pipeline (content piped
//! into a shell).

use super::detect::{Acc, analyze_isolated};
use super::expand::{self, Env, Field};
use super::interp;
use super::parse::Simple;
use super::patterns::{
    BLOCK_DEVICE, DANGEROUS, HARDLINE, HOME_PATH, ROOT_PATH, SENSITIVE, SYSTEM_DIR,
};

/// Shells whose `-c` payloads, stdin and script arguments are scripts.
pub(crate) const SHELLS: &[&str] = &["bash", "sh", "zsh", "ksh", "dash", "ash", "fish", "mksh"];

/// A command with its wrappers stripped.
#[derive(Debug, Clone, Default)]
pub(crate) struct Command {
    /// The command word (base name) and its arguments, expanded.
    pub(crate) argv: Vec<Field>,
    /// The command word as written, when it names a file by path (`./x.sh`).
    pub(crate) path: Option<String>,
}

impl Command {
    /// The command word, when it could be worked out.
    pub(crate) fn name(&self) -> Option<&str> {
        self.argv
            .first()
            .filter(|f| f.certain)
            .map(|f| f.text.as_str())
    }

    pub(crate) fn args(&self) -> &[Field] {
        self.argv.get(1..).unwrap_or(&[])
    }

    pub(crate) fn has(&self, flag: &str) -> bool {
        self.args().iter().any(|a| a.text == flag)
    }

    /// The argv as one line, for the pattern tables (what cannot be known
    /// as written).
    fn line(&self) -> String {
        let words: Vec<&str> = self
            .argv
            .iter()
            .map(|f| {
                if f.certain {
                    f.text.as_str()
                } else {
                    f.source.as_str()
                }
            })
            .collect();
        words.join(" ")
    }
}

/// What a root-like target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Root {
    /// `/` itself (or anything that resolves to it).
    Filesystem,
    /// A protected top-level directory (`/etc`, `/usr` …).
    System,
    /// The user's home directory.
    Home,
}

impl Root {
    fn delete(self) -> &'static str {
        match self {
            Root::Filesystem => "recursive delete of root filesystem",
            Root::System => "recursive delete of system directory",
            Root::Home => "recursive delete of home directory",
        }
    }
}

/// Top-level directories whose loss breaks the system, for glob targets.
const PROTECTED: &[&str] = &[
    "/", "/home", "/root", "/etc", "/usr", "/var", "/bin", "/sbin", "/boot", "/lib", "/lib64",
    "/opt", "/dev", "/proc", "/sys", "/srv", "/tmp",
];

/// Whether `field` names `/`, a protected system directory or the home
/// directory, after resolving `.`/`..`, the working directory and globs.
pub(crate) fn root_like(field: &Field, env: &Env) -> Option<Root> {
    let text = field.text.trim();
    if text.is_empty() {
        return None;
    }
    let home = env.home.as_deref();
    if HOME_PATH.as_ref().is_some_and(|re| re.is_match(text))
        || home.is_some_and(|h| text.trim_end_matches(['/', '*']) == h && text.starts_with(h))
        || text.trim_end_matches(['/', '*']) == "~"
    {
        return Some(Root::Home);
    }
    let absolute = if text.starts_with('/') {
        text.to_owned()
    } else {
        // `*`, `.` or `..` relative to a working directory `cd` made known.
        let cwd = env.cwd.as_deref()?;
        format!("{}/{text}", cwd.trim_end_matches('/'))
    };
    let path = normalize(&absolute);
    if home.is_some_and(|h| path.trim_end_matches(['/', '*']) == h) {
        return Some(Root::Home);
    }
    if ROOT_PATH.as_ref().is_some_and(|re| re.is_match(&path)) {
        return Some(Root::Filesystem);
    }
    if SYSTEM_DIR.as_ref().is_some_and(|re| re.is_match(&path)) || path == "/tmp" {
        return Some(Root::System);
    }
    if field.glob {
        return glob_root(&path);
    }
    None
}

/// A glob that matches `/` or a protected directory (`/*/`, `/[e]tc`, `/?sr`).
fn glob_root(pattern: &str) -> Option<Root> {
    let trimmed = pattern.trim_end_matches('/');
    let glob = globset::GlobBuilder::new(if trimmed.is_empty() { "/" } else { trimmed })
        .literal_separator(true)
        .build()
        .ok()?
        .compile_matcher();
    let hit = PROTECTED.iter().find(|dir| glob.is_match(dir))?;
    Some(if *hit == "/" {
        Root::Filesystem
    } else {
        Root::System
    })
}

/// Lexically resolves `.`/`..` and repeated slashes in an absolute path, keeping a trailing glob.
fn normalize(path: &str) -> String {
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
    out
}

/// The working directory after `cd ARGS`, when it can be known.
pub(crate) fn cd_target(args: &[Field], env: &Env) -> Option<String> {
    let target = args
        .iter()
        .find(|a| !a.text.starts_with('-') || a.text == "-");
    let Some(target) = target else {
        return env.home.clone().or_else(|| Some("~".to_owned()));
    };
    if !target.certain || target.text == "-" {
        return None;
    }
    let text = target.text.as_str();
    if text.starts_with('/') {
        Some(normalize(text))
    } else if text == "~" || text.starts_with('~') {
        Some(text.to_owned())
    } else {
        env.cwd
            .as_deref()
            .map(|cwd| normalize(&format!("{}/{text}", cwd.trim_end_matches('/'))))
    }
}

/// Strips what runs *another* command (`sudo`, `env`, `nice`, `exec -a`,
/// `busybox` …) and reduces the command word to its base name, so
/// `sudo -nu root /bin/rm` reads `rm`.
pub(crate) fn unwrap(fields: Vec<Field>, env: &Env, depth: usize, acc: &mut Acc) -> Command {
    let mut w: &[Field] = &fields;
    while let Some(first) = w.first() {
        if !first.certain {
            break;
        }
        let name = base_name(&first.text);
        let skip = match name {
            "sudo" | "doas" => sudo_options(w, acc),
            "env" => match env_options(w) {
                EnvSkip::Args(n) => n,
                EnvSkip::Split(text, n) => {
                    // `env -S 'cmd args'` runs the split string.
                    analyze_isolated(&text, depth + 1, env, acc);
                    n
                }
            },
            "exec" => options(w, &["-a"]),
            "nice" => options(w, &["-n"]),
            "ionice" => options(w, &["-c", "-n", "-p", "-t"]),
            "stdbuf" => options(w, &["-i", "-o", "-e"]),
            "chrt" | "taskset" => leading_number(w, options(w, &["-p"])),
            "timeout" => leading_number(w, options(w, &["-s", "-k", "--signal", "--kill-after"])),
            "nohup" | "setsid" | "caffeinate" | "unbuffer" | "builtin" | "time" | "!" | "{"
            | "then" | "do" | "else" | "elif" | "if" | "while" | "until" => options(w, &[]),
            // `command -v rm` only looks the name up.
            "command" if w.iter().skip(1).any(|a| a.text == "-v" || a.text == "-V") => {
                return Command::default();
            }
            "command" => options(w, &[]),
            "busybox" | "toybox" => 1,
            "chroot" => options(w, &["-w", "-E", "--userspec", "--groups"]) + 1,
            "flock" => {
                let skip = options(w, &["-w", "-E", "--timeout", "--conflict-exit-code"]) + 1;
                // `flock FILE -c 'cmd'` runs the string through a shell.
                if super::wrappers::flock_command(w.get(skip..).unwrap_or(&[]), depth, env, acc) {
                    return Command::default();
                }
                skip
            }
            "unshare" | "nsenter" | "pkexec" | "fakeroot" | "torsocks" | "proxychains"
            | "proxychains4" | "firejail" => super::wrappers::namespace_options(name, w),
            "runuser" => options(w, &["-u", "-g", "-G", "-l", "--user", "--group"]),
            _ => 0,
        };
        if skip == 0 {
            break;
        }
        w = w.get(skip..).unwrap_or(&[]);
    }
    let mut argv: Vec<Field> = w.to_vec();
    let mut path = None;
    if let Some(first) = argv.first_mut() {
        if first.certain && first.text.contains('/') {
            path = Some(first.text.clone());
        }
        first.text = base_name(&first.text).to_owned();
    }
    if argv.first().is_some_and(|a| a.text == "git") {
        super::git::git(&argv, depth, env, acc);
        argv = strip_git_globals(argv);
    }
    Command { argv, path }
}

/// Words taken by the wrapper at `w[0]` and its options (`value_opts` take a
/// separate value; `--` ends them).
fn options(w: &[Field], value_opts: &[&str]) -> usize {
    1 + super::wrappers::skip_options(w.get(1..).unwrap_or(&[]), value_opts)
}

/// `timeout 5 cmd`, `taskset 0x3 cmd`: one positional (a number) before the command.
fn leading_number(w: &[Field], i: usize) -> usize {
    if w.get(i)
        .is_some_and(|a| a.text.starts_with(|c: char| c.is_ascii_digit()))
    {
        i + 1
    } else {
        i
    }
}

/// `sudo`'s options: combined short flags (`-nu root`), separate or glued
/// values, long options with values.
fn sudo_options(w: &[Field], acc: &mut Acc) -> usize {
    const VALUE_SHORT: &str = "ugCDhprtUTR";
    const VALUE_LONG: &[&str] = &[
        "--user",
        "--group",
        "--chdir",
        "--prompt",
        "--role",
        "--type",
        "--close-from",
        "--host",
        "--other-user",
        "--command-timeout",
    ];
    let mut i = 1;
    while let Some(a) = w.get(i) {
        let t = a.text.as_str();
        if t == "--" {
            return i + 1;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            if ["stdin", "askpass", "shell", "list"]
                .iter()
                .any(|f| f.starts_with(long.split('=').next().unwrap_or(long)) && long.len() >= 2)
            {
                acc.danger("sudo with privilege flag (stdin/askpass/shell/list)");
            }
            i += if VALUE_LONG.contains(&t) { 2 } else { 1 };
            continue;
        }
        let flags: Vec<char> = t[1..].chars().collect();
        if flags.iter().any(|c| matches!(c, 'S' | 'A' | 's' | 'l')) {
            acc.danger("sudo with privilege flag (stdin/askpass/shell/list)");
        }
        // The first value-taking flag takes the rest of the word, or the next word.
        let value_at = flags.iter().position(|c| VALUE_SHORT.contains(*c));
        i += match value_at {
            Some(p) if p + 1 == flags.len() => 2,
            _ => 1,
        };
    }
    i
}

enum EnvSkip {
    /// Words to skip.
    Args(usize),
    /// `-S STRING`: the string runs as a command; then words to skip.
    Split(String, usize),
}

fn env_options(w: &[Field]) -> EnvSkip {
    let mut i = 1;
    while let Some(a) = w.get(i) {
        let t = a.text.as_str();
        if t == "-S" || t == "--split-string" {
            let text = w.get(i + 1).map(|f| f.text.clone()).unwrap_or_default();
            let rest: Vec<&str> = w.iter().skip(i + 2).map(|f| f.text.as_str()).collect();
            return EnvSkip::Split(format!("{text} {}", rest.join(" ")), w.len());
        }
        if matches!(t, "-u" | "-C" | "--unset" | "--chdir") {
            i += 2;
        } else if t.starts_with('-') || is_assignment(t) {
            i += 1;
        } else {
            break;
        }
    }
    EnvSkip::Args(i)
}

fn base_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
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
fn strip_git_globals(argv: Vec<Field>) -> Vec<Field> {
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        if matches!(
            a.text.as_str(),
            "-C" | "-c"
                | "--git-dir"
                | "--work-tree"
                | "--namespace"
                | "--exec-path"
                | "--config-env"
        ) {
            i += 2;
        } else if a.text.starts_with('-') {
            i += 1;
        } else {
            break;
        }
    }
    let mut out = vec![argv[0].clone()];
    out.extend(argv.into_iter().skip(i));
    out
}

/// Checks one expanded command (and its redirections).
pub(crate) fn check(stage: &Simple, cmd: &Command, depth: usize, env: &Env, acc: &mut Acc) {
    check_redirects(stage, env, depth, acc);
    let Some(first) = cmd.argv.first() else {
        return;
    };
    if !first.certain {
        // `$X -rf /`, `$(cmd) …`: whatever runs cannot be known.
        acc.danger("command word cannot be resolved before it runs");
        if cmd.args().iter().any(|a| root_like(a, env).is_some()) {
            acc.hard("unresolvable command on a root-level path");
        }
        if first.text.is_empty() {
            return;
        }
    }
    if first.glob && first.certain {
        check_glob_word(cmd, depth, env, acc);
    }
    let line = cmd.line();
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
    let args = cmd.args();
    match first.text.as_str() {
        "rm" | "unlink" | "rmdir" => check_rm(args, env, acc),
        "chmod" | "chown" | "chgrp" => {
            let recursive = args.iter().any(|a| {
                a.text == "--recursive"
                    || (a.text.starts_with('-')
                        && !a.text.starts_with("--")
                        && a.text.contains('R'))
            });
            if recursive && args.iter().any(|a| root_like(a, env).is_some()) {
                acc.hard("recursive permission change of root or system directory");
            }
        }
        "kill" => check_kill(args, acc),
        "cp" | "mv" | "install" | "ln" | "rsync" => check_copy(args, acc),
        "tee"
            if args
                .iter()
                .any(|a| SENSITIVE.as_ref().is_some_and(|re| re.is_match(&a.text))) =>
        {
            acc.danger("overwrite system file via tee");
        }
        "find" => check_find(args, depth, env, acc),
        "dd" => super::disks::check_dd(args, acc),
        "shred" | "truncate" | "wipefs" | "blkdiscard" => {
            super::disks::check_wipe(&first.text, args, env, acc)
        }
        "eval" => run_text(args, "eval of text that cannot be known", depth, env, acc),
        "watch" => {
            // `watch [-n SECS] [-d] … COMMAND…` runs the rest through `sh -c`.
            let skip = options(&cmd.argv, &["-n", "--interval", "-q", "--equexit"]);
            let rest = cmd.argv.get(skip..).unwrap_or(&[]);
            run_text(
                rest,
                "watch of a command that cannot be known",
                depth,
                env,
                acc,
            );
        }
        "su" | "sg" => {
            let payload = args
                .iter()
                .position(|a| a.text == "-c" || a.text == "--command")
                .and_then(|pos| args.get(pos + 1));
            if let Some(payload) = payload {
                acc.danger("shell command via -c/-lc flag");
                analyze_field(payload, depth, env, acc);
            }
        }
        "source" | "." => check_source(stage, args, depth, env, acc),
        c if SHELLS.contains(&c) => check_shell(args, stage, depth, env, acc),
        c if interp::flag_of(c).is_some() => interp::check(c, args, stage, depth, env, acc),
        c => run_other(c, cmd, stage, depth, env, acc),
    }
}

/// Programs that run another command (the runners the gate follows), and
/// files run directly (`./x.sh`), judged by what they run.
fn run_other(name: &str, cmd: &Command, stage: &Simple, depth: usize, env: &Env, acc: &mut Acc) {
    let args = cmd.args();
    match name {
        "xargs" => {
            // The rest of an xargs line is a command run once per input batch.
            let x = super::wrappers::xargs(args);
            super::wrappers::xargs_run(&x, None, depth, env, acc);
        }
        "awk" | "gawk" | "mawk" | "nawk" => super::awk::awk(args, depth, env, acc),
        "script" => super::wrappers::script(args, depth, env, acc),
        "sqlite3" | "sqlite" => super::embedded::sqlite(args, stage, depth, env, acc),
        "ssh" => super::remote::ssh(args, depth, env, acc),
        "docker" | "podman" | "nerdctl" | "kubectl" | "oc" => {
            super::remote::container_exec(name, args, depth, env, acc);
        }
        "parallel" => super::wrappers::parallel(args, depth, env, acc),
        "make" | "gmake" => super::embedded::make(args, stage, depth, env, acc),
        c => {
            if !super::embedded::string_interpreter(c, args, depth, env, acc)
                && let Some(path) = &cmd.path
            {
                // `./x.sh`, `/tmp/y`: a file run directly is judged by its content.
                let file = super::wrappers::literal(path);
                super::scripts::check_file(
                    &file,
                    super::scripts::Lang::Executable,
                    depth,
                    env,
                    acc,
                );
            }
        }
    }
}

/// A glob in the command word (`/usr/bin/r[m]`): the shell runs the first
/// match with the others as arguments; every candidate is checked.
fn check_glob_word(cmd: &Command, depth: usize, env: &Env, acc: &mut Acc) {
    let Some(first) = cmd.argv.first() else {
        return;
    };
    let word = cmd.path.as_deref().unwrap_or(&first.text);
    let candidates = super::scripts::glob_candidates(word, env);
    if candidates.is_empty() {
        return;
    }
    for name in candidates {
        let mut argv = cmd.argv.clone();
        argv[0] = super::wrappers::literal(&name);
        let sub = Command { argv, path: None };
        check(&Simple::default(), &sub, depth + 1, env, acc);
    }
}

/// Runs `fields` joined as a script (`eval`, `watch`), or flags them when unknown.
fn run_text(fields: &[Field], unknown: &str, depth: usize, env: &Env, acc: &mut Acc) {
    if fields.iter().any(|f| !f.certain) {
        acc.danger(unknown);
    }
    let text: Vec<&str> = fields.iter().map(|f| f.text.as_str()).collect();
    analyze_isolated(&text.join(" "), depth + 1, env, acc);
}

/// A word that is itself a script (`-c` payload).
fn analyze_field(field: &Field, depth: usize, env: &Env, acc: &mut Acc) {
    if !field.certain {
        acc.danger("script that cannot be known before it runs");
    }
    analyze_isolated(&field.text, depth + 1, env, acc);
}

fn check_redirects(stage: &Simple, env: &Env, depth: usize, acc: &mut Acc) {
    for r in &stage.redirects {
        if !r.op.starts_with('>') {
            continue;
        }
        for target in expand::expand(&r.target, env, depth) {
            let t = target.text.as_str();
            if BLOCK_DEVICE.as_ref().is_some_and(|re| re.is_match(t)) {
                acc.hard("redirect to raw block device");
            } else if super::disks::ACCOUNT_FILES.contains(&t) && !r.op.starts_with(">>") {
                acc.hard("truncate of a disk or system account file");
            } else if t.starts_with("/etc/") || t.starts_with("/private/etc/") {
                acc.danger("overwrite system config");
            } else if SENSITIVE.as_ref().is_some_and(|re| re.is_match(t)) {
                acc.danger("overwrite system file via redirection");
            } else if !target.certain && t.is_empty() {
                acc.danger("redirect to a path that cannot be known");
            }
        }
    }
}

fn check_rm(args: &[Field], env: &Env, acc: &mut Acc) {
    let mut options_done = false;
    for a in args {
        if !options_done && a.text == "--" {
            options_done = true;
            continue;
        }
        if !options_done && a.text.starts_with('-') && a.text.len() > 1 {
            continue;
        }
        if let Some(root) = root_like(a, env) {
            acc.hard(root.delete());
        }
    }
}

/// `kill -9 -1` / `kill -- -1` signal every process; `kill -1 PID` is just SIGHUP.
fn check_kill(args: &[Field], acc: &mut Acc) {
    let mut i = 0;
    if let Some(first) = args.first().map(|f| f.text.as_str()) {
        if first == "-s" || first == "-n" {
            i = 2;
        } else if (first.starts_with('-') && first != "--" && first != "-1")
            || (first == "-1" && args.len() > 1)
        {
            i = 1;
        }
    }
    if args.iter().skip(i).any(|a| a.text == "-1") {
        acc.hard("kill all processes");
    }
}

/// Only the destination is written: `-t DIR`, else the last operand.
fn check_copy(args: &[Field], acc: &mut Acc) {
    let operands = || args.iter().filter(|a| !a.text.starts_with('-'));
    let dest = args
        .iter()
        .position(|a| a.text == "-t" || a.text == "--target-directory")
        .and_then(|i| args.get(i + 1))
        .or_else(|| operands().next_back());
    if let Some(d) = dest.filter(|_| operands().count() >= 2) {
        let d = d.text.as_str();
        let from_null = operands().next().is_some_and(|s| s.text == "/dev/null");
        if from_null && super::disks::ACCOUNT_FILES.contains(&d) {
            acc.hard("truncate of a disk or system account file");
        }
        if d == "/etc" || d.starts_with("/etc/") || d.starts_with("/private/etc") {
            acc.danger("copy/move file into system config path");
        } else if SENSITIVE.as_ref().is_some_and(|re| re.is_match(d)) {
            acc.danger("copy/move file into sensitive credential/SSH/shell-rc path");
        }
    }
}

/// `find / -delete` and `find /etc -exec rm …` with no name filter delete
/// everything under a protected root.
fn check_find(args: &[Field], depth: usize, env: &Env, acc: &mut Acc) {
    let starts: Vec<&Field> = args
        .iter()
        .take_while(|a| !a.text.starts_with('-') && a.text != "(" && a.text != "!")
        .collect();
    let deletes = args.iter().enumerate().any(|(i, a)| {
        a.text == "-delete"
            || (matches!(a.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir")
                && args.get(i + 1).is_some_and(|c| {
                    matches!(base_name(&c.text), "rm" | "shred" | "unlink" | "rmdir")
                }))
    });
    let narrowed = args.iter().any(|a| {
        matches!(
            a.text.as_str(),
            "-name"
                | "-iname"
                | "-path"
                | "-ipath"
                | "-regex"
                | "-iregex"
                | "-wholename"
                | "-iwholename"
                | "-samefile"
                | "-inum"
                | "-lname"
                | "-ilname"
        )
    });
    // Clearing out /tmp is housekeeping, not a system wipe.
    let root = starts
        .iter()
        .filter(|s| s.text.trim_end_matches('/') != "/tmp")
        .find_map(|s| root_like(s, env));
    if deletes
        && !narrowed
        && let Some(root) = root
    {
        acc.hard(root.delete());
    }
    super::wrappers::find_exec(args, narrowed, depth, env, acc);
}

/// `source`/`.` of stdin, a here-string, a heredoc or a process substitution.
fn check_source(stage: &Simple, args: &[Field], depth: usize, env: &Env, acc: &mut Acc) {
    let Some(file) = args.first() else { return };
    if let Some(inner) = &file.process {
        script_output(inner, depth, env, acc);
    } else if matches!(file.text.as_str(), "/dev/stdin" | "/proc/self/fd/0" | "-") {
        stdin_scripts(stage, depth, env, acc);
    } else if !file.certain {
        acc.danger("source of a file that cannot be known");
    } else {
        super::scripts::check_file(file, super::scripts::Lang::Shell, depth, env, acc);
    }
}

/// A process substitution's output run as a script: analysed when it can be
/// known, flagged otherwise.
fn script_output(inner: &str, depth: usize, env: &Env, acc: &mut Acc) {
    match expand::static_output(inner, env, depth + 1) {
        Some(text) => analyze_isolated(&text, depth + 1, env, acc),
        None => acc.danger("shell execution of generated script"),
    }
}

/// Heredocs and here-strings a command reads as its script.
pub(crate) fn stdin_scripts(stage: &Simple, depth: usize, env: &Env, acc: &mut Acc) {
    for body in &stage.heredocs {
        acc.danger("shell execution via heredoc");
        analyze_isolated(body, depth + 1, env, acc);
    }
    for r in stage.redirects.iter().filter(|r| r.op == "<<<") {
        let text = expand::expand_unsplit(&r.target, env, depth);
        match text {
            Some(text) => analyze_isolated(&text, depth + 1, env, acc),
            None => acc.danger("here-string that cannot be known"),
        }
    }
    // `sh < FILE`: the file is the script.
    for r in stage.redirects.iter().filter(|r| r.op == "<") {
        if let Some(path) = expand::expand_unsplit(&r.target, env, depth) {
            let file = super::wrappers::literal(&path);
            super::scripts::check_file(&file, super::scripts::Lang::Shell, depth, env, acc);
        }
    }
}

/// `bash -c 'payload'`, `bash <(…)`, `bash /dev/stdin <<<…`, `bash <<EOF`.
fn check_shell(args: &[Field], stage: &Simple, depth: usize, env: &Env, acc: &mut Acc) {
    let mut has_c = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if matches!(t, "--rcfile" | "--init-file" | "-o" | "+o" | "-O" | "+O") {
            i += 2;
            continue;
        }
        if t.starts_with("--") {
            i += 1;
            continue;
        }
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
            has_c |= t[1..].contains('c');
            i += 1;
            continue;
        }
        break;
    }
    let script = args.get(i);
    if has_c {
        acc.danger("shell command via -c/-lc flag");
        if let Some(payload) = script {
            analyze_field(payload, depth, env, acc);
        }
        return;
    }
    match script {
        Some(f) if f.process.is_some() => {
            if let Some(inner) = &f.process {
                script_output(inner, depth, env, acc);
            }
        }
        Some(f) if matches!(f.text.as_str(), "/dev/stdin" | "-" | "/proc/self/fd/0") => {
            stdin_scripts(stage, depth, env, acc);
        }
        Some(f) if !f.certain => acc.danger("shell script that cannot be known"),
        Some(f) => super::scripts::check_file(f, super::scripts::Lang::Shell, depth, env, acc),
        None => stdin_scripts(stage, depth, env, acc),
    }
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
