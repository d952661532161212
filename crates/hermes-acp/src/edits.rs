//! Edit approval: in the editor's session mode, `write_file` and `patch` ask
//! the client first (with the diff), or go ahead for files the mode allows.
//! Runs as a `pre_tool_call` hook of the ACP session, so a denied edit never
//! touches the file and the model reads why.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    Diff, PermissionOption, PermissionOptionKind, ReadTextFileRequest, RequestPermissionOutcome,
    RequestPermissionRequest, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
    WriteTextFileRequest,
};
use futures_util::future::BoxFuture;
use hermes_tools::hooks::{HookEvent, HookHandler};
use serde_json::{Value, json};

/// What the model reads when the editor said no.
pub const EDIT_DENIED: &str = "Edit approval denied by ACP client; file was not modified.";

/// A session's mode: how much editing it may do without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Ask before every edit.
    Default,
    /// Edits in the workspace and the temp directory go ahead.
    AcceptEdits,
    /// Every edit goes ahead (sensitive files still ask).
    DontAsk,
}

impl Mode {
    /// Every mode: id, name, description.
    pub const ALL: [(Mode, &'static str, &'static str, &'static str); 3] = [
        (Mode::Default, "default", "Default", "Ask before edits."),
        (
            Mode::AcceptEdits,
            "accept_edits",
            "Accept Edits",
            "Auto-allow workspace and /tmp edits; still asks for sensitive paths.",
        ),
        (
            Mode::DontAsk,
            "dont_ask",
            "Don't Ask",
            "Auto-allow file edits for this session except sensitive paths.",
        ),
    ];

    /// Its id.
    pub fn id(self) -> &'static str {
        Mode::ALL
            .iter()
            .find(|m| m.0 == self)
            .map_or("default", |m| m.1)
    }

    /// The mode `id` names; anything unknown is the default.
    pub fn parse(id: &str) -> Mode {
        Mode::ALL
            .iter()
            .find(|m| m.1 == id)
            .map_or(Mode::Default, |m| m.0)
    }

    /// Whether an edit of `path` goes ahead without asking.
    pub fn allows(self, path: &Path, cwd: &Path) -> bool {
        if sensitive(path) {
            return false;
        }
        match self {
            Mode::Default => false,
            Mode::DontAsk => true,
            Mode::AcceptEdits => path.starts_with(cwd) || path.starts_with(std::env::temp_dir()),
        }
    }
}

fn sensitive(path: &Path) -> bool {
    const NAMES: [&str; 5] = [
        ".env",
        ".env.local",
        ".env.production",
        "id_rsa",
        "id_ed25519",
    ];
    path.components().any(|c| {
        let c = c.as_os_str();
        c == ".git" || c == ".ssh"
    }) || path
        .file_name()
        .is_some_and(|n| NAMES.iter().any(|s| n == *s))
}

/// The edit a call would make: the file and its text before and after.
pub fn proposal(tool: &str, args: &Value, cwd: &Path) -> Option<(PathBuf, Diff)> {
    let path = args.get("path").and_then(Value::as_str)?;
    let full = cwd.join(path);
    let old = std::fs::read_to_string(&full).ok();
    let new = match tool {
        "write_file" => args.get("content").and_then(Value::as_str)?.to_owned(),
        "patch" if args.get("mode").and_then(Value::as_str) == Some("patch") => {
            args.get("patch").and_then(Value::as_str)?.to_owned()
        }
        "patch" => {
            let from = args.get("old_string").and_then(Value::as_str)?;
            let to = args.get("new_string").and_then(Value::as_str).unwrap_or("");
            let all = args.get("replace_all").and_then(Value::as_bool) == Some(true);
            let text = old.as_deref()?;
            if !text.contains(from) || from.is_empty() {
                return None;
            }
            if all {
                text.replace(from, to)
            } else {
                text.replacen(from, to, 1)
            }
        }
        _ => return None,
    };
    let diff = Diff::new(full.clone(), new).old_text(old);
    Some((full, diff))
}

/// Asks the editor before `write_file` and `patch` run, as the mode says.
#[derive(Debug)]
pub struct EditGate {
    /// The ACP session id.
    pub session_id: String,
    /// The session's working directory.
    pub cwd: PathBuf,
    /// The session's mode, which the client may change any time.
    pub mode: Arc<Mutex<Mode>>,
    /// The client.
    pub client: ConnectionTo<Client>,
    /// Numbers the requests.
    pub counter: Arc<AtomicU64>,
}

impl EditGate {
    fn mode(&self) -> Mode {
        *self.mode.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn decide(&self, tool: &str, args: &Value) -> Option<Value> {
        let (path, diff) = match proposal(tool, args, &self.cwd) {
            Some(p) => p,
            None => {
                let path = args.get("path").and_then(Value::as_str).unwrap_or("");
                let full = self.cwd.join(path);
                let new = args
                    .get("patch")
                    .or_else(|| args.get("new_string"))
                    .or_else(|| args.get("content"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                (full.clone(), Diff::new(full, new))
            }
        };
        if self.mode().allows(&path, &self.cwd) {
            return None;
        }
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        let call = ToolCallUpdate::new(
            format!("edit-approval-{n}"),
            ToolCallUpdateFields::new()
                .title(format!("Approve edit: {}", path.display()))
                .kind(ToolKind::Edit)
                .status(ToolCallStatus::Pending)
                .content(vec![diff.into()])
                .raw_input(json!({"tool": tool, "arguments": args})),
        );
        let options = vec![
            PermissionOption::new("allow_once", "Allow edit", PermissionOptionKind::AllowOnce),
            PermissionOption::new("deny", "Deny", PermissionOptionKind::RejectOnce),
        ];
        let request = RequestPermissionRequest::new(self.session_id.clone(), call, options);
        let answer = self.client.send_request(request).block_task().await;
        let allowed = matches!(
            answer.map(|r| r.outcome),
            Ok(RequestPermissionOutcome::Selected(ref s)) if &*s.option_id.0 == "allow_once"
        );
        (!allowed).then(|| json!({"action": "block", "message": EDIT_DENIED}))
    }
}

impl HookHandler for EditGate {
    fn handles(&self, event: HookEvent, tool: Option<&str>) -> bool {
        event == HookEvent::PreToolCall && matches!(tool, Some("write_file" | "patch"))
    }

    fn call<'a>(
        &'a self,
        _event: HookEvent,
        payload: &'a Value,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            let tool = payload["tool_name"].as_str().unwrap_or_default();
            Ok(self.decide(tool, &payload["tool_input"]).await)
        })
    }
}

/// The editor's files: `read_file` and `write_file` go through the client's
/// `fs/read_text_file` and `fs/write_text_file` where it offers them, so the
/// model sees unsaved buffers and the editor sees its edits.
#[derive(Debug)]
pub struct EditorFiles {
    /// The ACP session id.
    pub session_id: String,
    /// The client.
    pub client: ConnectionTo<Client>,
    /// The client offered `fs/read_text_file`.
    pub read: bool,
    /// The client offered `fs/write_text_file`.
    pub write: bool,
}

impl hermes_tools::ClientFiles for EditorFiles {
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            if !self.read {
                return None;
            }
            let request = ReadTextFileRequest::new(self.session_id.clone(), path.to_path_buf());
            // The disk answers when the editor cannot (a file it has not opened and cannot read).
            self.client
                .send_request(request)
                .block_task()
                .await
                .ok()
                .map(|r| r.content)
        })
    }

    fn write<'a>(
        &'a self,
        path: &'a Path,
        content: &'a str,
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            if !self.write {
                return Ok(false);
            }
            let request =
                WriteTextFileRequest::new(self.session_id.clone(), path.to_path_buf(), content);
            self.client
                .send_request(request)
                .block_task()
                .await
                .map(|_| true)
                .map_err(|e| e.to_string())
        })
    }
}
