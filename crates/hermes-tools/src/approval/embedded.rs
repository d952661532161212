//! Programs whose own input language embeds shell commands: `sqlite3`
//! dot-commands (`.shell`, `.system`, `.once |cmd`), makefiles' recipes and
//! `$(shell …)`, and interpreters the gate cannot read in their language
//! (`expect -c`, `vim -c`, `gdb -ex`, `tmux new-session …`), read the
//! strictest way: as shell.

use std::sync::LazyLock;

use regex::Regex;

use super::detect::{Acc, analyze_isolated};
use super::expand::{Env, Field};
use super::interp;
use super::parse::Simple;
use super::scripts::{self, Lang};
use super::wrappers::{join, literal, run_text, skip_options};

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
                    const VALUED: &[&str] = &[
                        "-s", "-n", "-c", "-t", "-x", "-y", "-F", "-e", "-f", "-S", "-T",
                    ];
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
        } else {
            t.strip_prefix("--eval=").map(literal)
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
