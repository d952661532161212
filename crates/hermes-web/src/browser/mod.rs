//! The browser tools' shared state: one Chromium per session, started on
//! first use, closed after `browser.inactivity_timeout` of disuse or when
//! the session ends, and the page actions the tools perform on it.

pub mod cdp;
pub mod keys;
pub mod proxy;
pub mod snapshot;
pub mod tools;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use hermes_tools::url_safety::{
    Resolver, SystemResolver, UrlBlock, UrlPolicy, check_url, parse_url,
};
use serde_json::{Value, json};

use self::cdp::Browser;
use self::proxy::CheckingProxy;
use self::snapshot::Target;

/// Characters of a snapshot sent back; the rest is kept on disk.
pub const SNAPSHOT_LIMIT: usize = 15_000;

/// How the browser is run (`browser:` in config.yaml).
#[derive(Debug, Clone)]
pub struct BrowserSettings {
    /// The Chromium binary.
    pub executable: PathBuf,
    /// Show the window (`browser.headed`).
    pub headed: bool,
    /// Close after this long unused (`browser.inactivity_timeout`, 120 s).
    pub inactivity: Duration,
    /// Where screenshots and long snapshots go (`HERMES_HOME/cache`).
    pub cache_dir: PathBuf,
    /// What the browser may connect to (every connection goes through the
    /// checking proxy; metadata addresses are refused whatever this says).
    pub policy: UrlPolicy,
}

/// A running browser and the proxy it is behind (dropped in this order).
struct Live {
    browser: Browser,
    refs: HashMap<String, Target>,
    proxy: CheckingProxy,
}

/// One session's browser.
pub struct BrowserSlot {
    settings: BrowserSettings,
    resolver: Arc<dyn Resolver>,
    live: tokio::sync::Mutex<Option<Live>>,
    last_used: Mutex<Instant>,
}

impl std::fmt::Debug for BrowserSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BrowserSlot")
    }
}

/// Whether this process runs as root (Chromium's sandbox refuses root).
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// A URL as agent-browser takes it: `https://` added where no scheme is given.
fn with_scheme(url: &str) -> String {
    let url = url.trim();
    if url.contains("://")
        || ["about:", "data:", "file:", "chrome:"]
            .iter()
            .any(|p| url.starts_with(p))
    {
        url.to_owned()
    } else {
        format!("https://{url}")
    }
}

/// Refuses `url` up front when the policy forbids where it points, for a
/// clear answer without starting a navigation. Not the guard (the name may
/// resolve differently for the browser): the proxy is. Names that do not
/// resolve are left for the browser to report.
async fn precheck(url: &str, policy: UrlPolicy, resolver: Arc<dyn Resolver>) -> Result<(), String> {
    if !url.starts_with("http://") && !url.starts_with("https://") {
        return Ok(());
    }
    let url = url.to_owned();
    // DNS is blocking, so off the runtime.
    let checked =
        tokio::task::spawn_blocking(move || check_url(&url, policy, resolver.as_ref())).await;
    match checked {
        Ok(Ok(()) | Err(UrlBlock::Dns(_) | UrlBlock::Malformed(_) | UrlBlock::Scheme(_))) => Ok(()),
        Ok(Err(UrlBlock::Metadata(_))) => {
            Err("Blocked: URL targets a cloud metadata endpoint".into())
        }
        Ok(Err(block)) => Err(crate::extract::fetch::block_message(&block.to_string())),
        Err(_) => Err("Blocked: the URL check did not finish".into()),
    }
}

/// Why the proxy refused the navigation to `url` that ended on `here`, if it
/// did: a refusal of the page's own host, or, when the navigation failed
/// outright (a refused tunnel), the first refusal it met.
fn refused_navigation(proxy: &CheckingProxy, url: &str, here: Option<&str>) -> Option<String> {
    let refusals = proxy.refusals();
    let hosts: Vec<String> = [Some(url), here]
        .into_iter()
        .flatten()
        .filter_map(|u| parse_url(u).ok())
        .filter_map(|u| proxy::authority(&u))
        .collect();
    let block = refusals
        .iter()
        .find(|r| hosts.contains(&r.authority))
        .or_else(|| here.is_none().then(|| refusals.first()).flatten())
        .map(|r| &r.block)?;
    Some(match block {
        UrlBlock::Dns(host) => format!("Navigation failed: cannot resolve {host}"),
        block => crate::extract::fetch::block_message(&block.to_string()),
    })
}

impl BrowserSlot {
    /// A slot that starts its browser on first use.
    pub fn new(settings: BrowserSettings) -> Arc<Self> {
        Self::with_resolver(settings, Arc::new(SystemResolver))
    }

    /// A slot whose checks and proxy resolve names with `resolver`.
    pub fn with_resolver(settings: BrowserSettings, resolver: Arc<dyn Resolver>) -> Arc<Self> {
        Arc::new(Self {
            settings,
            resolver,
            live: tokio::sync::Mutex::new(None),
            last_used: Mutex::new(Instant::now()),
        })
    }

    /// Whether a browser is running for this slot now.
    pub async fn is_running(&self) -> bool {
        self.live.lock().await.is_some()
    }

    fn touch(&self) {
        if let Ok(mut t) = self.last_used.lock() {
            *t = Instant::now();
        }
    }

    /// Runs `work` on the live browser, starting it first if needed.
    async fn with<T>(
        self: &Arc<Self>,
        work: impl AsyncFnOnce(&mut Live) -> Result<T, String>,
    ) -> Result<T, String> {
        self.touch();
        let mut live = self.live.lock().await;
        if live.is_none() {
            let proxy = CheckingProxy::start(self.settings.policy, self.resolver.clone())
                .await
                .map_err(|e| format!("Failed to start the browser's proxy: {e}"))?;
            let browser = Browser::launch(
                &self.settings.executable,
                self.settings.headed,
                running_as_root(),
                proxy.port(),
            )
            .await
            .map_err(|e| format!("Failed to start the browser: {e}"))?;
            *live = Some(Live {
                browser,
                refs: HashMap::new(),
                proxy,
            });
            self.watch_idle();
        }
        let Some(live) = live.as_mut() else {
            return Err("the browser is not running".into());
        };
        let result = work(live).await;
        self.touch();
        result
    }

    /// Closes the browser once it has been idle for the inactivity timeout.
    fn watch_idle(self: &Arc<Self>) {
        let weak: Weak<Self> = Arc::downgrade(self);
        let idle = self.settings.inactivity;
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(5).min(idle)).await;
                let Some(slot) = weak.upgrade() else {
                    return;
                };
                let unused = slot
                    .last_used
                    .lock()
                    .map(|t| t.elapsed())
                    .unwrap_or_default();
                // In use right now (the lock is held): look again later.
                if unused >= idle
                    && let Ok(mut live) = slot.live.try_lock()
                {
                    *live = None;
                    return;
                }
            }
        });
    }

    /// The page as a snapshot (refs renewed); long ones are cut with the
    /// whole text stored.
    async fn snapshot_of(
        live: &mut Live,
        full: bool,
        cache: &std::path::Path,
    ) -> Result<(String, usize), String> {
        let tree = live
            .browser
            .call("Accessibility.getFullAXTree", json!({}))
            .await?;
        let snap = snapshot::render(&tree, !full);
        live.refs = snap.refs;
        Ok((fit(&snap.text, cache), live.refs.len()))
    }

    /// `browser_navigate`.
    pub async fn navigate(self: &Arc<Self>, url: &str) -> Value {
        if crate::extract::has_key(url) {
            return failure(
                "Blocked: URL contains what appears to be an API key or token. Secrets must not be sent in URLs.",
            );
        }
        let url = with_scheme(url);
        if let Err(blocked) = precheck(&url, self.settings.policy, self.resolver.clone()).await {
            return failure(&blocked);
        }
        let cache = self.settings.cache_dir.clone();
        let done = self
            .with(async |live: &mut Live| {
                live.proxy.forget();
                let nav = live.browser.call("Page.navigate", json!({"url": url})).await?;
                if let Some(error) = nav["errorText"].as_str().filter(|e| !e.is_empty()) {
                    return Err(refused_navigation(&live.proxy, &url, None)
                        .unwrap_or_else(|| format!("Navigation failed: {error}")));
                }
                live.browser.wait_loaded(Duration::from_secs(30)).await;
                let here = live.browser.eval("location.href").await?;
                let here = here.as_str().unwrap_or("").to_owned();
                // A refused plain-HTTP page arrives as the proxy's 403 page.
                if let Some(blocked) = refused_navigation(&live.proxy, &url, Some(&here)) {
                    let _ = live.browser.call("Page.navigate", json!({"url": "about:blank"})).await;
                    return Err(blocked);
                }
                let title = live.browser.eval("document.title").await?;
                let (text, count) = Self::snapshot_of(live, false, &cache).await?;
                Ok(json!({"success": true, "url": here, "title": title, "snapshot": text, "element_count": count}))
            })
            .await;
        done.unwrap_or_else(|e| failure(&e))
    }

    /// `browser_snapshot`.
    pub async fn snapshot(self: &Arc<Self>, full: bool) -> Value {
        let cache = self.settings.cache_dir.clone();
        self.with(async |live: &mut Live| {
            let (text, count) = Self::snapshot_of(live, full, &cache).await?;
            Ok(json!({"success": true, "snapshot": text, "element_count": count}))
        })
        .await
        .unwrap_or_else(|e| failure(&e))
    }

    /// The node a ref names (`@e3`, `e3` or `ref=e3`).
    fn target(live: &Live, reference: &str) -> Result<(String, i64), String> {
        let id = reference
            .trim()
            .trim_start_matches("ref=")
            .trim_start_matches('@')
            .to_owned();
        live.refs
            .get(&id)
            .map(|t| (id.clone(), t.backend_node))
            .ok_or_else(|| format!("Unknown ref: {id} (take a browser_snapshot for current refs)"))
    }

    /// `browser_click`.
    pub async fn click(self: &Arc<Self>, reference: &str) -> Value {
        self.with(async |live: &mut Live| {
            let (id, node) = Self::target(live, reference)?;
            let _ = live
                .browser
                .call("DOM.scrollIntoViewIfNeeded", json!({"backendNodeId": node}))
                .await;
            let boxes = live
                .browser
                .call("DOM.getBoxModel", json!({"backendNodeId": node}))
                .await?;
            let quad: Vec<f64> = boxes["model"]["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_f64)
                .collect();
            if quad.len() < 8 {
                return Err(format!("Failed to click @{id}: it has no box on the page"));
            }
            let x = (quad[0] + quad[2] + quad[4] + quad[6]) / 4.0;
            let y = (quad[1] + quad[3] + quad[5] + quad[7]) / 4.0;
            for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
                live.browser
                    .call(
                        "Input.dispatchMouseEvent",
                        json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
                    )
                    .await?;
            }
            settle(&live.browser).await;
            Ok(json!({"success": true, "clicked": format!("@{id}")}))
        })
        .await
        .unwrap_or_else(|e| failure(&e))
    }

    /// `browser_type`: the field cleared, then `text` typed.
    pub async fn type_text(self: &Arc<Self>, reference: &str, text: &str) -> Value {
        self.with(async |live: &mut Live| {
            let (id, node) = Self::target(live, reference)?;
            let resolved = live.browser.call("DOM.resolveNode", json!({"backendNodeId": node})).await?;
            let object = resolved["object"]["objectId"].as_str().ok_or("the element is gone")?.to_owned();
            live.browser
                .call(
                    "Runtime.callFunctionOn",
                    json!({"objectId": object, "functionDeclaration":
                        "function(){this.focus();this.select&&this.select();if('value' in this){this.value='';}this.dispatchEvent(new Event('input',{bubbles:true}));}"}),
                )
                .await?;
            live.browser.call("Input.insertText", json!({"text": text})).await?;
            Ok(json!({"success": true, "typed": text, "element": format!("@{id}")}))
        })
        .await
        .unwrap_or_else(|e| failure(&e))
    }

    /// `browser_scroll`.
    pub async fn scroll(self: &Arc<Self>, direction: &str) -> Value {
        let delta = match direction {
            "down" => 500,
            "up" => -500,
            other => return failure(&format!("Invalid direction '{other}'. Use 'up' or 'down'.")),
        };
        let direction = direction.to_owned();
        self.with(async |live: &mut Live| {
            live.browser
                .eval(&format!("window.scrollBy(0, {delta})"))
                .await?;
            Ok(json!({"success": true, "scrolled": direction}))
        })
        .await
        .unwrap_or_else(|e| failure(&e))
    }

    /// `browser_back`.
    pub async fn back(self: &Arc<Self>) -> Value {
        self.with(async |live: &mut Live| {
            live.browser.eval("history.back()").await?;
            tokio::time::sleep(Duration::from_millis(500)).await;
            live.browser.wait_loaded(Duration::from_secs(30)).await;
            live.refs.clear();
            let here = live.browser.eval("location.href").await?;
            Ok(json!({"success": true, "url": here}))
        })
        .await
        .unwrap_or_else(|e| failure(&e))
    }

    /// `browser_press`.
    pub async fn press(self: &Arc<Self>, key: &str) -> Value {
        let (down, up) = keys::events(key);
        let key = key.to_owned();
        self.with(async |live: &mut Live| {
            live.browser.call("Input.dispatchKeyEvent", down).await?;
            live.browser.call("Input.dispatchKeyEvent", up).await?;
            settle(&live.browser).await;
            Ok(json!({"success": true, "pressed": key}))
        })
        .await
        .unwrap_or_else(|e| failure(&e))
    }

    /// `browser_get_images`.
    pub async fn images(self: &Arc<Self>) -> Value {
        const LIST: &str = "JSON.stringify([...document.images].map(img => ({src: img.src, alt: img.alt || '', width: img.naturalWidth, height: img.naturalHeight})).filter(img => img.src && !img.src.startsWith('data:')))";
        self.with(async |live: &mut Live| {
            let raw = live.browser.eval(LIST).await?;
            Ok(match raw.as_str().and_then(|s| serde_json::from_str::<Value>(s).ok()) {
                Some(Value::Array(images)) => json!({"success": true, "count": images.len(), "images": images}),
                _ => json!({"success": true, "images": [], "count": 0, "warning": "Could not parse image data"}),
            })
        })
        .await
        .unwrap_or_else(|e| failure(&e))
    }

    /// A full-page PNG of the page, saved under `cache/screenshots`; its path.
    pub async fn screenshot(self: &Arc<Self>) -> Result<(PathBuf, String), String> {
        let dir = self.settings.cache_dir.join("screenshots");
        self.with(async |live: &mut Live| {
            let shot = live
                .browser
                .call(
                    "Page.captureScreenshot",
                    json!({"format": "png", "captureBeyondViewport": true}),
                )
                .await?;
            let data = shot["data"]
                .as_str()
                .ok_or("no screenshot data")?
                .to_owned();
            let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, &data)
                .map_err(|e| format!("unreadable screenshot: {e}"))?;
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let name = format!("browser_screenshot_{}.png", uuid_hex());
            let path = dir.join(name);
            std::fs::write(&path, bytes)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            Ok((path, format!("data:image/png;base64,{data}")))
        })
        .await
    }

    /// `browser_console`: what the page logged (then forgotten with `clear`),
    /// or the value of `expression`.
    pub async fn console(self: &Arc<Self>, clear: bool, expression: Option<&str>) -> Value {
        let expression = expression.map(str::to_owned);
        self.with(async |live: &mut Live| {
            if let Some(expression) = expression {
                let value = live.browser.eval(&expression).await.map_err(|e| {
                    if e.contains("reference chain is too long") || e.contains("Object reference chain") {
                        "Expression returned a live DOM node / NodeList / Window, which can't be serialized. Extract a primitive value (e.g. .innerText, .href, .src, .value) or use JSON.stringify() / a snapshot tool instead.".to_owned()
                    } else {
                        e
                    }
                })?;
                let value = match &value {
                    Value::String(s) => serde_json::from_str(s).unwrap_or(value.clone()),
                    _ => value,
                };
                let kind = match &value {
                    Value::String(_) => "str",
                    Value::Number(n) if n.is_f64() => "float",
                    Value::Number(_) => "int",
                    Value::Bool(_) => "bool",
                    Value::Object(_) => "dict",
                    Value::Array(_) => "list",
                    Value::Null => "NoneType",
                };
                return Ok(json!({"success": true, "result": value, "result_type": kind}));
            }
            let mut log = live.browser.log.lock().map_err(|_| "the console log is unreadable".to_owned())?;
            let messages: Vec<Value> = log
                .console
                .iter()
                .map(|(kind, text)| json!({"type": kind, "text": text, "source": "console"}))
                .collect();
            let errors: Vec<Value> = log
                .errors
                .iter()
                .map(|text| json!({"message": text, "source": "exception"}))
                .collect();
            if clear {
                log.console.clear();
                log.errors.clear();
            }
            Ok(json!({"success": true, "total_messages": messages.len(), "total_errors": errors.len(),
                      "console_messages": messages, "js_errors": errors}))
        })
        .await
        .unwrap_or_else(|e| failure(&e))
    }
}

/// Gives a click or key press time to start a navigation and finish it.
async fn settle(browser: &Browser) {
    tokio::time::sleep(Duration::from_millis(300)).await;
    browser.wait_loaded(Duration::from_secs(15)).await;
}

fn failure(error: &str) -> Value {
    json!({"success": false, "error": error})
}

fn uuid_hex() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// A snapshot cut at a line end past [`SNAPSHOT_LIMIT`], the whole text kept
/// under `cache/web/` with a note that says where.
fn fit(text: &str, cache: &std::path::Path) -> String {
    if text.chars().count() <= SNAPSHOT_LIMIT {
        return text.to_owned();
    }
    let head: String = text.chars().take(SNAPSHOT_LIMIT).collect();
    let head = head
        .rfind('\n')
        .map_or(head.as_str(), |i| &head[..i])
        .to_owned();
    let shown = head.lines().count();
    let rest = text.lines().count().saturating_sub(shown);
    let digest = sha2::Digest::finalize(<sha2::Sha256 as sha2::Digest>::new_with_prefix(
        text.as_bytes(),
    ));
    let dir = cache.join("web");
    let path = dir.join(format!(
        "browser-snapshot-{}.txt",
        &hex::encode(digest)[..10]
    ));
    match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, text)) {
        Ok(()) => format!(
            "{head}\n[... {rest} more lines truncated — full snapshot: read_file path=\"{}\" offset={} limit=200]",
            path.display(),
            shown + 1
        ),
        Err(_) => format!(
            "{head}\n[... {rest} more lines truncated, use browser_snapshot for full content]"
        ),
    }
}
