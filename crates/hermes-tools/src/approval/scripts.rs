//! Files a command runs: `bash x.sh`, `source x`, `./x.sh`, `python3 y.py`,
//! `make`. A script the model wrote can hold anything, so the gate reads it
//! before it runs and judges its content like the command line itself. A
//! script written by the same command (`echo … > x.sh && bash x.sh`) is
//! judged by what was written when that is known; one that cannot be read
//! first needs approval. Without a [`Host`](super::Host) (pure
//! classification) nothing is read.

use std::io::Read;

use super::detect::{Acc, analyze_isolated};
use super::expand::{self, Env, Field};
use super::interp;
use super::parse::{Node, Script, Simple};

/// Most bytes of a script the gate reads; a larger one needs approval.
const MAX_SCRIPT: u64 = 256 * 1024;

/// How a script file is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    /// Run by a shell (`bash x.sh`, `source x`).
    Shell,
    /// Run by an interpreter (`python3 y.py`, `node z.js`).
    Interpreter,
    /// A makefile's recipes (`make`, `make -f F`).
    Make,
    /// Executed directly: its `#!` line decides.
    Executable,
}

/// What the gate could learn of a script.
enum Text {
    Known(String),
    /// It exists (or will) but cannot be read first: why.
    Unreadable(&'static str),
    /// No such file, or a binary: nothing to judge.
    Absent,
}

/// Judges the script at `file` as `lang` would run it.
pub(crate) fn check_file(file: &Field, lang: Lang, depth: usize, env: &Env, acc: &mut Acc) {
    if let Some(text) = text_of(file, env, acc) {
        judge(&text, lang, depth, env, acc);
    }
}

/// The text of the file a command runs, when it can be read first; a file
/// that exists (or will) but cannot be read is flagged.
pub(crate) fn text_of(file: &Field, env: &Env, acc: &mut Acc) -> Option<String> {
    if !file.certain {
        acc.danger("script that cannot be known before it runs");
        return None;
    }
    match read(&file.text, env, acc) {
        Text::Known(text) => Some(text),
        Text::Unreadable(why) => {
            acc.danger(why);
            None
        }
        Text::Absent => None,
    }
}

/// Judges script text as `lang` runs it.
pub(crate) fn judge(text: &str, lang: Lang, depth: usize, env: &Env, acc: &mut Acc) {
    match lang {
        Lang::Shell => analyze_isolated(text, depth + 1, env, acc),
        Lang::Interpreter => interp::inspect_code(text, depth, env, acc),
        Lang::Make => super::embedded::makefile(text, depth, env, acc),
        Lang::Executable => {
            let first = text.lines().next().unwrap_or("");
            let runner = first
                .strip_prefix("#!")
                .map(|l| {
                    let mut words = l.split_whitespace();
                    let prog = words.next().unwrap_or("");
                    let prog = prog.rsplit('/').next().unwrap_or(prog);
                    if prog == "env" {
                        words.find(|w| !w.starts_with('-')).unwrap_or("").to_owned()
                    } else {
                        prog.to_owned()
                    }
                })
                .unwrap_or_default();
            if interp::flag_of(&runner).is_some() {
                interp::inspect_code(text, depth, env, acc);
            } else if super::commands::SHELLS.contains(&runner.as_str()) || runner.is_empty() {
                // No `#!`: the shell runs it itself.
                analyze_isolated(text, depth + 1, env, acc);
            } else {
                // Some other interpreter: the strictest reading of both kinds.
                analyze_isolated(text, depth + 1, env, acc);
                interp::inspect_code(text, depth, env, acc);
            }
        }
    }
}

/// The absolute path `path` names from the command's working directory.
fn resolve(path: &str, env: &Env) -> Option<String> {
    if path.starts_with('/') {
        return Some(path.to_owned());
    }
    if let Some(rest) = path.strip_prefix("~/") {
        return env.home.as_ref().map(|h| format!("{h}/{rest}"));
    }
    env.cwd
        .as_ref()
        .filter(|c| c.starts_with('/'))
        .map(|c| format!("{}/{path}", c.trim_end_matches('/')))
}

fn read(path: &str, env: &Env, acc: &Acc) -> Text {
    let resolved = resolve(path, env);
    let key = resolved.clone().unwrap_or_else(|| path.to_owned());
    if let Some(written) = acc.written.get(&key) {
        return match written {
            Some(text) => Text::Known(text.clone()),
            None => {
                Text::Unreadable("runs a script this command writes, which cannot be read first")
            }
        };
    }
    if env.host.is_none() {
        return Text::Absent;
    }
    let Some(resolved) = resolved else {
        return Text::Unreadable("runs a script whose location cannot be known");
    };
    read_file(env, std::path::Path::new(&resolved))
}

/// A file's text as the command would read it (`cat FILE | sh`, `sh < FILE`),
/// when there is a host to read it from.
pub(crate) fn host_text(path: &str, env: &Env) -> Option<String> {
    env.host.as_ref()?;
    match read_file(env, std::path::Path::new(&resolve(path, env)?)) {
        Text::Known(text) => Some(text),
        _ => None,
    }
}

/// A script's text on the machine the command runs on.
fn read_file(env: &Env, path: &std::path::Path) -> Text {
    let Some(files) = env.host.as_ref().and_then(|h| h.files.as_ref()) else {
        return read_disk(path);
    };
    match files.read(path, MAX_SCRIPT) {
        super::HostFile::Bytes(bytes) if bytes.starts_with(b"\x7fELF") => Text::Absent,
        super::HostFile::Bytes(bytes) => Text::Known(String::from_utf8_lossy(&bytes).into_owned()),
        super::HostFile::Missing | super::HostFile::NotFile => Text::Absent,
        super::HostFile::TooLarge => {
            Text::Unreadable("runs a script too large to check before it runs")
        }
        super::HostFile::Unreadable => Text::Unreadable("runs a script the gate cannot read"),
    }
}

fn read_disk(path: &std::path::Path) -> Text {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Text::Absent,
        Err(_) => return Text::Unreadable("runs a script the gate cannot read"),
    };
    if !meta.is_file() {
        return Text::Absent;
    }
    if meta.len() > MAX_SCRIPT {
        return Text::Unreadable("runs a script too large to check before it runs");
    }
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(MAX_SCRIPT).read_to_end(&mut bytes));
    if read.is_err() {
        return Text::Unreadable("runs a script the gate cannot read");
    }
    if bytes.starts_with(b"\x7fELF") {
        return Text::Absent;
    }
    Text::Known(String::from_utf8_lossy(&bytes).into_owned())
}

/// Records the files `stage` writes (`>`, `>>`, `tee`), with their content
/// when it can be known, so a later `bash x.sh` in the same command is
/// judged by it.
pub(crate) fn record_writes(
    stage: &Simple,
    argv: &[Field],
    depth: usize,
    env: &Env,
    acc: &mut Acc,
) {
    let mut targets: Vec<(String, bool)> = Vec::new();
    for r in &stage.redirects {
        if !matches!(r.op.as_str(), ">" | ">>" | ">|" | "&>" | "&>>") {
            continue;
        }
        if let Some(path) = expand::expand_unsplit(&r.target, env, depth) {
            targets.push((path, r.op.ends_with(">>")));
        }
    }
    let name = argv.first().map(|f| f.text.as_str());
    // Their destinations get content the gate does not follow.
    for dest in destinations(name, argv) {
        acc.written
            .insert(resolve(&dest, env).unwrap_or(dest), None);
    }
    if targets.is_empty() {
        return;
    }
    let content = match (name, stage.heredocs.as_slice()) {
        (Some("cat"), [body]) if argv.len() == 1 => Some(body.clone()),
        _ => {
            let mut plain = stage.clone();
            plain
                .redirects
                .retain(|r| !r.op.starts_with('>') && !r.op.starts_with("&>"));
            let script = Script {
                nodes: vec![Node::Pipeline {
                    stages: vec![plain],
                    background: false,
                }],
            };
            expand::static_output_of_script(&script, env, depth + 1)
        }
    };
    for (path, append) in targets {
        let key = resolve(&path, env).unwrap_or(path);
        let known = if append { None } else { content.clone() };
        acc.written.insert(key, known);
    }
}

/// The files `name` writes with content the gate cannot follow: every
/// operand of `tee`, the last of `cp`/`mv`/`install`/`ln`, the `-o`/`-O`
/// file of `curl`/`wget`.
fn destinations(name: Option<&str>, argv: &[Field]) -> Vec<String> {
    let operands = || argv.iter().skip(1).filter(|a| !a.text.starts_with('-'));
    match name {
        Some("tee") => operands().map(|a| a.text.clone()).collect(),
        Some("cp" | "mv" | "install" | "ln") => operands()
            .next_back()
            .map(|a| a.text.clone())
            .into_iter()
            .collect(),
        Some("curl" | "wget") => argv
            .windows(2)
            .filter(|w| {
                matches!(
                    w[0].text.as_str(),
                    "-o" | "-O" | "--output" | "--output-document"
                )
            })
            .map(|w| w[1].text.clone())
            .collect(),
        _ => Vec::new(),
    }
}

/// The commands a glob in the command word can name (`/usr/bin/r[m]`): the
/// matching files when the host can be listed, otherwise the commands the
/// gate knows by name. Sorted, as the shell expands them.
pub(crate) fn glob_candidates(word: &str, env: &Env) -> Vec<String> {
    let (dir, pattern) = match word.rsplit_once('/') {
        Some((d, p)) => (Some(if d.is_empty() { "/" } else { d }), p),
        None => (None, word),
    };
    let Ok(glob) = globset::Glob::new(pattern) else {
        return Vec::new();
    };
    let matcher = glob.compile_matcher();
    let mut names: Vec<String> = KNOWN_COMMANDS
        .iter()
        .filter(|n| matcher.is_match(n))
        .map(|n| (*n).to_owned())
        .collect();
    if let Some(host) = env.host.as_ref() {
        // A bare glob expands against the working directory; the strictest
        // reading also takes what it matches on PATH.
        let dirs: Vec<std::path::PathBuf> = match dir {
            Some(d) => vec![std::path::PathBuf::from(d)],
            None => host.cwd.iter().chain(&host.path).cloned().collect(),
        };
        for d in dirs {
            let listed: Vec<String> = match &host.files {
                Some(files) => files.list(&d).unwrap_or_default(),
                None => std::fs::read_dir(&d)
                    .map(|entries| {
                        entries
                            .flatten()
                            .map(|e| e.file_name().to_string_lossy().into_owned())
                            .collect()
                    })
                    .unwrap_or_default(),
            };
            names.extend(listed.into_iter().filter(|n| matcher.is_match(n)));
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Command names the gate has rules for, matched against globs in a
/// command word when the host cannot be listed.
const KNOWN_COMMANDS: &[&str] = &[
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "wipefs",
    "truncate",
    "dd",
    "mkfs",
    "mkfs.ext4",
    "mkfs.ext3",
    "mkfs.xfs",
    "mkfs.btrfs",
    "mkfs.vfat",
    "chmod",
    "chown",
    "chgrp",
    "kill",
    "pkill",
    "killall",
    "shutdown",
    "reboot",
    "halt",
    "poweroff",
    "init",
    "telinit",
    "systemctl",
    "find",
    "xargs",
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "ash",
    "python",
    "python3",
    "perl",
    "ruby",
    "node",
    "php",
    "lua",
    "awk",
    "gawk",
    "mawk",
    "sudo",
    "doas",
    "env",
    "git",
    "docker",
    "podman",
    "curl",
    "wget",
    "cp",
    "mv",
    "tee",
    "sed",
    "crontab",
    "sqlite3",
    "ssh",
    "parallel",
    "make",
    "script",
    "unshare",
    "nsenter",
    "chroot",
];
