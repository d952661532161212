//! The one place secrets are masked before text joins the conversation: every
//! tool result and every assistant reply, streamed or whole. What joins the
//! conversation goes to the provider, state.db, exports and logs, so masking
//! it here covers all of them; the streamed deltas every front-end shows are
//! masked the same way ([`assistant_stream`]).

use hermes_llm::redact::{
    RedactOptions, StreamRedactor, is_env_like_file, redact_terminal_output, redact_with,
};
use serde_json::Value;

/// `content` of a `tool` call with `args`, its secrets masked. JSON results
/// are masked string by string, so a value never runs into the escaped text
/// after it; everything else as text.
pub fn tool_result(tool: &str, args: &Value, content: &str) -> String {
    let mode = Mode::of(tool, args);
    match serde_json::from_str::<Value>(content) {
        Ok(mut value @ (Value::Object(_) | Value::Array(_))) => {
            if mask_value(&mut value, mode, false) {
                value.to_string()
            } else {
                content.to_owned()
            }
        }
        _ => mode.apply(content, false),
    }
}

/// A tool call's arguments as front-ends show them (progress lines, API
/// `tool.started`, ACP titles): keys the model put in them masked string by
/// string, so the JSON stays valid. The call itself runs with the real ones.
pub fn tool_arguments(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(mut value @ (Value::Object(_) | Value::Array(_))) => {
            let mode = Mode::Read { env_file: false };
            if mask_value(&mut value, mode, false) {
                value.to_string()
            } else {
                text.to_owned()
            }
        }
        _ => assistant_text(text),
    }
}

/// An assistant reply with any key it repeats masked; code it shows (where
/// `KEY=value` is usually a constant) is left alone.
pub fn assistant_text(text: &str) -> String {
    redact_with(text, RedactOptions::FILE_READ)
}

/// A masker for an assistant reply as it streams: what it releases
/// concatenates to [`assistant_text`] of the whole reply.
pub fn assistant_stream() -> StreamRedactor {
    StreamRedactor::new(RedactOptions::FILE_READ)
}

/// How a tool's output is read.
#[derive(Clone, Copy)]
enum Mode<'a> {
    /// Shell output: assignments masked only for environment dumps.
    Terminal(Option<&'a str>),
    /// Content the model reads and may write back; `KEY=value` lines are
    /// secrets too when they come from a dotenv-like file.
    Read { env_file: bool },
}

impl<'a> Mode<'a> {
    fn of(tool: &str, args: &'a Value) -> Self {
        let arg = |name: &str| args.get(name).and_then(Value::as_str);
        match tool {
            "terminal" => Mode::Terminal(arg("command")),
            _ => Mode::Read {
                env_file: arg("path").is_some_and(is_env_like_file),
            },
        }
    }

    fn apply(self, text: &str, env_file: bool) -> String {
        match self {
            // `cat .env` prints a dotenv file: mask it as one.
            Mode::Terminal(Some(command))
                if command.split_whitespace().any(|word| {
                    is_env_like_file(word.trim_matches(['"', '\'', ';', '|', '&', '<', '>']))
                }) =>
            {
                redact_with(text, RedactOptions::ENV_FILE_READ)
            }
            Mode::Terminal(command) => redact_terminal_output(text, command),
            Mode::Read {
                env_file: from_args,
            } => {
                let options = if from_args || env_file {
                    RedactOptions::ENV_FILE_READ
                } else {
                    RedactOptions::FILE_READ
                };
                redact_with(text, options)
            }
        }
    }
}

/// Masks every string in `value`; an object naming a dotenv-like file in its
/// `path` / `file` field (a search hit) has its strings masked as that file's
/// content. Returns whether anything changed.
fn mask_value(value: &mut Value, mode: Mode<'_>, env_file: bool) -> bool {
    match value {
        Value::String(s) => {
            let masked = mode.apply(s, env_file);
            let changed = masked != *s;
            *s = masked;
            changed
        }
        Value::Array(items) => items.iter_mut().fold(false, |changed, item| {
            mask_value(item, mode, env_file) | changed
        }),
        Value::Object(map) => {
            let env_file = env_file
                || ["path", "file"].iter().any(|key| {
                    map.get(*key)
                        .and_then(Value::as_str)
                        .is_some_and(is_env_like_file)
                });
            map.values_mut().fold(false, |changed, item| {
                mask_value(item, mode, env_file) | changed
            })
        }
        _ => false,
    }
}

#[cfg(test)]
#[path = "redaction_tests.rs"]
mod tests;
