//! Code run by interpreters (`python -c`, `perl -e`, `ruby -e`, `node -e`,
//! `php -r`, and heredocs or pipes fed to them): tree deletion and disk
//! writes of `/`, the home directory or system directories are hardline,
//! other file-destroying calls need approval, and shell strings they run are
//! analysed as commands.

use std::sync::LazyLock;

use regex::Regex;

use super::commands::{Command, Root, root_like, unwrap};
use super::detect::{Acc, analyze_isolated};
use super::expand::{Env, Field};
use super::parse::Simple;
use super::patterns::{ARGV_LIST, INTERP_SHELL, QUOTED_ITEM};

/// The inline-code flag of an interpreter family, if `cmd` is one.
pub(crate) fn flag_of(cmd: &str) -> Option<&'static str> {
    let family = cmd.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    match family {
        "python" | "pypy" => Some("c"),
        "perl" | "ruby" | "node" | "nodejs" | "deno" | "bun" | "lua" => Some("e"),
        "php" => Some("r"),
        _ => None,
    }
}

/// An interpreter run: its `-c`/`-e` code, or the heredoc / here-string it reads.
pub(crate) fn check(
    cmd: &str,
    args: &[Field],
    stage: &Simple,
    depth: usize,
    env: &Env,
    acc: &mut Acc,
) {
    let Some(flag) = flag_of(cmd) else {
        return;
    };
    let family = cmd.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let valued = value_options(family);
    let mut code = None;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if !t.starts_with('-') || t == "--" || t == "-" {
            break;
        }
        if matches!(t, "--eval" | "--exec" | "--print" | "-p") {
            code = args.get(i + 1).map(|f| (f.text.clone(), f.certain));
            break;
        }
        if !t.starts_with("--") {
            // A cluster of flags: the exec flag takes the rest of the word (or
            // the next word); a value option takes the rest as its value.
            let mut found = None;
            for (at, c) in t.char_indices().skip(1) {
                if flag.starts_with(c) {
                    let glued = &t[at + c.len_utf8()..];
                    found = Some(if glued.is_empty() {
                        args.get(i + 1).map(|f| (f.text.clone(), f.certain))
                    } else {
                        Some((glued.to_owned(), a.certain))
                    });
                    break;
                }
                if valued.contains(c) {
                    break;
                }
            }
            if let Some(found) = found {
                code = found;
                break;
            }
        }
        i += 1;
    }
    if let Some((code, certain)) = code {
        acc.danger("script execution via -e/-c flag");
        if !certain {
            acc.danger("script that cannot be known before it runs");
        }
        inspect_code(&code, depth, env, acc);
        return;
    }
    // No inline code: a script file, or a heredoc or here-string, is the program.
    if let Some(file) = args.get(i).filter(|a| a.text != "-" && a.text != "--") {
        super::scripts::check_file(file, super::scripts::Lang::Interpreter, depth, env, acc);
    } else if let Some(file) = args
        .get(i + 1)
        .filter(|_| args.get(i).is_some_and(|a| a.text == "--"))
    {
        super::scripts::check_file(file, super::scripts::Lang::Interpreter, depth, env, acc);
    }
    for body in &stage.heredocs {
        acc.danger("script execution via heredoc");
        inspect_code(body, depth, env, acc);
    }
    for r in stage.redirects.iter().filter(|r| r.op == "<<<") {
        acc.danger("script execution via here-string");
        inspect_code(&r.target.text(), depth, env, acc);
    }
}

/// A call that deletes a directory tree, with its first argument.
static TREE_DELETE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"\b(?:rmtree|rm_rf|rm_r|remove_tree|remove_dir|rmSync|rmdirSync|removedirs|rmdir|rm)\s*\(\s*{TARGET}"#
    ))
    .ok()
});

/// A call that deletes single files.
static FILE_DELETE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"\b(?:os\.remove|os\.unlink|unlink|unlinkSync|File\.delete|FileUtils\.rm|Path\([^)]*\)\.unlink|\.unlink\(|rm_f)\b").ok()
});

/// A listing of a directory whose entries a loop may delete.
static LISTING: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"\b(?:listdir|scandir|iterdir|walk|glob|readdirSync|readdir|entries|children|opendir)\s*\(\s*{TARGET}"#
    ))
    .ok()
});

/// Opening a raw block device for writing.
static DISK_WRITE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"\bopen\w*\s*\(\s*["'](/dev/(?:sd|nvme|hd|mmcblk|vd|xvd)[a-z0-9]*)["']\s*,\s*["']?[^)]*[wa+]"#).ok()
});

/// The first argument of a call: a string literal (optionally wrapped as
/// `Path("…")`), or an expression naming the home directory.
const TARGET: &str = r#"(?:(os\.path\.expanduser\(\s*["']~["']\s*\)|Path\.home\(\)|os\.environ\[\s*["']HOME["']\s*\]|os\.getenv\(\s*["']HOME["']\s*\)|require\(\s*["']os["']\s*\)\.homedir\(\)|os\.homedir\(\)|process\.env\.HOME|ENV\[\s*["']HOME["']\s*\]|Dir\.home|\$ENV\{HOME\}|getenv\(\s*["']HOME["']\s*\))|(?:[A-Za-z_][\w.]*\(\s*)?(?:r|b)?(?:"([^"]*)"|'([^']*)'))"#;

/// The target a [`TARGET`] match names, as a path.
fn target_of(cap: &regex::Captures<'_>) -> Option<String> {
    if cap.get(1).is_some() {
        return Some("~".to_owned());
    }
    cap.get(2)
        .or_else(|| cap.get(3))
        .map(|m| m.as_str().to_owned())
}

/// Short options that take a value glued to them (`-MFile::Path`, `-rfileutils`):
/// the rest of such a word is not more flags.
fn value_options(family: &str) -> &'static str {
    match family {
        "perl" => "MmIixlC",
        "ruby" => "rICEFKTWx",
        "python" | "pypy" => "WXmQ",
        "node" | "nodejs" | "deno" | "bun" => "r",
        "php" => "dcz",
        _ => "",
    }
}

fn literal(path: String) -> Field {
    Field {
        glob: path.contains(['*', '?', '[']),
        text: path,
        certain: true,
        process: None,
        source: String::new(),
    }
}

/// Looks inside interpreter code for tree deletion, disk writes and shell-outs.
pub(crate) fn inspect_code(code: &str, depth: usize, env: &Env, acc: &mut Acc) {
    let root = |path: String| root_like(&literal(path), env);
    if let Some(re) = TREE_DELETE.as_ref() {
        for cap in re.captures_iter(code) {
            match target_of(&cap).and_then(root) {
                Some(Root::Filesystem) => acc.hard("recursive delete of root filesystem"),
                Some(Root::System) => acc.hard("recursive delete of system directory"),
                Some(Root::Home) => acc.hard("recursive delete of home directory"),
                None => acc.danger("recursive delete"),
            }
        }
    }
    let deletes_files = FILE_DELETE.as_ref().is_some_and(|re| re.is_match(code));
    if deletes_files {
        acc.danger("file deletion from a script");
        // A loop deleting what a listing of a protected directory returns.
        if let Some(re) = LISTING.as_ref() {
            for cap in re.captures_iter(code) {
                if target_of(&cap).and_then(root).is_some() {
                    acc.hard("recursive delete of system directory");
                }
            }
        }
    }
    if DISK_WRITE.as_ref().is_some_and(|re| re.is_match(code)) {
        acc.hard("write to raw block device");
    }
    if let Some(re) = INTERP_SHELL.as_ref() {
        for cap in re.captures_iter(code) {
            if let Some(m) = cap.get(1).or_else(|| cap.get(2)) {
                analyze_isolated(m.as_str(), depth + 1, env, acc);
            }
        }
    }
    if let (Some(list), Some(item)) = (ARGV_LIST.as_ref(), QUOTED_ITEM.as_ref()) {
        for cap in list.captures_iter(code) {
            if let Some(m) = cap.get(1) {
                let fields: Vec<Field> = item
                    .captures_iter(m.as_str())
                    .filter_map(|c| c.get(1).map(|x| literal(x.as_str().to_owned())))
                    .collect();
                let cmd: Command = unwrap(fields, env, depth + 1, acc);
                super::commands::check(&Simple::default(), &cmd, depth + 1, env, acc);
            }
        }
    }
}

#[cfg(test)]
#[path = "interp_tests.rs"]
mod tests;
