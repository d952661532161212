//! The ACP sessions of this process: each one a runtime session plus what
//! the editor set (its mode, its working directory).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AvailableCommandsUpdate, ClientCapabilities, ContentBlock, ContentChunk, CurrentModeUpdate,
    ListSessionsResponse, McpServer, SessionInfo, SessionMode, SessionModeState,
    SessionNotification, SessionUpdate, UsageUpdate,
};
use hermes_protocol::{Message, Op, Role};
use hermes_session::{
    Conversation, ResumeRequest, Seed, SessionHooks, SessionManager, SessionSpec, Submitter,
};
use hermes_state::session_db::ListFilter;

use crate::edits::{EditGate, Mode};

/// One ACP session.
pub(crate) struct AcpSession {
    /// The runtime session (held by the turn that runs).
    pub conv: tokio::sync::Mutex<Conversation>,
    /// Sends ops without waiting for the turn (cancel, steer).
    pub submitter: Submitter,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Its edit mode.
    pub mode: Arc<Mutex<Mode>>,
    /// A turn is running.
    pub running: AtomicBool,
    /// The client cancelled the running turn.
    pub cancelled: AtomicBool,
    /// Prompts waiting for the running turn (`/queue`).
    pub queued: Mutex<Vec<String>>,
}

impl AcpSession {
    pub fn mode(&self) -> Mode {
        *self.mode.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Every session of the connection.
pub(crate) struct Acp {
    pub manager: SessionManager,
    sessions: Mutex<HashMap<String, Arc<AcpSession>>>,
    /// Numbers permission requests across sessions.
    pub counter: Arc<AtomicU64>,
    /// Makes tool call ids unique for the client (models reuse theirs across turns).
    tool_ids: AtomicU64,
    client: Mutex<ClientCapabilities>,
}

/// The modes payload of session replies.
pub(crate) fn modes(current: Mode) -> SessionModeState {
    SessionModeState::new(
        current.id(),
        Mode::ALL
            .iter()
            .map(|(_, id, name, desc)| SessionMode::new(*id, *name).description(*desc))
            .collect(),
    )
}

impl Acp {
    pub fn new(manager: SessionManager) -> Self {
        Self {
            manager,
            sessions: Mutex::new(HashMap::new()),
            counter: Arc::new(AtomicU64::new(0)),
            tool_ids: AtomicU64::new(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64),
            ),
            client: Mutex::new(ClientCapabilities::new()),
        }
    }

    /// A fresh `tc-<12 hex>` id for a tool call shown to the client.
    pub fn tool_call_id(&self) -> String {
        let n = self.tool_ids.fetch_add(0x9E37_79B9, Ordering::Relaxed);
        format!("tc-{:012x}", n & 0xffff_ffff_ffff)
    }

    pub fn set_client_capabilities(&self, caps: ClientCapabilities) {
        *self.client.lock().unwrap_or_else(PoisonError::into_inner) = caps;
    }

    pub fn get(&self, id: &str) -> Option<Arc<AcpSession>> {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// Starts a runtime session for the editor (new, or `resume`/`seed` an old one).
    async fn start(
        &self,
        id: &str,
        cwd: PathBuf,
        mcp_servers: &[McpServer],
        resume: Option<ResumeRequest>,
        history: Option<Vec<Message>>,
        cx: &ConnectionTo<Client>,
    ) -> Result<Arc<AcpSession>, String> {
        let cwd = if cwd.is_absolute() && cwd.is_dir() {
            cwd
        } else {
            std::env::current_dir().map_err(|e| e.to_string())?
        };
        let mode = Arc::new(Mutex::new(Mode::Default));
        let gate = EditGate {
            session_id: id.to_owned(),
            cwd: cwd.clone(),
            mode: mode.clone(),
            client: cx.clone(),
            counter: self.counter.clone(),
        };
        let seed = match (&resume, history) {
            (Some(_), _) => None,
            (None, history) => Some(Seed {
                session_id: id.to_owned(),
                history: history.unwrap_or_default(),
                ephemeral_prompt: None,
            }),
        };
        let files = {
            let caps = self.client.lock().unwrap_or_else(PoisonError::into_inner);
            (caps.fs.read_text_file || caps.fs.write_text_file).then(|| {
                Arc::new(crate::edits::EditorFiles {
                    session_id: id.to_owned(),
                    client: cx.clone(),
                    read: caps.fs.read_text_file,
                    write: caps.fs.write_text_file,
                }) as Arc<dyn hermes_tools::ClientFiles>
            })
        };
        let spec = SessionSpec {
            client_files: files,
            interactive: true,
            auto_title: true,
            resume,
            seed,
            toolsets: Some(toolsets(&self.manager, mcp_servers)),
            hooks: SessionHooks(vec![Arc::new(gate)]),
            ..SessionSpec::new("acp", cwd.clone())
        };
        let conv = self.manager.start(spec).await.map_err(|e| e.to_string())?;
        let session = Arc::new(AcpSession {
            submitter: conv.submitter(),
            conv: tokio::sync::Mutex::new(conv),
            cwd,
            mode,
            running: AtomicBool::new(false),
            cancelled: AtomicBool::new(false),
            queued: Mutex::new(Vec::new()),
        });
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_owned(), session.clone());
        Ok(session)
    }

    /// `session/new`: a fresh session; its id.
    pub async fn new_session(
        &self,
        cwd: PathBuf,
        mcp_servers: &[McpServer],
        history: Option<Vec<Message>>,
        cx: &ConnectionTo<Client>,
    ) -> Result<String, String> {
        let id = hermes_session::session_id::new_session_id();
        self.start(&id, cwd, mcp_servers, None, history, cx).await?;
        Ok(id)
    }

    /// `session/load` (replaying the history to the client) or `session/resume`.
    pub async fn restore(
        &self,
        id: &str,
        cwd: PathBuf,
        mcp_servers: &[McpServer],
        replay: bool,
        cx: &ConnectionTo<Client>,
    ) -> Result<Mode, String> {
        let session = match self.get(id) {
            Some(s) => s,
            None => {
                let store = self
                    .manager
                    .services()
                    .store()
                    .ok_or("session history is off")?;
                if store.session(id).map_err(|e| e.to_string())?.is_none() {
                    return Err(format!("unknown session {id}"));
                }
                let request = Some(ResumeRequest::Resume(id.to_owned()));
                self.start(id, cwd, mcp_servers, request, None, cx).await?
            }
        };
        if replay {
            let store = self
                .manager
                .services()
                .store()
                .ok_or("session history is off")?;
            let history = store.conversation(id).map_err(|e| e.to_string())?;
            replay_history(id, &history, &session.cwd, &|| self.tool_call_id(), cx);
        }
        Ok(session.mode())
    }

    /// `session/fork`: a new session that starts with `from`'s conversation.
    pub async fn fork(
        &self,
        from: &str,
        cwd: PathBuf,
        mcp_servers: &[McpServer],
        cx: &ConnectionTo<Client>,
    ) -> Result<String, String> {
        let store = self
            .manager
            .services()
            .store()
            .ok_or("session history is off")?;
        let history = store.conversation(from).map_err(|e| e.to_string())?;
        if history.is_empty() && self.get(from).is_none() {
            return Err(format!("unknown session {from}"));
        }
        let history: Vec<Message> = history
            .into_iter()
            .filter(|m| m.role != Role::System)
            .collect();
        self.new_session(cwd, mcp_servers, Some(history), cx).await
    }

    /// `session/list`: this front-end's stored sessions, newest first, 50 a page.
    pub fn list(
        &self,
        cwd: Option<&Path>,
        cursor: Option<&str>,
    ) -> Result<ListSessionsResponse, String> {
        const PAGE: usize = 50;
        // The store the sessions were written to (state.db or the shared database).
        let db = self
            .manager
            .services()
            .admin()
            .ok_or_else(|| "the session store is unavailable".to_owned())?;
        let filter = ListFilter {
            source: Some("acp".into()),
            limit: 10_000,
            ..ListFilter::default()
        };
        let mut rows = db.list_sessions(&filter).map_err(|e| e.to_string())?;
        rows.retain(|r| r.message_count > 0);
        rows.sort_by(|a, b| b.last_active.total_cmp(&a.last_active));
        let start = match cursor {
            Some(c) => match rows.iter().position(|r| r.id == c) {
                Some(i) => i + 1,
                None => rows.len(),
            },
            None => 0,
        };
        let mut infos = Vec::new();
        for row in rows.iter().skip(start) {
            let full = db.session_row(&row.id).ok().flatten();
            let row_cwd = full
                .as_ref()
                .and_then(|s| s.cwd.clone())
                .map(PathBuf::from)
                .unwrap_or_default();
            if cwd.is_some_and(|c| c != row_cwd) {
                continue;
            }
            let title = row
                .title
                .clone()
                .filter(|t| !t.is_empty())
                .or_else(|| Some(row.preview.clone()).filter(|p| !p.is_empty()))
                .unwrap_or_else(|| "New thread".into());
            infos.push(
                SessionInfo::new(row.id.clone(), row_cwd)
                    .title(title)
                    .updated_at(iso(row.last_active)),
            );
            if infos.len() == PAGE {
                break;
            }
        }
        let next = (infos.len() == PAGE)
            .then(|| infos.last().map(|i| i.session_id.0.to_string()))
            .flatten();
        Ok(ListSessionsResponse::new(infos).next_cursor(next))
    }

    /// `session/set_mode`.
    pub fn set_mode(&self, id: &str, mode: Mode, cx: &ConnectionTo<Client>) -> Result<(), String> {
        let session = self
            .get(id)
            .ok_or_else(|| format!("unknown session {id}"))?;
        *session.mode.lock().unwrap_or_else(PoisonError::into_inner) = mode;
        let _ = cx.send_notification(SessionNotification::new(
            id.to_owned(),
            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.id())),
        ));
        Ok(())
    }

    /// After a session opens: the slash commands it knows and its context use.
    pub fn announce(
        &self,
        id: &str,
        cx: &ConnectionTo<Client>,
    ) -> Result<(), agent_client_protocol::Error> {
        cx.send_notification(SessionNotification::new(
            id.to_owned(),
            SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(
                crate::commands::available(),
            )),
        ))?;
        if let Some(session) = self.get(id)
            && let Ok(conv) = session.conv.try_lock()
        {
            send_usage(id, &conv, cx);
        }
        Ok(())
    }

    /// `session/cancel`: interrupts the running turn.
    pub fn cancel(&self, id: &str) {
        if let Some(session) = self.get(id)
            && session.running.load(Ordering::SeqCst)
        {
            session.cancelled.store(true, Ordering::SeqCst);
            let _ = session.submitter.submit(Op::Interrupt);
        }
    }

    /// Ends every session (the client closed the connection).
    pub async fn shutdown(&self) {
        let all: Vec<Arc<AcpSession>> = self
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(_, s)| s)
            .collect();
        for session in all {
            let _ = session.submitter.submit(Op::Interrupt);
            let conv = session.conv.lock().await;
            drop(conv);
            if let Ok(session) = Arc::try_unwrap(session) {
                let _ = session.conv.into_inner().shutdown("acp_close").await;
            }
        }
    }
}

/// The toolsets of an ACP session: `hermes-acp` (or `platform_toolsets.acp`),
/// the MCP servers of config.yaml and the client's own. The client's servers
/// join the process's MCP hub first.
fn toolsets(manager: &SessionManager, mcp_servers: &[McpServer]) -> Vec<String> {
    let services = manager.services();
    let setup = services.setup();
    let configured = setup.config.toolsets_for("acp");
    let mut sets = if configured.is_empty() {
        vec!["hermes-acp".to_owned()]
    } else {
        configured
    };
    let mut entries = serde_json::Map::new();
    for server in mcp_servers {
        let (name, entry) = match server {
            McpServer::Stdio(s) => (
                s.name.clone(),
                serde_json::json!({
                    "command": s.command,
                    "args": s.args,
                    "env": s.env.iter().map(|e| (e.name.clone(), serde_json::json!(e.value))).collect::<serde_json::Map<_, _>>(),
                }),
            ),
            McpServer::Http(s) => (s.name.clone(), remote_entry(&s.url, &s.headers)),
            McpServer::Sse(s) => (s.name.clone(), remote_entry(&s.url, &s.headers)),
            _ => continue,
        };
        entries.insert(name, entry);
    }
    if entries.is_empty() {
        return sets;
    }
    let client_servers: Vec<String> = entries.keys().cloned().collect();
    services.add_mcp_servers(entries);
    // Naming any server limits a session to the named ones: name them all.
    let config = hermes_session::mcp::config_of(setup);
    for name in config
        .enabled()
        .map(|s| s.name.clone())
        .chain(client_servers)
    {
        sets.push(format!("mcp-{name}"));
    }
    sets
}

fn remote_entry(
    url: &str,
    headers: &[agent_client_protocol::v1::schema::HttpHeader],
) -> serde_json::Value {
    let headers: serde_json::Map<String, serde_json::Value> = headers
        .iter()
        .map(|h| (h.name.clone(), serde_json::json!(h.value)))
        .collect();
    serde_json::json!({"url": url, "headers": headers})
}

/// Sends `usage_update`: the context used and its size.
pub(crate) fn send_usage(id: &str, conv: &Conversation, cx: &ConnectionTo<Client>) {
    let info = conv.info();
    if info.context_length == 0 {
        return;
    }
    let _ = cx.send_notification(SessionNotification::new(
        id.to_owned(),
        SessionUpdate::UsageUpdate(UsageUpdate::new(info.approx_tokens, info.context_length)),
    ));
}

/// Replays a stored conversation as `session/update`s.
fn replay_history(
    id: &str,
    history: &[Message],
    cwd: &Path,
    next_id: &dyn Fn() -> String,
    cx: &ConnectionTo<Client>,
) {
    let send = |update: SessionUpdate| {
        let _ = cx.send_notification(SessionNotification::new(id.to_owned(), update));
    };
    // The stored call id → the id shown to the client, the tool, its arguments.
    let mut calls: HashMap<String, (String, String, serde_json::Value)> = HashMap::new();
    for m in history {
        match m.role {
            Role::User => {
                let text = m.text();
                if !text.is_empty() {
                    send(SessionUpdate::UserMessageChunk(ContentChunk::new(
                        ContentBlock::from(text.to_owned()),
                    )));
                }
            }
            Role::Assistant => {
                if let Some(r) = m.reasoning.as_deref().filter(|r| !r.trim().is_empty()) {
                    send(SessionUpdate::AgentThoughtChunk(ContentChunk::new(
                        ContentBlock::from(r.to_owned()),
                    )));
                }
                let text = m.text();
                if !text.is_empty() {
                    send(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                        ContentBlock::from(text.to_owned()),
                    )));
                }
                for call in &m.tool_calls {
                    let args: serde_json::Value =
                        serde_json::from_str(&call.function.arguments).unwrap_or_default();
                    let shown = next_id();
                    let tool = crate::tools::started(&shown, &call.function.name, &args, cwd, None);
                    calls.insert(call.id.clone(), (shown, call.function.name.clone(), args));
                    send(SessionUpdate::ToolCall(tool));
                }
            }
            Role::Tool => {
                let Some(call_id) = m.tool_call_id.as_deref() else {
                    continue;
                };
                let (shown, name, args) = calls.get(call_id).cloned().unwrap_or_default();
                send(SessionUpdate::ToolCallUpdate(crate::tools::finished(
                    &shown,
                    &name,
                    &args,
                    m.text(),
                    true,
                )));
            }
            _ => {}
        }
    }
}

fn iso(unix: f64) -> String {
    #[allow(clippy::cast_possible_truncation)]
    let secs = unix.floor() as i64;
    format!("{}Z", hermes_state::time::UtcTime::from_unix(secs).iso())
}
