//! Messaging platforms in the gateway: each platform's messages come in
//! through its [`Adapter`], are written to the durable [`inbox::Inbox`],
//! checked against the access rules (pairing for strangers), and handed to
//! one conversation per chat on the session runtime.

pub mod access;
mod approvals;
mod chat;
mod commands;
pub mod config;
pub mod discord;
pub mod email;
pub mod format;
pub mod homeassistant;
pub mod inbox;
mod lease;
pub mod matrix;
pub mod media;
pub mod pairing;
pub mod platform;
pub mod plugin;
pub mod slack;
pub mod split;
mod stream;
pub mod telegram;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hermes_session::SessionManager;
use hermes_session::cron::deliver::{CronDelivery, Target};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use self::access::StrangerDm;
use self::chat::{ChatInput, ChatWorker};
use self::config::{MessagingConfig, PlatformSettings};
use self::inbox::Inbox;
use self::lease::PollLease;
use self::pairing::PairingStore;
pub use self::platform::{Adapter, ChatKind, ChatRef, Incoming, Outgoing, PlatformError};

/// How long shutdown waits for turns in flight.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

pub use crate::log::{LogFn, LogLevel};

/// What every chat of every platform shares.
pub struct Hub {
    manager: SessionManager,
    inbox: Inbox,
    pairing: PairingStore,
    config: MessagingConfig,
    cwd: PathBuf,
    home: PathBuf,
    log: LogFn,
    connected: Mutex<Vec<&'static str>>,
    /// Home channels set with `/sethome` while running.
    homes: Homes,
    /// Button tokens → the session key whose approval they answer.
    presses: Mutex<HashMap<u64, String>>,
    next_press: AtomicU64,
    /// Set when replicas share the database: who polls is leased.
    replicas: Option<Replicas>,
    /// `gateway_state.json`: each platform's state for the dashboard.
    status: Option<Arc<crate::status::RuntimeStatus>>,
    /// Chat turns running now.
    turns: Arc<AtomicUsize>,
}

/// What a replica on a shared database polls under.
struct Replicas {
    coordinator: Arc<dyn hermes_state::coordination::Coordinator>,
    holder: String,
    ttl: Duration,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("home", &self.home)
            .finish_non_exhaustive()
    }
}

impl Hub {
    /// A line of normal operation.
    fn log(&self, line: &str) {
        (self.log)(LogLevel::Info, crate::log::RUN_LOGGER, line);
    }

    /// A line about something that failed and was worked around.
    fn warn(&self, line: &str) {
        (self.log)(LogLevel::Warning, crate::log::RUN_LOGGER, line);
    }

    /// Notes platform `name`'s state in `gateway_state.json`.
    fn platform_state(&self, name: &str, state: &str, error: Option<&str>) {
        if let Some(status) = &self.status {
            status.platform(name, state, error);
        }
    }

    fn connected_platforms(&self) -> Vec<&'static str> {
        self.connected.lock().map(|c| c.clone()).unwrap_or_default()
    }

    fn set_home(&self, platform: &str, chat: &ChatRef) {
        if let Ok(mut homes) = self.homes.lock() {
            homes.insert(platform.to_owned(), chat.clone());
        }
    }

    /// A token for an approval button of `key`'s chat.
    fn register_press(&self, key: &str) -> u64 {
        let token = self.next_press.fetch_add(1, Ordering::Relaxed) + 1;
        if let Ok(mut presses) = self.presses.lock() {
            presses.insert(token, key.to_owned());
        }
        token
    }

    fn press_route(&self, data: &str) -> Option<String> {
        let token: u64 = data.strip_prefix("ea:")?.split(':').nth(1)?.parse().ok()?;
        self.presses.lock().ok()?.get(&token).cloned()
    }
}

/// The reference's session key for a message.
pub fn session_key(platform: &str, message: &Incoming, config: &MessagingConfig) -> String {
    let chat = &message.chat;
    let ns = "agent:main";
    if chat.kind == ChatKind::Dm {
        let id = if chat.id.is_empty() {
            &message.sender.id
        } else {
            &chat.id
        };
        return match &chat.thread_id {
            Some(thread) => format!("{ns}:{platform}:dm:{id}:{thread}"),
            None => format!("{ns}:{platform}:dm:{id}"),
        };
    }
    let mut parts = vec![
        ns.to_owned(),
        platform.to_owned(),
        chat.kind.as_str().to_owned(),
    ];
    if !chat.id.is_empty() {
        parts.push(chat.id.clone());
    }
    if let Some(thread) = &chat.thread_id {
        parts.push(thread.clone());
    }
    // Threads are shared by everyone in them unless configured per user.
    let isolate = config.group_sessions_per_user
        && (chat.thread_id.is_none() || config.thread_sessions_per_user);
    if isolate && !message.sender.id.is_empty() {
        parts.push(message.sender.id.clone());
    }
    parts.join(":")
}

/// The adapter for a configured platform.
fn adapter_for(
    settings: &PlatformSettings,
    http: reqwest::Client,
    home: &std::path::Path,
) -> Result<Arc<dyn Adapter>, String> {
    if let Some(launch) = &settings.plugin {
        return Ok(Arc::new(plugin::PluginPlatform::new(
            settings.name,
            launch.argv.clone(),
            launch.dir.clone(),
            settings.extra.clone(),
        )));
    }
    Ok(match settings.name {
        "telegram" => Arc::new(telegram::Telegram::new(settings, http, home)),
        "discord" => Arc::new(discord::Discord::new(settings, http)),
        "slack" => Arc::new(slack::Slack::new(settings, http, home)?),
        "matrix" => Arc::new(matrix::Matrix::new(settings, http, home)),
        "homeassistant" => Arc::new(homeassistant::HomeAssistantPlatform(Arc::new(
            homeassistant::HomeAssistant::new(settings, http),
        ))),
        "email" => match &settings.email {
            Some(account) => Arc::new(email::Email::new(account.clone(), home)),
            None => return Err(
                "email needs EMAIL_ADDRESS, EMAIL_PASSWORD, EMAIL_IMAP_HOST and EMAIL_SMTP_HOST"
                    .into(),
            ),
        },
        other => return Err(format!("unknown platform {other}")),
    })
}

/// The messaging side of a gateway, ready to run.
pub struct Messaging {
    hub: Arc<Hub>,
    platforms: Vec<(Arc<dyn Adapter>, Arc<PlatformSettings>)>,
}

impl std::fmt::Debug for Messaging {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Messaging").finish_non_exhaustive()
    }
}

impl Messaging {
    /// The count of chat turns running now.
    pub fn turns_in_flight(&self) -> Arc<AtomicUsize> {
        self.hub.turns.clone()
    }

    /// Keeps each platform's state in `gateway_state.json` through `status`.
    #[must_use]
    pub fn with_status(mut self, status: Arc<crate::status::RuntimeStatus>) -> Self {
        if let Some(hub) = Arc::get_mut(&mut self.hub) {
            hub.status = Some(status);
        }
        self
    }

    /// Sets up every configured platform; `None` when none is.
    pub fn new(
        manager: SessionManager,
        config: MessagingConfig,
        cwd: PathBuf,
        log: LogFn,
    ) -> Result<Option<Self>, String> {
        if config.platforms.is_empty() {
            return Ok(None);
        }
        let home = manager.services().setup().home.root().to_path_buf();
        let shared = manager.services().shared();
        let inbox = match &shared {
            Some(shared) => Inbox::over(shared.inbox.clone()),
            None => Inbox::open(&home.join("gateway/inbox.db")).map_err(|e| e.to_string())?,
        };
        let replicas = shared.map(|shared| Replicas {
            coordinator: shared.coordinator,
            holder: manager.services().replica().to_owned(),
            ttl: hermes_session::stores::lease_ttl(&manager.services().setup().config),
        });
        let http = hermes_llm::SharedHttp::new(Duration::from_secs(10))
            .map_err(|e| e.to_string())?
            .client();
        let mut platforms = Vec::new();
        for settings in &config.platforms {
            let adapter = adapter_for(settings, http.clone(), &home)?;
            platforms.push((adapter, Arc::new(settings.clone())));
        }
        // Pairing lives with the sessions: the home's files, or the database
        // replicas share (so a code issued by one is approved on any).
        let pairing = PairingStore::with_documents(manager.services().documents()?);
        let hub = Hub {
            manager,
            inbox,
            pairing,
            config,
            cwd,
            home,
            log,
            connected: Mutex::new(Vec::new()),
            homes: Homes::default(),
            presses: Mutex::new(HashMap::new()),
            next_press: AtomicU64::new(0),
            replicas,
            status: None,
            turns: Arc::new(AtomicUsize::new(0)),
        };
        Ok(Some(Self {
            hub: Arc::new(hub),
            platforms,
        }))
    }

    /// The platforms it serves.
    pub fn platform_names(&self) -> Vec<&'static str> {
        self.platforms.iter().map(|(a, _)| a.name()).collect()
    }

    /// What sends cron answers into this gateway's chats.
    pub fn sender(&self) -> Deliverer {
        Deliverer {
            homes: self.hub.homes.clone(),
            platforms: self.platforms.clone(),
            user_home: self.hub.config.user_home.clone(),
            home: self.hub.home.clone(),
        }
    }

    /// Serves every platform until `stop`, then lets running turns finish
    /// (up to [`DRAIN_TIMEOUT`]).
    pub async fn run(self, stop: CancellationToken) {
        let mut tasks = Vec::new();
        for (adapter, settings) in self.platforms {
            let hub = self.hub.clone();
            let stop = stop.clone();
            tasks.push(tokio::spawn(platform_loop(hub, adapter, settings, stop)));
        }
        for task in tasks {
            let _ = task.await;
        }
    }
}

/// Home channels set with `/sethome` while the gateway runs (they are also
/// saved to `.env` for the next start).
type Homes = Arc<Mutex<HashMap<String, ChatRef>>>;

/// Sends messages into chats from outside a conversation (cron answers).
#[derive(Clone)]
pub struct Deliverer {
    homes: Homes,
    platforms: Vec<(Arc<dyn Adapter>, Arc<PlatformSettings>)>,
    user_home: Option<PathBuf>,
    home: PathBuf,
}

impl std::fmt::Debug for Deliverer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deliverer").finish_non_exhaustive()
    }
}

impl Deliverer {
    /// Sends without a running gateway (`hermes cron run`): the configured
    /// platforms' send calls need no connection. `None` when none is configured.
    pub fn standalone(config: &MessagingConfig, home: &Path) -> Result<Option<Self>, String> {
        if config.platforms.is_empty() {
            return Ok(None);
        }
        let http = hermes_llm::SharedHttp::new(Duration::from_secs(10))
            .map_err(|e| e.to_string())?
            .client();
        let mut platforms = Vec::new();
        for settings in &config.platforms {
            platforms.push((
                adapter_for(settings, http.clone(), home)?,
                Arc::new(settings.clone()),
            ));
        }
        Ok(Some(Self {
            homes: Homes::default(),
            platforms,
            user_home: config.user_home.clone(),
            home: home.to_path_buf(),
        }))
    }

    fn platform(&self, name: &str) -> Option<&(Arc<dyn Adapter>, Arc<PlatformSettings>)> {
        self.platforms.iter().find(|(a, _)| a.name() == name)
    }

    /// Sends `text` (markdown; `MEDIA:` tags become files) to `target`.
    pub async fn deliver(&self, target: &Target, text: &str) -> Result<(), String> {
        let Some((adapter, _)) = self.platform(&target.platform) else {
            return Err(format!(
                "{} is not configured in this gateway (set {}_BOT_TOKEN)",
                target.platform,
                target.platform.to_ascii_uppercase()
            ));
        };
        let chat = ChatRef {
            id: target.chat_id.clone(),
            kind: ChatKind::Dm,
            thread_id: target.thread_id.clone(),
            name: None,
        };
        let (text, files) = media::extract(text, self.user_home.as_deref(), &self.home);
        stream::send_long(adapter.as_ref(), &chat, &text)
            .await
            .map_err(|e| e.to_string())?;
        for file in &files {
            adapter
                .send_file(&chat, file, "")
                .await
                .map_err(|e| format!("{}: {e}", file.name()))?;
        }
        Ok(())
    }
}

impl CronDelivery for Deliverer {
    fn platforms(&self) -> Vec<String> {
        self.platforms
            .iter()
            .map(|(a, _)| a.name().to_owned())
            .collect()
    }

    fn home(&self, platform: &str) -> Option<Target> {
        let remembered = self
            .homes
            .lock()
            .ok()
            .and_then(|h| h.get(platform).cloned());
        if let Some(chat) = remembered {
            return Some(Target {
                platform: platform.to_owned(),
                chat_id: chat.id,
                thread_id: chat.thread_id,
            });
        }
        let (_, settings) = self.platform(platform)?;
        Some(Target {
            platform: platform.to_owned(),
            chat_id: settings.home_channel.clone()?,
            thread_id: settings.home_thread.clone(),
        })
    }

    fn send<'a>(
        &'a self,
        target: &'a Target,
        text: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<(), String>> {
        Box::pin(self.deliver(target, text))
    }
}

/// The chats of one platform and their tasks.
struct Router {
    hub: Arc<Hub>,
    adapter: Arc<dyn Adapter>,
    settings: Arc<PlatformSettings>,
    chats: HashMap<String, (mpsc::UnboundedSender<ChatInput>, JoinHandle<()>)>,
    seen: Seen,
}

impl Router {
    fn dispatch(&mut self, message: Incoming, replayed: bool) {
        let name = self.adapter.name();
        self.seen.insert(&message.key);
        if !self
            .settings
            .access
            .allows(name, &message, &self.hub.pairing)
        {
            if message.chat.kind == ChatKind::Dm
                && message.button_press.is_none()
                && self.settings.access.stranger_dm() == StrangerDm::Pair
            {
                self.offer_pairing(&message);
            } else {
                self.hub.warn(&format!(
                    "Unauthorized user: {} ({}) on {name}",
                    message.sender.id, message.sender.name
                ));
            }
            let _ = self.hub.inbox.done(name, &message.key);
            return;
        }
        if message.chat.kind != ChatKind::Dm
            && self.settings.require_mention
            && !message.addressed
            && message.button_press.is_none()
        {
            let _ = self.hub.inbox.done(name, &message.key);
            return;
        }
        let key = match &message.button_press {
            Some(_) => self
                .hub
                .press_route(&message.text)
                .unwrap_or_else(|| session_key(name, &message, &self.hub.config)),
            None => session_key(name, &message, &self.hub.config),
        };
        let input = ChatInput { message, replayed };
        let input = match self.chats.get(&key) {
            Some((tx, _)) => match tx.send(input) {
                Ok(()) => return,
                Err(returned) => returned.0,
            },
            None => input,
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let worker = ChatWorker {
            hub: self.hub.clone(),
            adapter: self.adapter.clone(),
            settings: self.settings.clone(),
            key: key.clone(),
            chat: input.message.chat.clone(),
            conv: None,
            turn: None,
            queue: Default::default(),
            approvals: Vec::new(),
            clarify: None,
            last_busy_ack: None,
            typing_ok: true,
        };
        let _ = tx.send(input);
        let task = tokio::spawn(worker.run(rx));
        self.chats.insert(key, (tx, task));
    }

    fn offer_pairing(&self, message: &Incoming) {
        let name = self.adapter.name();
        let pairing = &self.hub.pairing;
        if pairing.is_rate_limited(name, &message.sender.id) {
            return;
        }
        let reply = match pairing.issue_code(name, &message.sender.id, &message.sender.name) {
            Ok(Some(code)) => pairing::code_message(name, &code),
            Ok(None) => {
                let _ = pairing.note_request(name, &message.sender.id);
                pairing::TOO_MANY.to_owned()
            }
            Err(e) => {
                self.hub
                    .warn(&format!("pairing: cannot write {}: {e}", pairing.place()));
                return;
            }
        };
        self.hub.log(&format!(
            "{name}: pairing code sent to {} ({})",
            message.sender.id, message.sender.name
        ));
        let adapter = self.adapter.clone();
        let chat = message.chat.clone();
        tokio::spawn(async move {
            let _ = adapter.send(&chat, &Outgoing::markdown(reply)).await;
        });
    }

    /// Stops taking messages and waits for the chats' running turns.
    async fn drain(self) {
        let tasks: Vec<JoinHandle<()>> = self.chats.into_values().map(|(_, task)| task).collect();
        let all = futures_util::future::join_all(tasks);
        let _ = tokio::time::timeout(DRAIN_TIMEOUT, all).await;
    }
}

/// Backoff after the n-th failure in a row: 1, 2, 4 … 60 s.
fn backoff(failures: u32) -> Duration {
    Duration::from_secs((1u64 << failures.min(6)).min(60))
}

async fn platform_loop(
    hub: Arc<Hub>,
    adapter: Arc<dyn Adapter>,
    settings: Arc<PlatformSettings>,
    stop: CancellationToken,
) {
    let name = adapter.name();
    hub.platform_state(name, "connecting", None);
    let Some(identity) = connect(&hub, adapter.as_ref(), &stop).await else {
        hub.platform_state(name, "stopped", None);
        return;
    };
    hub.log(&format!("{name}: connected as @{}", identity.username));
    hub.platform_state(name, "connected", None);
    if let Ok(mut connected) = hub.connected.lock() {
        connected.push(name);
    }
    let mut router = Router {
        hub: hub.clone(),
        adapter: adapter.clone(),
        settings,
        chats: HashMap::new(),
        seen: Seen::default(),
    };
    match hub.replicas.as_ref().filter(|_| adapter.single_consumer()) {
        None => poll(&hub, adapter.as_ref(), &mut router, &stop, None).await,
        Some(replicas) => {
            let lease = PollLease::new(
                replicas.coordinator.clone(),
                name,
                &adapter.account(),
                &replicas.holder,
                replicas.ttl,
            );
            adapter.limit_poll(lease.poll_window());
            serve_under_lease(&hub, adapter.as_ref(), &mut router, &stop, &lease).await;
            lease.release();
        }
    }
    router.drain().await;
    hub.platform_state(name, "stopped", None);
}

/// Connects, retrying with backoff; `None` when stopped first.
async fn connect(
    hub: &Hub,
    adapter: &dyn Adapter,
    stop: &CancellationToken,
) -> Option<platform::BotIdentity> {
    let name = adapter.name();
    let mut failures = 0;
    loop {
        let attempt = tokio::select! {
            _ = stop.cancelled() => return None,
            r = adapter.connect() => r,
        };
        match attempt {
            Ok(identity) => return Some(identity),
            Err(e) => {
                failures += 1;
                hub.warn(&format!(
                    "{name}: cannot connect ({e}); retrying in {}s",
                    backoff(failures).as_secs()
                ));
                hub.platform_state(name, "retrying", Some(&e.to_string()));
                tokio::select! {
                    _ = stop.cancelled() => return None,
                    _ = tokio::time::sleep(backoff(failures)) => {}
                }
            }
        }
    }
}

/// Replicas: stands by until this one holds the account's lease, polls while
/// it does, and stands by again when it loses it.
async fn serve_under_lease(
    hub: &Hub,
    adapter: &dyn Adapter,
    router: &mut Router,
    stop: &CancellationToken,
    lease: &PollLease,
) {
    let name = adapter.name();
    let mut standing_by = false;
    while !stop.is_cancelled() {
        match lease.try_take() {
            Ok(Some(held)) => {
                standing_by = false;
                hub.log(&format!(
                    "{name}: this replica polls now ({}, token {})",
                    lease.name(),
                    held.fence.token
                ));
                hub.platform_state(name, "connected", None);
                poll(hub, adapter, router, stop, Some((lease, held))).await;
                adapter.stand_by();
                if !stop.is_cancelled() {
                    hub.warn(&format!("{name}: lease lost; standing by"));
                }
                continue;
            }
            Ok(None) if !standing_by => {
                standing_by = true;
                hub.log(&format!("{name}: standing by (another replica polls)"));
                hub.platform_state(name, "standing_by", None);
            }
            Ok(None) => {}
            Err(e) => hub.warn(&format!("{name}: cannot reach the lease ({e})")),
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(lease.standby_interval()) => {}
        }
    }
}

/// Handles what an earlier poller left unanswered, then receives until
/// stopped (or, under a lease, until it is lost).
async fn poll(
    hub: &Hub,
    adapter: &dyn Adapter,
    router: &mut Router,
    stop: &CancellationToken,
    mut lease: Option<(&PollLease, lease::Held)>,
) {
    let name = adapter.name();
    // What was taken before a restart (or by a replica that died) but never
    // answered goes first. Replicas that all receive (none does now) could not tell
    // another live replica's unanswered messages from a dead one's: they
    // leave them.
    let replay = lease.is_some() || hub.replicas.is_none();
    match hub
        .inbox
        .pending(name)
        .map(|p| if replay { p } else { Vec::new() })
    {
        Ok(pending) => {
            for message in pending {
                if !router.seen.contains(&message.key) {
                    router.dispatch(message, true);
                }
            }
        }
        Err(e) => hub.warn(&format!("{name}: {e}")),
    }
    let mut cursor = hub.inbox.cursor(name).ok().flatten();
    let mut failures = 0;
    loop {
        let budget = match &mut lease {
            Some((l, held)) => {
                if !l.keep(held) {
                    return;
                }
                Some(l.budget(held))
            }
            None => None,
        };
        let receive = adapter.receive(cursor.as_deref());
        let received = tokio::select! {
            _ = stop.cancelled() => return,
            r = within(budget, receive) => r,
        };
        // The budget ran out first: renew before waiting again.
        let Some(received) = received else { continue };
        match received {
            Ok(batch) => {
                if let Some(status) = &hub.status {
                    status.polled(name);
                }
                if failures > 0 {
                    hub.platform_state(name, "connected", None);
                }
                failures = 0;
                if !batch.messages.is_empty()
                    && let Some(status) = &hub.status
                {
                    status.message_in(name);
                }
                let fence = lease.as_ref().map(|(_, held)| &held.fence);
                match hub
                    .inbox
                    .accept(name, batch.messages, batch.cursor.as_deref(), fence)
                {
                    Ok(Some(fresh)) => {
                        if batch.cursor.is_some() {
                            cursor = batch.cursor;
                        }
                        for message in fresh {
                            router.dispatch(message, false);
                        }
                    }
                    // Another replica holds the lease now: its position stands.
                    Ok(None) => return,
                    Err(e) => hub.warn(&format!("{name}: {e}")),
                }
            }
            Err(e) => {
                failures += 1;
                let wait = backoff(failures);
                hub.warn(&format!(
                    "{name}: receiving failed ({e}); retrying in {}s",
                    wait.as_secs()
                ));
                hub.platform_state(name, "retrying", Some(&e.to_string()));
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(wait) => {}
                }
            }
        }
    }
}

/// `future`, given at most `budget` (`None` when it ran out).
async fn within<T>(
    budget: Option<Duration>,
    future: impl std::future::Future<Output = T>,
) -> Option<T> {
    match budget {
        Some(b) => tokio::time::timeout(b, future).await.ok(),
        None => Some(future.await),
    }
}

/// Keys this process dispatched lately (a replica that takes its lease back
/// must not start a turn it is still running).
#[derive(Default)]
struct Seen {
    keys: std::collections::HashSet<String>,
    order: std::collections::VecDeque<String>,
}

impl Seen {
    const KEEP: usize = 10_000;

    fn contains(&self, key: &str) -> bool {
        self.keys.contains(key)
    }

    fn insert(&mut self, key: &str) {
        if self.keys.insert(key.to_owned()) {
            self.order.push_back(key.to_owned());
            if self.order.len() > Self::KEEP
                && let Some(old) = self.order.pop_front()
            {
                self.keys.remove(&old);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "mod_tests.rs"]
mod tests;
