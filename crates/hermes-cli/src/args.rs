//! Command-line arguments, with the reference's names.

use clap::{Args, Parser, Subcommand};

/// Hermes Agent: a self-improving, tool-using AI agent — in the terminal
/// (`hermes`, `hermes chat -q …`), behind an OpenAI-compatible API and chat
/// apps (`hermes gateway run`), in editors (`hermes acp`) and on a schedule
/// (`hermes cron`).
#[derive(Debug, Parser)]
#[command(name = "hermes", version, disable_version_flag = true)]
pub struct Cli {
    /// Print the version and exit.
    #[arg(short = 'V', long = "version")]
    pub version: bool,

    /// One-shot mode: send PROMPT and print only the final answer to stdout.
    #[arg(short = 'z', long = "oneshot", value_name = "PROMPT")]
    pub oneshot: Option<String>,

    #[command(flatten)]
    pub run: RunArgs,

    /// Run the shell hooks in config.yaml without asking (records the approval).
    #[arg(long = "accept-hooks", global = true)]
    pub accept_hooks: bool,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Chat with the agent (interactive, or one query with -q).
    Chat(ChatArgs),
    /// Manage session history (list, show, search, export, delete, prune, archive, optimize, repair, rename, stats).
    Sessions(Box<crate::sessions::SessionsArgs>),
    /// Manage pooled API keys (auth.json).
    Auth(crate::auth_cmd::AuthArgs),
    /// Show or set the provider and model; list providers' models; download local models.
    Model(crate::model_cmd::ModelArgs),
    /// List, show, create and delete skills.
    Skills(crate::skills_cmd::SkillsArgs),
    /// Manage MCP servers (add, list, remove, test) and run Hermes as an MCP server (serve).
    Mcp(crate::mcp_cmd::McpArgs),
    /// Run the gateway (the OpenAI-compatible API server), show its status, install it as a service.
    Gateway(crate::gateway_cmd::GatewayArgs),
    /// Serve the web dashboard: chat, sessions, usage, cron, gateway, config, skills, MCP, logs.
    Dashboard(crate::dashboard_cmd::DashboardArgs),
    /// Profiles (separate homes): list, use, create [--clone], show, rename, delete, export, import.
    Profile(crate::profile_cmd::ProfileArgs),
    /// Usage insights: sessions, tokens, cost, models, platforms, top tools, busiest hours.
    Insights(crate::insights_cmd::InsightsArgs),
    /// Send a message to a configured platform (scripts, cron, CI); no model is asked.
    Send(crate::send_cmd::SendArgs),
    /// Approve or revoke messaging users who asked to pair (list, approve, revoke, clear-pending).
    Pairing(crate::pairing_cmd::PairingArgs),
    /// Webhook routes that let any service trigger the agent (subscribe, list, remove, test).
    Webhook(crate::webhook_cmd::WebhookArgs),
    /// Show or change settings (config.yaml and .env).
    Config(crate::config_cmd::ConfigArgs),
    /// Show what is installed and configured.
    Status,
    /// Show the version.
    Version,
    /// List, enable and disable toolsets per platform.
    Tools(crate::tools_cmd::ToolsArgs),
    /// Set Hermes up: the local model, a provider and its key, or an endpoint.
    Setup(crate::setup_cmd::SetupArgs),
    /// Check the configuration, the model endpoint and the session store; say how to fix problems.
    Doctor(crate::doctor::DoctorArgs),
    /// Scheduled jobs: list, add, pause, resume, remove, run, tick, status.
    Cron(crate::cron_cmd::CronArgs),
    Batch(Box<crate::batch_cmd::BatchArgs>),
    /// Inspect or clear the checkpoint store behind /rollback.
    Checkpoints(crate::checkpoints_cmd::CheckpointsArgs),
    /// Show the logs (agent, errors, gateway, mcp), filtered or followed.
    Logs(crate::logs_cmd::LogsArgs),
    /// Serve the Agent Client Protocol on stdio (for Zed, VS Code, JetBrains).
    Acp(crate::acp_cmd::AcpArgs),
    /// Shell hooks from config.yaml: list, test, revoke, doctor.
    Hooks(crate::hooks_cmd::HooksArgs),
    /// Plugins in $HERMES_HOME/plugins: list, enable, disable.
    Plugins(crate::plugins_cmd::PluginsArgs),
    /// Print a shell completion script: eval "$(hermes completion bash)".
    Completion {
        /// The shell.
        #[arg(value_enum, default_value = "bash")]
        shell: CompletionShell,
    },
}

/// `hermes chat` flags.
#[derive(Debug, Args)]
pub struct ChatArgs {
    /// A single query (non-interactive mode).
    #[arg(short = 'q', long = "query", value_name = "QUERY")]
    pub query: Option<String>,

    /// Quiet mode for programs: only the final answer on stdout, the session id on stderr.
    #[arg(short = 'Q', long = "quiet")]
    pub quiet: bool,

    #[command(flatten)]
    pub run: RunArgs,
}

/// Flags shared by the top level (`-z`) and `chat`.
#[derive(Debug, Args, Clone, Default)]
pub struct RunArgs {
    /// Model to use (e.g. anthropic/claude-sonnet-4).
    #[arg(short = 'm', long = "model")]
    pub model: Option<String>,

    /// Inference provider (openrouter, openai, custom, or an alias such as ollama).
    #[arg(long = "provider")]
    pub provider: Option<String>,

    /// Comma-separated toolsets to enable (default: config `toolsets`, i.e. hermes-cli).
    #[arg(short = 't', long = "toolsets", value_name = "LIST")]
    pub toolsets: Option<String>,

    /// Maximum model calls per turn before the agent must summarise (default: agent.max_turns, 90).
    #[arg(long = "max-turns", value_name = "N")]
    pub max_turns: Option<u32>,

    /// Skip dangerous-command approval prompts.
    #[arg(long = "yolo")]
    pub yolo: bool,

    /// Ignore config.yaml and use built-in defaults (.env credentials still load).
    #[arg(long = "ignore-user-config")]
    pub ignore_user_config: bool,

    /// Skip injected context files (AGENTS.md, SOUL.md, .cursorrules, memory).
    #[arg(long = "ignore-rules")]
    pub ignore_rules: bool,

    /// Resume a previous session by id (or unique id prefix) or title.
    #[arg(short = 'r', long = "resume", value_name = "SESSION")]
    pub resume: Option<String>,

    /// Preload skills (comma-separated names) for the session, ahead of the first message.
    #[arg(short = 's', long = "skills", value_name = "NAMES")]
    pub skills: Option<String>,

    /// Checkpoint project files before tools change them (/rollback restores them).
    #[arg(long = "checkpoints")]
    pub checkpoints: bool,

    /// Resume a session by name, or the most recent one when no name is given.
    #[arg(short = 'c', long = "continue", value_name = "SESSION_NAME", num_args = 0..=1, default_missing_value = "")]
    pub continue_last: Option<String>,
}

/// Shells `hermes completion` writes for.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum CompletionShell {
    /// Bash.
    Bash,
    /// Zsh.
    Zsh,
    /// Fish.
    Fish,
}
