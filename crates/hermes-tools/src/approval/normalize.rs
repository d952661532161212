//! The canonical spelling of a command: every word the shell would expand
//! is written out as the literal it becomes (`rm${IFS}-rf` → `rm -rf`,
//! `$'\x72m'` → `rm`, `X=rm; $X` → `rm`, `{rm,-rf,/}` → `rm -rf /`), with
//! what cannot be known left as written. Detection treats both spellings
//! alike; the fuzz property checks exactly that.

use super::commands::unwrap;
use super::detect::{Acc, update_env};
use super::expand::{self, Env, Field};
use super::parse::{Node, Part, Script, Simple, parse};

/// The command with its expansions written out.
pub fn normalize(command: &str) -> String {
    let mut env = Env::default();
    let mut out = String::new();
    render_script(&parse(command), &mut env, &mut out);
    out
}

fn render_script(script: &Script, env: &mut Env, out: &mut String) {
    let mut heredocs: Vec<String> = Vec::new();
    for node in &script.nodes {
        match node {
            Node::Function(name) => {
                out.push_str(name);
                out.push_str("() ");
            }
            Node::Subshell(inner) => {
                out.push_str("( ");
                render_script(inner, &mut env.clone(), out);
                out.push_str(" )\n");
            }
            Node::Pipeline { stages, background } => {
                let rendered: Vec<String> = stages
                    .iter()
                    .map(|s| render_simple(s, env, &mut heredocs))
                    .collect();
                out.push_str(&rendered.join(" | "));
                out.push_str(if *background { " &\n" } else { "\n" });
                // Every heredoc of the line gets its body and terminator (an
                // unterminated one ran to the end of the input: an empty body).
                for body in heredocs.drain(..) {
                    out.push_str(&body);
                    out.push_str("HERMES_EOF\n");
                }
                if let [stage] = stages.as_slice() {
                    let fields = expand::expand_all(&stage.words, env, 0);
                    let mut scratch = Acc::default();
                    let cmd = unwrap(fields, env, 0, &mut scratch);
                    update_env(stage, &cmd, 0, env, &mut scratch);
                }
            }
        }
    }
}

fn render_simple(stage: &Simple, env: &Env, heredocs: &mut Vec<String>) -> String {
    let mut words: Vec<String> = Vec::new();
    for (name, value) in &stage.assignments {
        let value = match expand::expand_unsplit(value, env, 0) {
            Some(v) => quote(&v, false),
            None => raw(value),
        };
        words.push(format!("{name}={value}"));
    }
    for word in &stage.words {
        let fields = expand::expand(word, env, 0);
        if fields.iter().all(|f| f.certain && f.process.is_none()) {
            words.extend(fields.iter().map(render_field));
        } else {
            words.push(raw(word));
        }
    }
    for r in &stage.redirects {
        if r.op.starts_with("<<") && r.op != "<<<" {
            words.push(format!("{}'HERMES_EOF'", r.op));
            continue;
        }
        let target = match expand::expand_unsplit(&r.target, env, 0) {
            Some(t) => quote(&t, false),
            None => raw(&r.target),
        };
        words.push(format!("{}{target}", r.op));
    }
    let count = stage
        .redirects
        .iter()
        .filter(|r| r.op.starts_with("<<") && r.op != "<<<")
        .count();
    for i in 0..count {
        heredocs.push(stage.heredocs.get(i).cloned().unwrap_or_default());
    }
    words.join(" ")
}

fn render_field(field: &Field) -> String {
    quote(&field.text, field.glob)
}

/// `text` as one shell word; glob characters stay active when `glob`.
fn quote(text: &str, glob: bool) -> String {
    if text.is_empty() {
        return "''".to_owned();
    }
    if text == "{" || text == "}" {
        // Reserved words of a group stay reserved words.
        return text.to_owned();
    }
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || "/._-+=:,@%^".contains(c) || (glob && "*?[]".contains(c)) {
            out.push(c);
        } else if c == '\n' {
            out.push_str("$'\\n'");
        } else {
            out.push('\\');
            out.push(c);
        }
    }
    out
}

/// A word as written (for what cannot be expanded), quoted so it re-parses the same.
fn raw(word: &super::parse::Word) -> String {
    let mut out = String::new();
    for part in &word.parts {
        match part {
            Part::Lit { text, quoted } => out.push_str(&quote(text, !quoted)),
            Part::Param { expr, quoted } => {
                let p = format!("${{{expr}}}");
                if *quoted {
                    out.push('"');
                    out.push_str(&p);
                    out.push('"');
                } else {
                    out.push_str(&p);
                }
            }
            Part::Command { script, .. } => {
                out.push_str("$(");
                out.push_str(script);
                out.push(')');
            }
            Part::Arith => out.push_str("$((0))"),
            Part::Process { script } => {
                out.push_str("<(");
                out.push_str(script);
                out.push(')');
            }
        }
    }
    out
}
