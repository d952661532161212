//! Where a job's answer goes, as the reference decides it: `deliver` is
//! `local` (kept in `cron/output/` only), `origin` (the chat the job was made
//! in, else a home channel), a platform (its home channel, or the origin
//! chat when the job came from that platform), `platform:chat[:thread]`, or
//! `all` (every platform with a home channel); several, comma-separated.
//! The gateway's messaging side does the sending, through [`CronDelivery`].

use futures_util::future::BoxFuture;
use serde_json::Value;

/// One chat an answer is sent to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    /// `telegram`, `discord`, `slack`.
    pub platform: String,
    /// The platform's chat (channel) id.
    pub chat_id: String,
    /// A thread (topic) inside it.
    pub thread_id: Option<String>,
}

/// Sends cron answers into chats (the gateway's platforms).
pub trait CronDelivery: Send + Sync + std::fmt::Debug {
    /// The platforms that can take a delivery, in the order `all` uses.
    fn platforms(&self) -> Vec<String>;
    /// A platform's home channel, when it has one.
    fn home(&self, platform: &str) -> Option<Target>;
    /// Sends `text` (markdown, `MEDIA:` tags become files) to `target`.
    fn send<'a>(&'a self, target: &'a Target, text: &'a str) -> BoxFuture<'a, Result<(), String>>;
}

/// `deliver` as one comma-separated string (a list is accepted, as old
/// files have them); `local` when unset.
pub fn deliver_value(job: &Value) -> String {
    match &job["deliver"] {
        Value::String(s) if !s.trim().is_empty() => s.trim().to_owned(),
        Value::Array(items) => {
            let parts: Vec<String> = items
                .iter()
                .filter_map(|i| i.as_str().map(str::trim).filter(|s| !s.is_empty()))
                .map(str::to_owned)
                .collect();
            if parts.is_empty() {
                "local".to_owned()
            } else {
                parts.join(",")
            }
        }
        _ => "local".to_owned(),
    }
}

fn origin(job: &Value) -> Option<Target> {
    let origin = job.get("origin")?.as_object()?;
    let text = |k: &str| match origin.get(k) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    Some(Target {
        platform: text("platform")?,
        chat_id: text("chat_id")?,
        thread_id: text("thread_id"),
    })
}

/// `chat[:thread]`; a Matrix room id keeps its server part (`!room:server`,
/// threads being `$event` ids).
fn split_chat<'a>(platform: &str, rest: &'a str) -> (&'a str, Option<String>) {
    if platform.eq_ignore_ascii_case("matrix") {
        return match rest.split_once(":$") {
            Some((room, event)) => (room, Some(format!("${event}"))),
            None => (rest, None),
        };
    }
    match rest.split_once(':') {
        Some((chat, thread)) if !thread.is_empty() => (chat, Some(thread.to_owned())),
        _ => (rest, None),
    }
}

fn one_target(job: &Value, part: &str, sender: Option<&dyn CronDelivery>) -> Option<Target> {
    let home = |platform: &str| sender.and_then(|s| s.home(platform));
    match part {
        "local" => None,
        "origin" => origin(job).or_else(|| sender?.platforms().iter().find_map(|p| home(p))),
        _ => match part.split_once(':') {
            Some((platform, rest)) => {
                let (chat, thread) = split_chat(platform, rest);
                (!chat.is_empty()).then(|| Target {
                    platform: platform.to_ascii_lowercase(),
                    chat_id: chat.to_owned(),
                    thread_id: thread,
                })
            }
            None => {
                let platform = part.to_ascii_lowercase();
                origin(job)
                    .filter(|o| o.platform == platform)
                    .or_else(|| home(&platform))
            }
        },
    }
}

/// The chats a job's answer goes to (duplicates dropped); an error when
/// `deliver` names somewhere no chat could be found for.
pub fn targets(job: &Value, sender: Option<&dyn CronDelivery>) -> Result<Vec<Target>, String> {
    let deliver = deliver_value(job);
    if deliver == "local" {
        return Ok(Vec::new());
    }
    let mut parts: Vec<String> = Vec::new();
    for part in deliver.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if part.eq_ignore_ascii_case("all") {
            let with_home = sender.map(|s| {
                s.platforms()
                    .into_iter()
                    .filter(|p| s.home(p).is_some())
                    .collect::<Vec<_>>()
            });
            parts.extend(with_home.unwrap_or_default());
        } else {
            parts.push(part.to_owned());
        }
    }
    let mut found: Vec<Target> = Vec::new();
    for part in &parts {
        if let Some(target) = one_target(job, part, sender)
            && !found.contains(&target)
        {
            found.push(target);
        }
    }
    if found.is_empty() && deliver != "origin" {
        return Err(format!(
            "no delivery target resolved for deliver={deliver}: connect the platform in \
             `hermes gateway` and set its home channel (/sethome in the chat, or \
             <PLATFORM>_HOME_CHANNEL)"
        ));
    }
    Ok(found)
}

/// The text a chat gets: the answer with the reference's header and footer
/// (`cron.wrap_response`, on by default), or as it is.
pub fn wrapped(job: &Value, content: &str, wrap: bool) -> String {
    if !wrap {
        return content.to_owned();
    }
    let id = job["id"].as_str().unwrap_or_default();
    let name = job["name"].as_str().unwrap_or(id);
    format!(
        "Cronjob Response: {name}\n(job_id: {id})\n-------------\n\n{content}\n\n\
         To stop or manage this job, send me a new message (e.g. \"stop reminder {name}\")."
    )
}

/// A failed run in one line for a chat (the details stay in `cron/output/`).
pub fn failure_note(job: &Value, error: &str) -> String {
    let name = job["name"]
        .as_str()
        .or_else(|| job["id"].as_str())
        .unwrap_or("cron job");
    let lower = error.to_ascii_lowercase();
    let reason = if error.contains("429") || lower.contains("rate limit") {
        "provider rate limit. Full details saved in cron output.".to_owned()
    } else if lower.contains("timed out") || lower.contains("timeout") {
        "provider timeout. Full details saved in cron output.".to_owned()
    } else if lower.contains("authenticat") || lower.contains("authoriz") || error.contains("401") {
        "provider authentication error. Full details saved in cron output.".to_owned()
    } else {
        let flat = error.split_whitespace().collect::<Vec<_>>().join(" ");
        if flat.chars().count() > 180 {
            format!(
                "{}...",
                flat.chars().take(177).collect::<String>().trim_end()
            )
        } else {
            flat
        }
    };
    format!("⚠️ Cron '{name}' failed: {reason}")
}

/// Sends `text` to every target; the delivery errors, joined (`None` when
/// all went through).
pub async fn deliver(job: &Value, text: &str, sender: Option<&dyn CronDelivery>) -> Option<String> {
    let targets = match targets(job, sender) {
        Ok(t) => t,
        Err(e) => return Some(e),
    };
    let mut errors = Vec::new();
    for target in &targets {
        let sent = match sender {
            Some(s) => s.send(target, text).await,
            None => Err(format!(
                "{} is not connected: run `hermes gateway` with it configured",
                target.platform
            )),
        };
        if let Err(e) = sent {
            errors.push(format!("{}:{}: {e}", target.platform, target.chat_id));
        }
    }
    (!errors.is_empty()).then(|| errors.join("; "))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug)]
    struct Homes;

    impl CronDelivery for Homes {
        fn platforms(&self) -> Vec<String> {
            vec!["telegram".into(), "discord".into(), "slack".into()]
        }
        fn home(&self, platform: &str) -> Option<Target> {
            matches!(platform, "telegram" | "discord").then(|| Target {
                platform: platform.into(),
                chat_id: format!("{platform}-home"),
                thread_id: None,
            })
        }
        fn send<'a>(&'a self, _: &'a Target, _: &'a str) -> BoxFuture<'a, Result<(), String>> {
            Box::pin(async { Ok(()) })
        }
    }

    fn job(deliver: Value) -> Value {
        json!({"id": "abc", "name": "news", "deliver": deliver,
               "origin": {"platform": "slack", "chat_id": "D1", "thread_id": "1.2"}})
    }

    #[test]
    fn deliver_values_resolve_as_the_reference_does() {
        let homes = Homes;
        let s: Option<&dyn CronDelivery> = Some(&homes);
        assert!(targets(&job(json!("local")), s).unwrap().is_empty());
        let origin = targets(&job(json!("origin")), s).unwrap();
        assert_eq!(origin[0].chat_id, "D1");
        assert_eq!(origin[0].thread_id.as_deref(), Some("1.2"));
        // The job's own platform goes back to its chat; another to its home.
        assert_eq!(targets(&job(json!("slack")), s).unwrap()[0].chat_id, "D1");
        assert_eq!(
            targets(&job(json!("telegram")), s).unwrap()[0].chat_id,
            "telegram-home"
        );
        let explicit = targets(&job(json!("telegram:-100:17")), s).unwrap();
        assert_eq!(
            (
                explicit[0].chat_id.as_str(),
                explicit[0].thread_id.as_deref()
            ),
            ("-100", Some("17"))
        );
        let room = targets(&job(json!("matrix:!abc:hermes.test:8448")), s).unwrap();
        assert_eq!(room[0].chat_id, "!abc:hermes.test:8448");
        assert_eq!(room[0].thread_id, None);
        let thread = targets(&job(json!("matrix:!abc:hermes.test:$ev1")), s).unwrap();
        assert_eq!(
            (thread[0].chat_id.as_str(), thread[0].thread_id.as_deref()),
            ("!abc:hermes.test", Some("$ev1"))
        );
        let all = targets(&job(json!(["all", "telegram"])), s).unwrap();
        assert_eq!(all.len(), 2, "{all:?}");
        assert!(targets(&job(json!("matrix")), s).is_err());
        let no_origin = json!({"id": "x", "deliver": "origin"});
        assert_eq!(targets(&no_origin, s).unwrap()[0].chat_id, "telegram-home");
        assert!(targets(&no_origin, None).unwrap().is_empty());
    }

    #[test]
    fn answers_are_wrapped_and_failures_short() {
        let j = job(json!("origin"));
        let text = wrapped(&j, "It rained.", true);
        assert!(
            text.starts_with("Cronjob Response: news\n(job_id: abc)\n-------------\n\nIt rained.")
        );
        assert_eq!(wrapped(&j, "It rained.", false), "It rained.");
        assert_eq!(
            failure_note(&j, "HTTP 429 Too Many Requests"),
            "⚠️ Cron 'news' failed: provider rate limit. Full details saved in cron output."
        );
    }
}
