//! Turning a command string into a [`Verdict`]: parse it, walk its commands
//! in order with what the shell would know at each point (variables assigned
//! earlier, the working directory after `cd`, functions and aliases defined),
//! expand every word as the shell would, strip wrappers, and check each
//! command and pipeline. Scripts fed to shells and interpreters — `-c`
//! payloads, `eval`, heredocs, here-strings, process substitutions, decoded
//! pipelines — are analysed the same way. What cannot be worked out is never
//! called safe.

use std::collections::HashSet;

use super::Verdict;
use super::commands::{self, Command};
use super::expand::{self, Env, Field, Value};
use super::parse::{MAX_COMMAND_LEN, MAX_DEPTH, Node, Part, Script, Simple, parse};
use super::patterns::{RAW_DANGEROUS, RAW_HARDLINE, SQL_DELETE, SQL_WHERE};

/// Description used when the input is too large or too deeply nested to analyse.
pub const PARSER_LIMIT: &str = "command too large or too deeply nested to analyse";

/// Classifies one command string.
pub fn classify(command: &str) -> Verdict {
    classify_with_home(command, None)
}

/// Classifies a command, also treating the user's resolved home directory
/// (`/home/alice`) like `~` for the home-deletion floor. Touches no file.
pub fn classify_with_home(command: &str, home: Option<&std::path::Path>) -> Verdict {
    classify_in(command, home, None)
}

/// Classifies a command about to run on `host`: scripts it runs are read
/// and judged by their content, globs in its command word are resolved.
pub fn classify_on(command: &str, host: &super::Host) -> Verdict {
    classify_in(
        command,
        host.home.as_deref(),
        Some(std::sync::Arc::new(host.clone())),
    )
}

fn classify_in(
    command: &str,
    home: Option<&std::path::Path>,
    host: Option<std::sync::Arc<super::Host>>,
) -> Verdict {
    if command.len() > MAX_COMMAND_LEN {
        return Verdict::Dangerous {
            reason: PARSER_LIMIT.into(),
        };
    }
    let home = home
        .and_then(|h| h.to_str())
        .map(|h| h.trim_end_matches('/').to_owned())
        .filter(|h| !h.is_empty());
    let mut acc = Acc::default();
    let cwd = host
        .as_ref()
        .and_then(|h| h.cwd.as_ref())
        .and_then(|c| c.to_str())
        .map(str::to_owned);
    let mut env = Env {
        home: home.clone(),
        cwd,
        host,
        ..Env::default()
    };
    analyze(command, 0, &mut env, &mut acc);
    // The parser's precise finding wins; the floor only adds what it missed,
    // on the text as written and as the shell expands it (so a respelling
    // never changes the verdict).
    super::floor::apply(command, home.as_deref(), &mut acc);
    if acc.is_safe() {
        let expanded = super::normalize(command);
        if expanded.trim_end() != command.trim_end() {
            super::floor::apply(&expanded, home.as_deref(), &mut acc);
        }
    }
    acc.verdict()
}

/// The strongest finding so far (hardline beats dangerous; first of each kind wins).
#[derive(Default)]
pub(crate) struct Acc {
    hardline: Option<String>,
    dangerous: Option<String>,
    /// Bounds total work so hostile input cannot explode through nesting.
    budget_used: usize,
    /// Functions defined so far (a function that pipes or backgrounds itself is a fork bomb).
    functions: HashSet<String>,
    /// Files this command writes before it may run them: path → content when known.
    pub(crate) written: std::collections::HashMap<String, Option<String>>,
}

impl Acc {
    pub(crate) fn hard(&mut self, why: &str) {
        self.hardline.get_or_insert_with(|| why.to_owned());
    }
    pub(crate) fn danger(&mut self, why: &str) {
        self.dangerous.get_or_insert_with(|| why.to_owned());
    }
    fn is_safe(&self) -> bool {
        self.hardline.is_none() && self.dangerous.is_none()
    }
    fn verdict(self) -> Verdict {
        match (self.hardline, self.dangerous) {
            (Some(reason), _) => Verdict::Hardline { reason },
            (None, Some(reason)) => Verdict::Dangerous { reason },
            (None, None) => Verdict::Safe,
        }
    }
}

/// Analyses a script's text as the shell would run it, in `env`.
pub(crate) fn analyze(script: &str, depth: usize, env: &mut Env, acc: &mut Acc) {
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
    walk(&parse(script), depth, env, acc);
}

/// Analyses a script in a copy of `env` (a subshell, a substitution, a child shell).
pub(crate) fn analyze_isolated(script: &str, depth: usize, env: &Env, acc: &mut Acc) {
    analyze(script, depth, &mut env.clone(), acc);
}

fn walk(script: &Script, depth: usize, env: &mut Env, acc: &mut Acc) {
    for node in &script.nodes {
        match node {
            Node::Function(name) => {
                acc.functions.insert(name.clone());
            }
            Node::Subshell(inner) => walk(inner, depth + 1, &mut env.clone(), acc),
            Node::Pipeline { stages, background } => {
                pipeline(stages, *background, depth, env, acc);
            }
        }
    }
}

fn pipeline(stages: &[Simple], background: bool, depth: usize, env: &mut Env, acc: &mut Acc) {
    let mut commands = Vec::with_capacity(stages.len());
    for stage in stages {
        inner_scripts(stage, depth, env, acc);
        let fields = expand::expand_all(&stage.words, env, depth);
        commands.push(commands::unwrap(fields, env, depth, acc));
    }
    fork_bomb(&commands, background, acc);
    for (stage, cmd) in stages.iter().zip(&commands) {
        commands::check(stage, cmd, depth, env, acc);
    }
    super::pipeline::check_pipeline(stages, &commands, depth, env, acc);
    for (stage, cmd) in stages.iter().zip(&commands) {
        super::scripts::record_writes(stage, &cmd.argv, depth, env, acc);
    }
    // What a single command changes for the commands after it.
    if let ([stage], [cmd]) = (stages, commands.as_slice()) {
        update_env(stage, cmd, depth, env, acc);
    }
}

/// Substitutions run whatever they contain, wherever they appear.
fn inner_scripts(stage: &Simple, depth: usize, env: &Env, acc: &mut Acc) {
    let words = stage
        .words
        .iter()
        .chain(stage.assignments.iter().map(|(_, w)| w))
        .chain(stage.redirects.iter().map(|r| &r.target));
    for word in words {
        for part in &word.parts {
            if let Part::Command { script, .. } | Part::Process { script } = part {
                analyze_isolated(script, depth + 1, env, acc);
            }
        }
    }
}

/// A function that runs two copies of itself in a pipeline, or itself in the
/// background, multiplies without end (the renamed `:(){ :|:& };:`).
fn fork_bomb(commands: &[Command], background: bool, acc: &mut Acc) {
    let calls = commands
        .iter()
        .filter(|c| c.name().is_some_and(|n| acc.functions.contains(n)))
        .count();
    if calls >= 2 || (background && calls >= 1 && commands.len() >= 2) {
        acc.hard("fork bomb");
    }
}

/// Assignments, `cd`, `set --`, `export`/`declare`, `alias`, `unset`, `for`,
/// `read`: what the shell remembers for later commands.
pub(crate) fn update_env(
    stage: &Simple,
    cmd: &Command,
    depth: usize,
    env: &mut Env,
    acc: &mut Acc,
) {
    if stage.words.is_empty() {
        for (name, value) in &stage.assignments {
            let value = expand::expand_unsplit(value, env, depth);
            env.vars
                .insert(name.clone(), value.map_or(Value::Unknown, Value::Known));
        }
        return;
    }
    let Some(name) = cmd.name() else { return };
    let args = &cmd.argv[1..];
    match name {
        "cd" | "pushd" => env.cwd = commands::cd_target(args, env),
        "set" if args.first().is_some_and(|a| a.text == "--") => {
            env.positional = args[1..]
                .iter()
                .all(|a| a.certain)
                .then(|| args[1..].iter().map(|a| a.text.clone()).collect());
        }
        "export" | "declare" | "typeset" | "local" | "readonly" => {
            for word in stage.words.iter().skip(1) {
                if let Some((var, value)) = super::parse::assignment(word) {
                    let value = expand::expand_unsplit(&value, env, depth);
                    env.vars
                        .insert(var, value.map_or(Value::Unknown, Value::Known));
                }
            }
        }
        "unset" => {
            for a in args {
                env.vars.remove(&a.text);
            }
        }
        "read" | "mapfile" | "readarray" => {
            for a in args.iter().filter(|a| !a.text.starts_with('-')) {
                env.vars.insert(a.text.clone(), Value::Unknown);
            }
        }
        "alias" => {
            for a in args {
                if let Some((alias, value)) = a.text.split_once('=') {
                    // An alias runs its text wherever it is used.
                    analyze_isolated(value, depth + 1, env, acc);
                    env.aliases.insert(alias.to_owned(), value.to_owned());
                }
            }
        }
        "for" => bind_loop(args, env),
        _ => {}
    }
}

/// `for NAME in WORDS`: the variable takes each word in turn; the most
/// dangerous one is what the body is checked with.
fn bind_loop(args: &[Field], env: &mut Env) {
    let [var, in_kw, values @ ..] = args else {
        return;
    };
    if in_kw.text != "in" {
        return;
    }
    let values: Vec<&Field> = values.iter().take_while(|v| v.text != ";").collect();
    let chosen = values
        .iter()
        .find(|v| commands::root_like(v, env).is_some())
        .or(values.first().filter(|_| values.len() == 1))
        .filter(|v| v.certain);
    env.vars.insert(
        var.text.clone(),
        chosen.map_or(Value::Unknown, |v| Value::Known(v.text.clone())),
    );
}
