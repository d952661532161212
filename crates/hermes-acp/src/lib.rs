//! `hermes acp`: Hermes as an Agent Client Protocol agent over stdio, for
//! editors (Zed, VS Code, JetBrains). Every ACP session is a session of the
//! shared runtime (source `acp`, stored in state.db); prompts stream the
//! runtime's events back as `session/update`s, dangerous commands and edits
//! ask the client through `session/request_permission`, and
//! `session/cancel` interrupts the turn.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod commands;
mod edits;
mod prompt;
mod sessions;
mod tools;

use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthenticateRequest, AuthenticateResponse, CancelNotification,
    ForkSessionRequest, ForkSessionResponse, Implementation, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    ResumeSessionRequest, ResumeSessionResponse, SessionCapabilities, SessionForkCapabilities,
    SessionListCapabilities, SessionResumeCapabilities, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    Agent, Client, Error, Stdio, on_receive_notification, on_receive_request,
};
use hermes_session::SessionManager;

pub use edits::{EDIT_DENIED, Mode};
use sessions::Acp;

/// The name the agent gives in `initialize`.
pub const AGENT_NAME: &str = "hermes-agent";

/// Why the ACP connection ended badly.
#[derive(Debug, thiserror::Error)]
#[error("ACP connection failed: {0}")]
pub struct AcpError(String);

/// Serves ACP on stdin/stdout until the client closes stdin.
pub async fn serve_stdio(manager: SessionManager) -> Result<(), AcpError> {
    let acp = Arc::new(Acp::new(manager));
    let (a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11) = (
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
        acp.clone(),
    );
    Agent
        .v1()
        .name(AGENT_NAME)
        .on_receive_request(
            async move |req: InitializeRequest,
                        r: Responder<InitializeResponse>,
                        _cx: ConnectionTo<Client>| {
                a1.set_client_capabilities(req.client_capabilities);
                r.respond(initialize_response())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |_req: AuthenticateRequest,
                        r: Responder<AuthenticateResponse>,
                        _cx: ConnectionTo<Client>| {
                r.respond(AuthenticateResponse::new())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: NewSessionRequest,
                        r: Responder<NewSessionResponse>,
                        cx: ConnectionTo<Client>| {
                let acp = a2.clone();
                cx.clone().spawn(async move {
                    match acp.new_session(req.cwd, &req.mcp_servers, None, &cx).await {
                        Ok(id) => {
                            r.respond(
                                NewSessionResponse::new(id.clone())
                                    .modes(sessions::modes(Mode::Default)),
                            )?;
                            acp.announce(&id, &cx)
                        }
                        Err(e) => r.respond_with_error(failed(e)),
                    }
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: LoadSessionRequest,
                        r: Responder<LoadSessionResponse>,
                        cx: ConnectionTo<Client>| {
                let acp = a3.clone();
                cx.clone().spawn(async move {
                    let id = req.session_id.0.to_string();
                    match acp.restore(&id, req.cwd, &req.mcp_servers, true, &cx).await {
                        Ok(mode) => {
                            r.respond(LoadSessionResponse::new().modes(sessions::modes(mode)))?;
                            acp.announce(&id, &cx)
                        }
                        Err(e) => r.respond_with_error(rejected(e)),
                    }
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ResumeSessionRequest,
                        r: Responder<ResumeSessionResponse>,
                        cx: ConnectionTo<Client>| {
                let acp = a4.clone();
                cx.clone().spawn(async move {
                    let id = req.session_id.0.to_string();
                    match acp
                        .restore(&id, req.cwd, &req.mcp_servers, false, &cx)
                        .await
                    {
                        Ok(mode) => {
                            r.respond(ResumeSessionResponse::new().modes(sessions::modes(mode)))?;
                            acp.announce(&id, &cx)
                        }
                        Err(e) => r.respond_with_error(rejected(e)),
                    }
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ForkSessionRequest,
                        r: Responder<ForkSessionResponse>,
                        cx: ConnectionTo<Client>| {
                let acp = a5.clone();
                cx.clone().spawn(async move {
                    let from = req.session_id.0.to_string();
                    match acp.fork(&from, req.cwd, &req.mcp_servers, &cx).await {
                        Ok(id) => {
                            r.respond(
                                ForkSessionResponse::new(id.clone())
                                    .modes(sessions::modes(Mode::Default)),
                            )?;
                            acp.announce(&id, &cx)
                        }
                        Err(e) => r.respond_with_error(rejected(e)),
                    }
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ListSessionsRequest,
                        r: Responder<ListSessionsResponse>,
                        _cx: ConnectionTo<Client>| {
                match a6.list(req.cwd.as_deref(), req.cursor.as_deref()) {
                    Ok(resp) => r.respond(resp),
                    Err(e) => r.respond_with_error(failed(e)),
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: SetSessionModeRequest,
                        r: Responder<SetSessionModeResponse>,
                        cx: ConnectionTo<Client>| {
                let id = req.session_id.0.to_string();
                match a7.set_mode(&id, Mode::parse(&req.mode_id.0), &cx) {
                    Ok(()) => r.respond(SetSessionModeResponse::new()),
                    Err(e) => r.respond_with_error(rejected(e)),
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: SetSessionConfigOptionRequest,
                        r: Responder<SetSessionConfigOptionResponse>,
                        cx: ConnectionTo<Client>| {
                let id = req.session_id.0.to_string();
                if &*req.config_id.0 == "edit_approval_policy" {
                    let value = serde_json::to_value(&req.value).unwrap_or_default();
                    let mode = match value
                        .as_str()
                        .or_else(|| value.get("value").and_then(|v| v.as_str()))
                    {
                        Some("workspace_session") => Mode::AcceptEdits,
                        Some("session") => Mode::DontAsk,
                        _ => Mode::Default,
                    };
                    if let Err(e) = a8.set_mode(&id, mode, &cx) {
                        return r.respond_with_error(rejected(e));
                    }
                }
                r.respond(SetSessionConfigOptionResponse::new(Vec::new()))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: PromptRequest,
                        r: Responder<agent_client_protocol::v1::schema::PromptResponse>,
                        cx: ConnectionTo<Client>| {
                let acp = a9.clone();
                cx.clone().spawn(async move {
                    let response = acp.prompt(req, &cx).await;
                    r.respond(response)
                })
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx: ConnectionTo<Client>| {
                a10.cancel(&n.session_id.0);
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await
        .map_err(|e| AcpError(e.to_string()))?;
    a11.shutdown().await;
    Ok(())
}

/// An internal failure, its reason in the message (clients show the message, not the data).
fn failed(reason: String) -> Error {
    Error::new(agent_client_protocol::ErrorCode::INTERNAL_ERROR, reason)
}

/// A request naming something that does not exist (a session id, a mode).
fn rejected(reason: String) -> Error {
    Error::new(agent_client_protocol::ErrorCode::INVALID_PARAMS, reason)
}

fn initialize_response() -> InitializeResponse {
    InitializeResponse::new(agent_client_protocol::schema::ProtocolVersion::V1)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
                // Hermes' MCP client speaks streamable HTTP and SSE as well as stdio.
                .mcp_capabilities(McpCapabilities::new().http(true).sse(true))
                .session_capabilities(
                    SessionCapabilities::new()
                        .fork(SessionForkCapabilities::new())
                        .list(SessionListCapabilities::new())
                        .resume(SessionResumeCapabilities::new()),
                ),
        )
        .agent_info(Implementation::new(AGENT_NAME, env!("CARGO_PKG_VERSION")))
}
