//! Automatic session titles: after the first exchange (tried again after the
//! second if that failed), a model names the conversation in a few words, in
//! the background, so `hermes sessions list` and `hermes -c "Title"` have
//! something better than an id. A title set by hand is never replaced.

use std::sync::Arc;
use std::time::Duration;

use hermes_agent::Route;
use hermes_llm::{ChatRequest, complete};
use hermes_protocol::{Message, Role};
use tokio_util::sync::CancellationToken;

use crate::store::SessionStore;

/// How long a title may take (`auxiliary.title_generation.timeout`'s default).
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Titles longer than this are cut (with an ellipsis).
const MAX_CHARS: usize = 80;
/// Only the first exchanges are worth titling from.
const MAX_USER_MESSAGES: usize = 2;

/// What titling needs, fixed when the session starts.
#[derive(Clone)]
pub(crate) struct Titler {
    pub(crate) route: Route,
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) language: Option<String>,
    pub(crate) timeout: Duration,
}

/// The instruction the titling model gets.
fn instruction(language: Option<&str>) -> String {
    let language = language.map_or_else(
        || "Use the language the user writes in.".to_owned(),
        |l| format!("Write it in {l}."),
    );
    format!(
        "Name the conversation below in 3 to 7 words: a short title that says what it is \
         about. {language} Answer with the title alone: no quotes, no label, no final \
         punctuation."
    )
}

/// The model's answer as a title: think blocks, quotes and a `Title:` label
/// dropped, one line, at most [`MAX_CHARS`] characters.
pub(crate) fn clean(raw: &str) -> Option<String> {
    let mut text = raw.to_owned();
    while let (Some(start), Some(end)) = (text.find("<think>"), text.find("</think>")) {
        if end < start {
            break;
        }
        text.replace_range(start..end + "</think>".len(), "");
    }
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let mut title = line
        .trim_matches(|c| matches!(c, '"' | '\'' | '`' | '*'))
        .trim();
    if title.len() >= 6 && title[..6].eq_ignore_ascii_case("title:") {
        title = title[6..].trim();
    }
    let title = title.trim_matches(|c| matches!(c, '"' | '\'')).trim();
    if title.is_empty() {
        return None;
    }
    if title.chars().count() > MAX_CHARS {
        let cut: String = title.chars().take(MAX_CHARS - 3).collect();
        return Some(format!("{}...", cut.trim_end()));
    }
    Some(title.to_owned())
}

/// The exchange to title from, if the conversation is still young enough:
/// (first user message, latest answer).
pub(crate) fn exchange(messages: &[Message]) -> Option<(String, String)> {
    let users: Vec<&Message> = messages.iter().filter(|m| m.role == Role::User).collect();
    if users.is_empty() || users.len() > MAX_USER_MESSAGES {
        return None;
    }
    let answer = messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant && !m.text().trim().is_empty())?;
    Some((users[0].text().to_owned(), answer.text().to_owned()))
}

fn clip(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

impl Titler {
    /// Titles `session_id` from this exchange unless it has a title already;
    /// failures only cost the title.
    pub(crate) async fn run(self, session_id: String, user: String, answer: String) {
        let untitled = self
            .store
            .session(&session_id)
            .ok()
            .flatten()
            .is_some_and(|row| row.title.as_deref().is_none_or(|t| t.trim().is_empty()));
        if !untitled {
            return;
        }
        let request = ChatRequest {
            model: self.route.model.clone(),
            messages: vec![
                Message::system(instruction(self.language.as_deref())),
                Message::user(format!(
                    "User: {}\n\nAssistant: {}",
                    clip(&user, 500),
                    clip(&answer, 500)
                )),
            ],
            temperature: Some(0.3),
            ..ChatRequest::default()
        };
        let cancel = CancellationToken::new();
        let done = tokio::time::timeout(
            self.timeout,
            complete(self.route.provider.as_ref(), &request, &cancel),
        )
        .await;
        let Ok(Ok(done)) = done else {
            cancel.cancel();
            return;
        };
        if let Some(title) = clean(done.message.text()) {
            let _ = self.store.set_title_if_empty(&session_id, &title);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_become_clean_titles() {
        assert_eq!(
            clean("\"Fixing the build\"").as_deref(),
            Some("Fixing the build")
        );
        assert_eq!(
            clean("Title: Rust lifetimes").as_deref(),
            Some("Rust lifetimes")
        );
        assert_eq!(
            clean("<think>hmm</think>\n\n  Deploying to staging  \nmore").as_deref(),
            Some("Deploying to staging")
        );
        assert_eq!(clean("  \n"), None);
        let long = "word ".repeat(40);
        let cut = clean(&long).unwrap();
        assert!(
            cut.ends_with("...") && cut.chars().count() <= MAX_CHARS,
            "{cut}"
        );
    }

    #[test]
    fn only_young_conversations_are_titled() {
        let mut messages = vec![Message::system("s"), Message::user("first question")];
        assert_eq!(exchange(&messages), None);
        messages.push(Message::assistant("an answer"));
        assert_eq!(
            exchange(&messages),
            Some(("first question".into(), "an answer".into()))
        );
        messages.push(Message::user("second"));
        messages.push(Message::assistant("second answer"));
        assert_eq!(
            exchange(&messages).map(|(_, a)| a).as_deref(),
            Some("second answer")
        );
        messages.push(Message::user("third"));
        messages.push(Message::assistant("third answer"));
        assert_eq!(exchange(&messages), None);
    }

    #[test]
    fn the_instruction_names_a_configured_language() {
        assert!(instruction(Some("French")).contains("Write it in French."));
        assert!(instruction(None).contains("language the user writes in"));
    }
}
