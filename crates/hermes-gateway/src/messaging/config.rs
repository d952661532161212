//! Messaging settings as the reference reads them: `platforms.<name>` in
//! config.yaml (also `gateway.platforms.<name>` and a top-level `<name>:`
//! block), the environment winning (`TELEGRAM_BOT_TOKEN` …), plus the
//! shared `streaming:`, `display:` and session-key switches.

use std::time::Duration;

use serde_json::Value;

use super::access::{AccessRules, list};

/// What a new message does while a turn runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusyMode {
    /// Stop the turn; the message runs next.
    Interrupt,
    /// The message waits for the turn to end.
    Queue,
    /// The message joins the running turn after its next tool call.
    Steer,
}

/// How tool calls show in the chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolProgress {
    /// Not at all.
    Off,
    /// A line when the tool changes.
    New,
    /// A line per call.
    All,
    /// A line per call with its arguments.
    Verbose,
}

/// Answers streamed by editing one message.
#[derive(Debug, Clone, PartialEq)]
pub struct Streaming {
    /// On (`streaming.enabled`; off by default, as in the reference).
    pub enabled: bool,
    /// Time between edits.
    pub edit_interval: Duration,
    /// Characters that force an edit sooner.
    pub buffer_threshold: usize,
    /// Shown at the end while the answer grows.
    pub cursor: String,
}

/// One platform's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PlatformSettings {
    /// `telegram`, `discord` or `slack`.
    pub name: &'static str,
    /// The bot token.
    pub token: String,
    /// Slack's app-level token (Socket Mode).
    pub app_token: Option<String>,
    /// The API's base address (emulators, proxies, self-hosted Bot API
    /// servers; Matrix's homeserver).
    pub base_url: Option<String>,
    /// Matrix: the bot's user id and password, to log in when no access
    /// token is given (`MATRIX_USER_ID`, `MATRIX_PASSWORD`).
    pub login: Option<(String, String)>,
    /// Email: the account (IMAP and SMTP).
    pub email: Option<super::email::EmailSettings>,
    /// A platform served by a plugin's executable.
    pub plugin: Option<PluginLaunch>,
    /// The platform's `extra` block in config.yaml (handed to plugins).
    pub extra: Value,
    /// Discord's gateway address (instead of asking `GET /gateway/bot`).
    pub gateway_url: Option<String>,
    /// Group messages need a mention.
    pub require_mention: bool,
    /// Tool progress lines.
    pub tool_progress: ToolProgress,
    /// Who may talk to the bot.
    pub access: AccessRules,
    /// The home channel (`<PLATFORM>_HOME_CHANNEL`).
    pub home_channel: Option<String>,
    /// A thread in it (`<PLATFORM>_HOME_CHANNEL_THREAD_ID`).
    pub home_thread: Option<String>,
    /// Show typing while working (`typing_indicator`).
    pub typing: bool,
    /// React to the person's message while working and when done
    /// (`<PLATFORM>_REACTIONS`; on for Slack and Discord, off for Telegram).
    pub reactions: bool,
    /// Slack: channel messages are answered in a thread (`reply_in_thread`);
    /// Matrix: each top-level room message starts a thread (`MATRIX_AUTO_THREAD`).
    pub reply_in_thread: bool,
    /// Slack: each top-level DM starts its own threaded session
    /// (`dm_top_level_threads_as_sessions`).
    pub dm_threads: bool,
    /// Who may answer anyone's approval request besides the person whose
    /// message started the turn (`<PLATFORM>_ADMIN_USERS`, else
    /// `GATEWAY_ADMIN_USERS`, else the platform's `admin_users`; ours).
    pub admins: Vec<String>,
}

/// How to start a platform plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginLaunch {
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// Where it runs (the plugin's directory).
    pub dir: std::path::PathBuf,
}

/// Everything the messaging side of the gateway needs.
#[derive(Debug, Clone, PartialEq)]
pub struct MessagingConfig {
    /// Platforms with a token.
    pub platforms: Vec<PlatformSettings>,
    /// Streaming.
    pub streaming: Streaming,
    /// `display.busy_input_mode`.
    pub busy: BusyMode,
    /// `group_sessions_per_user` (default on).
    pub group_sessions_per_user: bool,
    /// `thread_sessions_per_user` (default off).
    pub thread_sessions_per_user: bool,
    /// The user's home directory, for `MEDIA:~/…` paths (`HOME`).
    pub user_home: Option<std::path::PathBuf>,
}

/// The platforms this build speaks.
pub const PLATFORMS: [&str; 6] = [
    "telegram",
    "discord",
    "slack",
    "matrix",
    "email",
    "homeassistant",
];

/// A config value as trimmed text (lists joined with commas).
pub(crate) fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Array(items) => Some(
            items
                .iter()
                .filter_map(|i| text(Some(i)))
                .collect::<Vec<_>>()
                .join(","),
        ),
        _ => None,
    }
}

/// `true`/`yes`/`on`/`1` and their opposites.
pub(crate) fn boolean(v: Option<&str>) -> Option<bool> {
    match v?.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// A platform block's key: `platforms.<p>.<key>`, `platforms.<p>.extra.<key>`,
/// `<p>.<key>`, `gateway.platforms.<p>.<key>`, in that order.
pub(crate) fn platform_key(tree: &Value, name: &str, key: &str) -> Option<String> {
    [
        format!("/platforms/{name}/{key}"),
        format!("/platforms/{name}/extra/{key}"),
        format!("/{name}/{key}"),
        format!("/gateway/platforms/{name}/{key}"),
        format!("/gateway/platforms/{name}/extra/{key}"),
    ]
    .iter()
    .find_map(|p| text(tree.pointer(p)))
}

fn tool_progress(tree: &Value, name: &str, env: &dyn Fn(&str) -> Option<String>) -> ToolProgress {
    let parse = |v: String| match v.to_ascii_lowercase().as_str() {
        "off" | "false" => Some(ToolProgress::Off),
        "new" => Some(ToolProgress::New),
        "all" | "true" => Some(ToolProgress::All),
        "verbose" => Some(ToolProgress::Verbose),
        _ => None,
    };
    let configured = text(tree.pointer(&format!("/display/platforms/{name}/tool_progress")))
        .or_else(|| text(tree.pointer(&format!("/display/tool_progress_overrides/{name}"))))
        .and_then(parse);
    configured
        .or_else(|| text(tree.pointer("/display/tool_progress")).and_then(parse))
        .or_else(|| env("HERMES_TOOL_PROGRESS_MODE").and_then(parse))
        .unwrap_or(match name {
            "discord" => ToolProgress::All,
            _ => ToolProgress::Off,
        })
}

/// The platform's token (`<NAME>_BOT_TOKEN`, or its own variable) and,
/// for Matrix, a user id and password to log in with; `None` when the
/// platform is not set up (or `enabled: false`). A plugin needs no token.
fn credentials(
    name: &str,
    tree: &Value,
    env: &dyn Fn(&str) -> Option<String>,
    plugin: bool,
) -> Option<(String, Option<(String, String)>)> {
    let env_text = |k: &str| {
        env(k)
            .filter(|v| !v.trim().is_empty())
            .map(|v| v.trim().to_owned())
    };
    let token_var = match name {
        "matrix" => "MATRIX_ACCESS_TOKEN".to_owned(),
        "email" => "EMAIL_PASSWORD".to_owned(),
        "homeassistant" => "HASS_TOKEN".to_owned(),
        _ => format!("{}_BOT_TOKEN", name.to_ascii_uppercase()),
    };
    let login = (name == "matrix")
        .then(|| {
            let user =
                env_text("MATRIX_USER_ID").or_else(|| platform_key(tree, name, "user_id"))?;
            let password =
                env_text("MATRIX_PASSWORD").or_else(|| platform_key(tree, name, "password"))?;
            Some((user, password))
        })
        .flatten();
    let token = env_text(&token_var)
        .or_else(|| platform_key(tree, name, "token"))
        .or_else(|| (login.is_some() || plugin).then(String::new))?;
    let explicitly_off = boolean(platform_key(tree, name, "enabled").as_deref()) == Some(false);
    if explicitly_off || (token.len() < 4 && login.is_none() && !plugin) {
        return None;
    }
    Some((token, login))
}

/// The platform's API address: `HERMES_<NAME>_BASE_URL`, Matrix's
/// `MATRIX_HOMESERVER`, Home Assistant's `HASS_URL`, else config.yaml.
fn base_url(name: &str, tree: &Value, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let env_text = |k: &str| {
        env(k)
            .filter(|v| !v.trim().is_empty())
            .map(|v| v.trim().to_owned())
    };
    let own_var = match name {
        "matrix" => Some("MATRIX_HOMESERVER"),
        "homeassistant" => Some("HASS_URL"),
        _ => None,
    };
    env_text(&format!("HERMES_{}_BASE_URL", name.to_ascii_uppercase()))
        .or_else(|| own_var.and_then(env_text))
        .or_else(|| platform_key(tree, name, "base_url"))
        .or_else(|| platform_key(tree, name, "homeserver"))
        .or_else(|| platform_key(tree, name, "url"))
}

/// The home channel and its thread (`<NAME>_HOME_CHANNEL`, Matrix's
/// `MATRIX_HOME_ROOM`, email's `EMAIL_HOME_ADDRESS`; Home Assistant's one
/// events chat), else `platforms.<name>.home_channel`.
fn home_channel(
    name: &str,
    tree: &Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> (Option<String>, Option<String>) {
    let env_text = |k: &str| {
        env(k)
            .filter(|v| !v.trim().is_empty())
            .map(|v| v.trim().to_owned())
    };
    let var = match name {
        "matrix" => "MATRIX_HOME_ROOM".to_owned(),
        "email" => "EMAIL_HOME_ADDRESS".to_owned(),
        _ => format!("{}_HOME_CHANNEL", name.to_ascii_uppercase()),
    };
    let chat = (name == "homeassistant")
        .then(|| super::homeassistant::CHAT_ID.to_owned())
        .or_else(|| env_text(&var))
        .or_else(|| text(tree.pointer(&format!("/platforms/{name}/home_channel/chat_id"))));
    let thread = env_text(&format!("{var}_THREAD_ID"))
        .or_else(|| text(tree.pointer(&format!("/platforms/{name}/home_channel/thread_id"))));
    (chat, thread)
}

fn platform(
    name: &'static str,
    tree: &Value,
    env: &dyn Fn(&str) -> Option<String>,
    launch: Option<PluginLaunch>,
) -> Option<PlatformSettings> {
    let upper = name.to_ascii_uppercase();
    let env_text = |k: &str| {
        env(k)
            .filter(|v| !v.trim().is_empty())
            .map(|v| v.trim().to_owned())
    };
    let email = (name == "email")
        .then(|| super::email::EmailSettings::read(tree, env))
        .flatten();
    if name == "email" && email.is_none() {
        return None;
    }
    let (token, login) = credentials(name, tree, env, launch.is_some())?;
    let home = home_channel(name, tree, env);
    let require_mention = env_text(&format!("{upper}_REQUIRE_MENTION"))
        .or_else(|| platform_key(tree, name, "require_mention"))
        .or_else(|| text(tree.pointer("/require_mention")).filter(|_| name == "telegram"))
        .and_then(|v| boolean(Some(&v)))
        .unwrap_or(name != "telegram");
    let access = AccessRules::read(
        name,
        env,
        list(platform_key(tree, name, "allow_from")),
        platform_key(tree, name, "unauthorized_dm_behavior"),
        text(tree.pointer("/unauthorized_dm_behavior"))
            .or_else(|| text(tree.pointer("/gateway/unauthorized_dm_behavior"))),
    );
    Some(PlatformSettings {
        name,
        token,
        app_token: (name == "slack")
            .then(|| env_text("SLACK_APP_TOKEN").or_else(|| platform_key(tree, name, "app_token")))
            .flatten(),
        base_url: base_url(name, tree, env),
        login,
        email,
        plugin: launch,
        extra: [
            format!("/platforms/{name}/extra"),
            format!("/gateway/platforms/{name}/extra"),
        ]
        .iter()
        .find_map(|p| tree.pointer(p).cloned())
        .unwrap_or(Value::Null),
        gateway_url: platform_key(tree, name, "gateway_url"),
        require_mention,
        tool_progress: tool_progress(tree, name, env),
        access,
        home_channel: home.0,
        home_thread: home.1,
        typing: boolean(platform_key(tree, name, "typing_indicator").as_deref()).unwrap_or(true),
        reactions: boolean(env_text(&format!("{upper}_REACTIONS")).as_deref())
            .or_else(|| boolean(platform_key(tree, name, "reactions").as_deref()))
            .unwrap_or(name != "telegram"),
        reply_in_thread: boolean(
            (name == "matrix")
                .then(|| {
                    env_text("MATRIX_AUTO_THREAD")
                        .or_else(|| platform_key(tree, name, "auto_thread"))
                })
                .flatten()
                .or_else(|| platform_key(tree, name, "reply_in_thread"))
                .as_deref(),
        )
        .unwrap_or(true),
        dm_threads: boolean(
            platform_key(tree, name, "dm_top_level_threads_as_sessions").as_deref(),
        )
        .unwrap_or(true),
        admins: super::access::list(
            env_text(&format!("{upper}_ADMIN_USERS"))
                .or_else(|| env_text("GATEWAY_ADMIN_USERS"))
                .or_else(|| platform_key(tree, name, "admin_users")),
        ),
    })
}

impl MessagingConfig {
    /// Adds the platforms plugins serve (`(name, launch)`), with the same
    /// per-platform settings as built-in ones (`<NAME>_ALLOWED_USERS`,
    /// `platforms.<name>` …); a name a built-in platform has is skipped.
    #[must_use]
    pub fn with_plugins(
        mut self,
        plugins: Vec<(String, PluginLaunch)>,
        tree: &Value,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        for (name, launch) in plugins {
            if PLATFORMS.contains(&name.as_str()) || self.platforms.iter().any(|p| p.name == name) {
                continue;
            }
            // Platform names are 'static; a handful per process, for its life.
            let name: &'static str = Box::leak(name.into_boxed_str());
            if let Some(settings) = platform(name, tree, env, Some(launch)) {
                self.platforms.push(settings);
            }
        }
        self
    }

    /// Reads the settings; `platforms` is empty when no platform has a token.
    pub fn read(tree: &Value, env: &dyn Fn(&str) -> Option<String>) -> Self {
        let platforms = PLATFORMS
            .iter()
            .filter_map(|name| platform(name, tree, env, None))
            .collect();
        let stream_key = |k: &str| {
            text(tree.pointer(&format!("/streaming/{k}")))
                .or_else(|| text(tree.pointer(&format!("/gateway/streaming/{k}"))))
        };
        let mode = stream_key("mode");
        let enabled = boolean(stream_key("enabled").as_deref())
            .or_else(|| mode.as_deref().map(|m| m != "off"))
            .unwrap_or(false);
        let secs = |k: &str, default: f64| {
            stream_key(k)
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v >= 0.0)
                .unwrap_or(default)
        };
        let busy = env("HERMES_GATEWAY_BUSY_INPUT_MODE")
            .or_else(|| text(tree.pointer("/display/busy_input_mode")))
            .or_else(|| text(tree.pointer("/display/busy_text_mode")));
        let switch = |k: &str, default: bool| {
            boolean(text(tree.pointer(&format!("/{k}"))).as_deref())
                .or_else(|| boolean(text(tree.pointer(&format!("/gateway/{k}"))).as_deref()))
                .unwrap_or(default)
        };
        Self {
            platforms,
            streaming: Streaming {
                enabled,
                edit_interval: Duration::from_secs_f64(secs("edit_interval", 0.8).max(0.05)),
                buffer_threshold: secs("buffer_threshold", 24.0) as usize,
                cursor: tree
                    .pointer("/streaming/cursor")
                    .and_then(Value::as_str)
                    .unwrap_or(" ▉")
                    .to_owned(),
            },
            busy: match busy.as_deref().map(str::to_ascii_lowercase).as_deref() {
                Some("queue") => BusyMode::Queue,
                Some("steer") => BusyMode::Steer,
                _ => BusyMode::Interrupt,
            },
            group_sessions_per_user: switch("group_sessions_per_user", true),
            thread_sessions_per_user: switch("thread_sessions_per_user", false),
            user_home: env("HOME")
                .filter(|h| !h.trim().is_empty())
                .map(std::path::PathBuf::from),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_token_in_the_environment_enables_a_platform() {
        let tree = json!({"platforms": {"telegram": {"extra": {"base_url": "http://127.0.0.1:9/bot"}}},
                          "streaming": {"enabled": true, "edit_interval": 0.2}});
        let env = |k: &str| (k == "TELEGRAM_BOT_TOKEN").then(|| "123:ABC".to_owned());
        let cfg = MessagingConfig::read(&tree, &env);
        assert_eq!(cfg.platforms.len(), 1);
        let tg = &cfg.platforms[0];
        assert_eq!(tg.token, "123:ABC");
        assert_eq!(tg.base_url.as_deref(), Some("http://127.0.0.1:9/bot"));
        assert!(!tg.require_mention);
        assert_eq!(tg.tool_progress, ToolProgress::Off);
        assert!(cfg.streaming.enabled);
        assert_eq!(cfg.streaming.edit_interval, Duration::from_millis(200));
        assert_eq!(cfg.busy, BusyMode::Interrupt);
    }

    #[test]
    fn explicit_enabled_false_wins_and_discord_defaults_differ() {
        let tree = json!({"platforms": {"telegram": {"enabled": false}}, "display": {"busy_input_mode": "queue"}});
        let env = |k: &str| match k {
            "TELEGRAM_BOT_TOKEN" => Some("123:ABC".to_owned()),
            "DISCORD_BOT_TOKEN" => Some("discord-token".to_owned()),
            _ => None,
        };
        let cfg = MessagingConfig::read(&tree, &env);
        assert_eq!(cfg.platforms.len(), 1);
        assert_eq!(cfg.platforms[0].name, "discord");
        assert!(cfg.platforms[0].require_mention);
        assert_eq!(cfg.platforms[0].tool_progress, ToolProgress::All);
        assert_eq!(cfg.busy, BusyMode::Queue);
    }
}
