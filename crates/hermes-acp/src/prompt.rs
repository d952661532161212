//! One `session/prompt`: the runtime's events of the turn become
//! `session/update`s; approvals become permission requests to the client.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, EmbeddedResourceResource, PermissionOption, PermissionOptionKind,
    PromptRequest, PromptResponse, RequestPermissionOutcome, RequestPermissionRequest,
    SessionNotification, SessionUpdate, StopReason, ToolCallContent, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind, Usage,
};
use hermes_protocol::{ApprovalChoice, Event, Op, SessionEvent, TurnEnd};
use serde_json::{Value, json};

use crate::sessions::{Acp, AcpSession, send_usage};

/// The text, images and attachments of a prompt, as the runtime takes them.
struct Input {
    text: String,
    images: Vec<String>,
}

fn input_of(blocks: &[ContentBlock]) -> Input {
    let mut parts = Vec::new();
    let mut images = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::Image(img) => {
                if img.data.starts_with("data:") {
                    images.push(img.data.clone());
                } else {
                    images.push(format!("data:{};base64,{}", img.mime_type, img.data));
                }
            }
            ContentBlock::ResourceLink(link) => {
                let path = link.uri.strip_prefix("file://").unwrap_or(&link.uri);
                match std::fs::read(path) {
                    Ok(bytes) if bytes.len() <= 512 * 1024 => match String::from_utf8(bytes) {
                        Ok(body) => parts.push(format!(
                            "[Attached file: {}]\nURI: {}\n\n{body}",
                            link.name, link.uri
                        )),
                        Err(_) => parts.push(format!(
                            "[Attached file: {} — binary content omitted]",
                            link.name
                        )),
                    },
                    _ => parts.push(format!("[Attached file: {}]\nURI: {}", link.name, link.uri)),
                }
            }
            ContentBlock::Resource(res) => match &res.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    parts.push(format!("[Attached file: {}]\n\n{}", t.uri, t.text));
                }
                _ => parts.push("[Attached binary resource omitted]".into()),
            },
            _ => {}
        }
    }
    Input {
        text: parts.join("\n"),
        images,
    }
}

fn notify(cx: &ConnectionTo<Client>, id: &str, update: SessionUpdate) {
    let _ = cx.send_notification(SessionNotification::new(id.to_owned(), update));
}

fn say(cx: &ConnectionTo<Client>, id: &str, text: impl Into<String>) {
    notify(
        cx,
        id,
        SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text.into()))),
    );
}

impl Acp {
    /// Runs a prompt to its end; never fails (errors are told to the client as text).
    pub async fn prompt(&self, req: PromptRequest, cx: &ConnectionTo<Client>) -> PromptResponse {
        let id = req.session_id.0.to_string();
        let Some(session) = self.get(&id) else {
            return PromptResponse::new(StopReason::Refusal);
        };
        let input = input_of(&req.prompt);
        if input.text.trim().is_empty() && input.images.is_empty() {
            return PromptResponse::new(StopReason::EndTurn);
        }
        if input.images.is_empty()
            && let Some(reply) = self.command(&session, &id, &input.text, cx).await
        {
            say(cx, &id, reply);
            if let Ok(conv) = session.conv.try_lock() {
                send_usage(&id, &conv, cx);
            }
            return PromptResponse::new(StopReason::EndTurn);
        }
        if session.running.load(Ordering::SeqCst) {
            let n = {
                let mut queued = session
                    .queued
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                queued.push(input.text);
                queued.len()
            };
            say(cx, &id, format!("Queued for the next turn. ({n} queued)"));
            return PromptResponse::new(StopReason::EndTurn);
        }
        let mut response = self.turn(&session, &id, input, cx).await;
        loop {
            let next = {
                let mut queued = session
                    .queued
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                (!queued.is_empty() && response.stop_reason != StopReason::Cancelled)
                    .then(|| queued.remove(0))
            };
            let Some(text) = next else { break };
            notify(
                cx,
                &id,
                SessionUpdate::UserMessageChunk(ContentChunk::new(ContentBlock::from(
                    text.clone(),
                ))),
            );
            response = self
                .turn(
                    &session,
                    &id,
                    Input {
                        text,
                        images: Vec::new(),
                    },
                    cx,
                )
                .await;
        }
        response
    }

    /// One turn of the runtime, streamed to the client.
    async fn turn(
        &self,
        session: &Arc<AcpSession>,
        id: &str,
        input: Input,
        cx: &ConnectionTo<Client>,
    ) -> PromptResponse {
        let mut conv = session.conv.lock().await;
        session.cancelled.store(false, Ordering::SeqCst);
        session.running.store(true, Ordering::SeqCst);
        let op = if input.images.is_empty() {
            Op::UserInput { text: input.text }
        } else {
            Op::UserInputWithImages {
                text: input.text,
                images: input.images,
            }
        };
        let submission = match conv.submit(op) {
            Ok(s) => s,
            Err(e) => {
                session.running.store(false, Ordering::SeqCst);
                say(cx, id, format!("Hermes could not run this prompt: {e}"));
                return PromptResponse::new(StopReason::EndTurn);
            }
        };
        // The model's call id → the id the client knows, the tool, its arguments.
        let mut calls: HashMap<String, (String, String, Value)> = HashMap::new();
        let mut stop = StopReason::EndTurn;
        let mut usage = None;
        while let Some(SessionEvent {
            submission: of,
            event,
        }) = conv.next_event().await
        {
            if of != submission && of != 0 {
                continue;
            }
            match event {
                Event::TextDelta { text } => notify(
                    cx,
                    id,
                    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text))),
                ),
                Event::ReasoningDelta { text } => notify(
                    cx,
                    id,
                    SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::from(text))),
                ),
                Event::ToolStarted {
                    call_id,
                    name,
                    arguments,
                } => {
                    let args: Value =
                        serde_json::from_str(&arguments).unwrap_or_else(|_| json!({}));
                    let diff = matches!(name.as_str(), "write_file" | "patch")
                        .then(|| crate::edits::proposal(&name, &args, &session.cwd))
                        .flatten()
                        .filter(|(path, _)| session.mode().allows(path, &session.cwd))
                        .map(|(_, d)| d);
                    let id_for_client = self.tool_call_id();
                    let call =
                        crate::tools::started(&id_for_client, &name, &args, &session.cwd, diff);
                    calls.insert(call_id, (id_for_client, name, args));
                    notify(cx, id, SessionUpdate::ToolCall(call));
                }
                Event::ToolFinished {
                    call_id,
                    name,
                    outcome,
                    result,
                    ..
                } => {
                    let (client_id, args) = calls
                        .get(&call_id)
                        .map(|c| (c.0.clone(), c.2.clone()))
                        .unwrap_or_else(|| (call_id.clone(), Value::Null));
                    let ok = outcome == hermes_protocol::ToolOutcome::Ok;
                    let update = crate::tools::finished(&client_id, &name, &args, &result, ok);
                    notify(cx, id, SessionUpdate::ToolCallUpdate(update));
                }
                Event::ApprovalRequested {
                    request_id,
                    command,
                    reason,
                } => {
                    let choice = self.ask_command(id, &command, &reason, cx).await;
                    let _ = conv.submit(Op::ApprovalAnswer { request_id, choice });
                }
                Event::ClarifyRequested { request_id, .. } => {
                    // Editors have no way to answer free-form questions mid-turn:
                    // the model is told to decide itself.
                    let _ = conv.submit(Op::ClarifyAnswer {
                        request_id,
                        answer: None,
                    });
                }
                Event::TurnComplete {
                    reason,
                    usage: used,
                    ..
                } => {
                    if reason == TurnEnd::Interrupted || session.cancelled.load(Ordering::SeqCst) {
                        stop = StopReason::Cancelled;
                    }
                    usage = Some(used);
                    break;
                }
                Event::Error { message } => {
                    if session.cancelled.load(Ordering::SeqCst) {
                        stop = StopReason::Cancelled;
                    } else {
                        say(cx, id, format!("\n\n⚠️ {message}"));
                    }
                    break;
                }
                _ => {}
            }
        }
        session.running.store(false, Ordering::SeqCst);
        send_usage(id, &conv, cx);
        let mut response = PromptResponse::new(stop);
        if let Some(u) = usage.filter(|u| u.total() > 0) {
            let mut acp_usage = Usage::new(u.total(), u.input_tokens, u.output_tokens);
            if u.reasoning_tokens > 0 {
                acp_usage = acp_usage.thought_tokens(u.reasoning_tokens);
            }
            if u.cache_read_tokens > 0 {
                acp_usage = acp_usage.cached_read_tokens(u.cache_read_tokens);
            }
            response = response.usage(acp_usage);
        }
        response
    }

    /// Puts a dangerous command to the client; the answer as an approval choice.
    async fn ask_command(
        &self,
        id: &str,
        command: &str,
        reason: &str,
        cx: &ConnectionTo<Client>,
    ) -> ApprovalChoice {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        let call = ToolCallUpdate::new(
            format!("perm-check-{n}"),
            ToolCallUpdateFields::new()
                .title(format!("{reason}: {command}"))
                .kind(ToolKind::Execute)
                .status(ToolCallStatus::Pending)
                .content(vec![ToolCallContent::from(ContentBlock::from(format!(
                    "{reason}\n$ {command}"
                )))])
                .raw_input(json!({"command": command, "description": reason})),
        );
        let options = vec![
            PermissionOption::new("allow_once", "Allow once", PermissionOptionKind::AllowOnce),
            PermissionOption::new(
                "allow_session",
                "Allow for session",
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new(
                "allow_always",
                "Allow always",
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new("deny", "Deny", PermissionOptionKind::RejectOnce),
            PermissionOption::new(
                "deny_always",
                "Deny always",
                PermissionOptionKind::RejectAlways,
            ),
        ];
        let request = RequestPermissionRequest::new(id.to_owned(), call, options);
        match cx
            .send_request(request)
            .block_task()
            .await
            .map(|r| r.outcome)
        {
            Ok(RequestPermissionOutcome::Selected(s)) => match &*s.option_id.0 {
                "allow_once" => ApprovalChoice::Once,
                "allow_session" => ApprovalChoice::Session,
                "allow_always" => ApprovalChoice::Always,
                _ => ApprovalChoice::Deny,
            },
            _ => ApprovalChoice::Deny,
        }
    }
}
