//! Dangerous-command approvals over chat: asking with buttons (or the
//! `/approve` wording where a platform has none), and answers by button,
//! command or plain word — only from the person whose message started the
//! turn, or an admin.

use hermes_protocol::{ApprovalChoice, Op};

use super::chat::{ChatWorker, PendingApproval};
use super::platform::{Button, Incoming, Outgoing, Sender};

/// Words that answer a pending approval in plain text.
pub(super) fn approval_word(text: &str) -> Option<ApprovalChoice> {
    match text.trim().to_lowercase().trim_end_matches(['.', '!']) {
        "approve" | "yes" | "ok" | "okay" | "confirm" | "y" | "👍" => Some(ApprovalChoice::Once),
        "deny" | "no" | "reject" | "cancel" | "n" | "👎" => Some(ApprovalChoice::Deny),
        "always" | "approve always" | "always approve" => Some(ApprovalChoice::Always),
        "session" | "approve session" | "session approve" => Some(ApprovalChoice::Session),
        _ => None,
    }
}

/// The label a choice gets once made.
pub(super) fn choice_label(choice: ApprovalChoice) -> &'static str {
    match choice {
        ApprovalChoice::Once => "✅ Approved once",
        ApprovalChoice::Session => "✅ Approved for session",
        ApprovalChoice::Always => "✅ Approved permanently",
        ApprovalChoice::Deny => "❌ Denied",
    }
}

fn parse_choice(word: &str) -> Option<ApprovalChoice> {
    match word {
        "once" => Some(ApprovalChoice::Once),
        "session" => Some(ApprovalChoice::Session),
        "always" => Some(ApprovalChoice::Always),
        "deny" => Some(ApprovalChoice::Deny),
        _ => None,
    }
}

impl ChatWorker {
    pub(super) async fn ask_approval(&mut self, request_id: u64, command: String, reason: String) {
        let shown: String = if command.chars().count() > 3800 {
            format!("{}...", command.chars().take(3800).collect::<String>())
        } else {
            command.clone()
        };
        let text =
            format!("⚠️ **Command Approval Required**\n\n```\n{shown}\n```\n\nReason: {reason}");
        let token = self.hub.register_press(&self.key);
        let button = |label: &str, choice: &str| Button {
            label: label.to_owned(),
            data: format!("ea:{choice}:{token}"),
        };
        let with_buttons = Outgoing {
            text: text.clone(),
            plain: false,
            buttons: vec![vec![
                button("✅ Allow Once", "once"),
                button("✅ Session", "session"),
                button("✅ Always", "always"),
                button("❌ Deny", "deny"),
            ]],
        };
        let mut message_id = None;
        if self.adapter.capabilities().buttons {
            message_id = self.adapter.send(&self.chat, &with_buttons).await.ok();
        }
        if message_id.is_none() {
            let fallback = format!(
                "⚠️ **Dangerous command requires approval:**\n```\n{shown}\n```\nReason: {reason}\n\n\
                 Reply `/approve` to execute this one operation, `/approve session` to approve this \
                 pattern for the session, `/approve always` to approve permanently, or `/deny` to cancel."
            );
            message_id = self
                .adapter
                .send(&self.chat, &Outgoing::markdown(fallback))
                .await
                .ok();
        }
        let owner = self
            .turn
            .as_ref()
            .and_then(|t| t.origin.as_ref())
            .map(|m| m.sender.id.clone());
        self.approvals.push(PendingApproval {
            request_id,
            owner,
            token,
            message_id,
        });
    }

    /// Whether `sender` may answer `pending`: the person whose message
    /// started the turn, or an admin. In a group, another member must not
    /// approve someone else's dangerous command.
    fn may_answer(&self, pending: &PendingApproval, sender: &Sender) -> bool {
        pending
            .owner
            .as_ref()
            .is_none_or(|owner| *owner == sender.id)
            || self.settings.admins.contains(&sender.id)
    }

    /// Answers the pending approvals `sender` may answer: the oldest, or
    /// all; returns how many (0 with a note when none were theirs).
    pub(super) async fn resolve_approvals(
        &mut self,
        choice: ApprovalChoice,
        all: bool,
        sender: &Sender,
    ) -> usize {
        let mine: Vec<usize> = (0..self.approvals.len())
            .filter(|&i| self.may_answer(&self.approvals[i], sender))
            .take(if all { usize::MAX } else { 1 })
            .collect();
        if mine.is_empty() {
            self.say(
                "⛔ Only the person who asked for this task (or an admin) can answer its approval.",
            )
            .await;
            return 0;
        }
        let by = sender.name.as_str();
        let mut chosen: Vec<PendingApproval> = Vec::with_capacity(mine.len());
        for i in mine.into_iter().rev() {
            chosen.push(self.approvals.remove(i));
        }
        chosen.reverse();
        for pending in &chosen {
            if let Some(conv) = &self.conv {
                let _ = conv.submit(Op::ApprovalAnswer {
                    request_id: pending.request_id,
                    choice,
                });
            }
            if let Some(id) = &pending.message_id {
                let note = Outgoing::plain(format!("{} by {by}", choice_label(choice)));
                let _ = self.adapter.edit(&self.chat, id, &note).await;
            }
        }
        chosen.len()
    }

    pub(super) async fn button(&mut self, message: &Incoming, press: &str) {
        let mut parts = message.text.splitn(3, ':');
        let (Some("ea"), Some(choice), Some(id)) = (parts.next(), parts.next(), parts.next())
        else {
            let _ = self.adapter.answer_press(press, "").await;
            return;
        };
        let (Some(choice), Ok(token)) = (parse_choice(choice), id.parse::<u64>()) else {
            let _ = self.adapter.answer_press(press, "").await;
            return;
        };
        let Some(i) = self.approvals.iter().position(|a| a.token == token) else {
            let _ = self
                .adapter
                .answer_press(press, "This approval has already been resolved.")
                .await;
            return;
        };
        if !self.may_answer(&self.approvals[i], &message.sender) {
            let _ = self
                .adapter
                .answer_press(press, "Only the person who asked (or an admin) can answer.")
                .await;
            return;
        }
        let pending = self.approvals.remove(i);
        self.approvals.insert(0, pending);
        let _ = self.adapter.answer_press(press, choice_label(choice)).await;
        self.resolve_approvals(choice, false, &message.sender).await;
    }
}
