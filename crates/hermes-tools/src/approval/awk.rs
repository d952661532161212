//! `awk` programs run shell commands through `system()`, `print | "cmd"`
//! and `"cmd" | getline`: each literal command is analysed; one built at
//! run time is never called safe.

use std::sync::LazyLock;

use regex::Regex;

use super::commands;
use super::detect::{Acc, analyze_isolated};
use super::expand::{Env, Field};
use super::scripts;
use super::wrappers::literal;

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
