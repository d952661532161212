//! Who may talk to the bot, decided as the reference decides it: allow-all
//! switches, pairing approvals, then the allowlists (`TELEGRAM_ALLOWED_USERS`,
//! `GATEWAY_ALLOWED_USERS` …); with no list at all only
//! `GATEWAY_ALLOW_ALL_USERS` lets strangers in. Unknown users in a DM are
//! offered pairing unless `unauthorized_dm_behavior` says `ignore`.

use super::pairing::PairingStore;
use super::platform::{ChatKind, Incoming};

/// What to do with a stranger's DM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrangerDm {
    /// Reply with a pairing code.
    Pair,
    /// Drop it silently.
    Ignore,
}

/// One platform's access rules, read at start-up.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AccessRules {
    /// `{PLATFORM}_ALLOW_ALL_USERS`.
    pub allow_all_platform: bool,
    /// `GATEWAY_ALLOW_ALL_USERS`.
    pub allow_all_gateway: bool,
    /// `{PLATFORM}_ALLOWED_USERS` (or the platform's `allow_from`).
    pub users: Vec<String>,
    /// `GATEWAY_ALLOWED_USERS`.
    pub gateway_users: Vec<String>,
    /// `TELEGRAM_GROUP_ALLOWED_USERS`: in groups only.
    pub group_users: Vec<String>,
    /// `TELEGRAM_GROUP_ALLOWED_CHATS`: whole group chats.
    pub group_chats: Vec<String>,
    /// What strangers' DMs get.
    pub stranger_dm: Option<StrangerDm>,
}

/// Splits a comma-separated list.
pub fn list(text: Option<String>) -> Vec<String> {
    text.map(|t| {
        t.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    })
    .unwrap_or_default()
}

fn truthy(text: Option<String>) -> bool {
    text.is_some_and(|t| matches!(t.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes"))
}

impl AccessRules {
    /// Reads the rules for `platform` from the environment; `allow_from` and
    /// `dm_behavior` come from config.yaml (the environment wins).
    pub fn read(
        platform: &str,
        env: &dyn Fn(&str) -> Option<String>,
        allow_from: Vec<String>,
        dm_behavior: Option<String>,
        global_dm_behavior: Option<String>,
    ) -> Self {
        let upper = platform.to_ascii_uppercase();
        let mut users = list(env(&format!("{upper}_ALLOWED_USERS")));
        if users.is_empty() {
            users = allow_from;
        }
        let parse = |v: Option<String>| match v.as_deref().map(str::trim) {
            Some("pair") => Some(StrangerDm::Pair),
            Some("ignore") => Some(StrangerDm::Ignore),
            _ => None,
        };
        let mut rules = Self {
            allow_all_platform: truthy(env(&format!("{upper}_ALLOW_ALL_USERS"))),
            allow_all_gateway: truthy(env("GATEWAY_ALLOW_ALL_USERS")),
            users,
            gateway_users: list(env("GATEWAY_ALLOWED_USERS")),
            group_users: Vec::new(),
            group_chats: Vec::new(),
            stranger_dm: None,
        };
        if platform == "telegram" {
            rules.group_users = list(env("TELEGRAM_GROUP_ALLOWED_USERS"));
            rules.group_chats = list(env("TELEGRAM_GROUP_ALLOWED_CHATS"));
        }
        // The reference's order: the platform's own setting; a global value
        // other than the default; any allowlist means strangers are ignored.
        rules.stranger_dm = parse(dm_behavior).or_else(|| match parse(global_dm_behavior) {
            Some(StrangerDm::Ignore) => Some(StrangerDm::Ignore),
            _ => None,
        });
        if platform == "homeassistant" {
            // Its only sender is the house itself (the reference trusts it too).
            rules.allow_all_platform = true;
        }
        if platform == "email" {
            // A pairing code mailed to a From address anyone can forge
            // would be backscatter: email answers its allowlist only.
            rules.stranger_dm = Some(StrangerDm::Ignore);
            for user in &mut rules.users {
                *user = user.to_ascii_lowercase();
            }
        }
        if rules.stranger_dm.is_none() {
            let any_list = !rules.users.is_empty()
                || !rules.group_users.is_empty()
                || !rules.group_chats.is_empty()
                || !rules.gateway_users.is_empty();
            rules.stranger_dm = Some(if any_list {
                StrangerDm::Ignore
            } else {
                StrangerDm::Pair
            });
        }
        rules
    }

    /// Whether the sender of `message` may use the bot.
    pub fn allows(&self, platform: &str, message: &Incoming, pairing: &PairingStore) -> bool {
        let in_group = matches!(
            message.chat.kind,
            ChatKind::Group | ChatKind::Channel | ChatKind::Thread
        );
        if in_group
            && self
                .group_chats
                .iter()
                .any(|c| c == "*" || *c == message.chat.id)
        {
            return true;
        }
        let user = message.sender.id.trim();
        if user.is_empty() {
            return false;
        }
        if self.allow_all_platform || pairing.is_approved(platform, user) {
            return true;
        }
        let mut lists: Vec<&String> = self.users.iter().chain(&self.gateway_users).collect();
        if in_group {
            lists.extend(&self.group_users);
        }
        if lists.is_empty() && self.group_users.is_empty() && self.group_chats.is_empty() {
            return self.allow_all_gateway;
        }
        let bare = user.split('@').next().unwrap_or(user);
        lists.iter().any(|u| *u == "*" || *u == user || *u == bare)
    }

    /// What a stranger's DM gets.
    pub fn stranger_dm(&self) -> StrangerDm {
        self.stranger_dm.unwrap_or(StrangerDm::Pair)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::messaging::platform::{ChatRef, Sender};

    fn from(user: &str, kind: ChatKind) -> Incoming {
        Incoming {
            key: "1".into(),
            chat: ChatRef {
                id: "-100".into(),
                kind,
                thread_id: None,
                name: None,
            },
            sender: Sender {
                id: user.into(),
                name: "x".into(),
            },
            text: "hi".into(),
            addressed: true,
            button_press: None,
            attachments: Vec::new(),
        }
    }

    fn rules(vars: &[(&str, &str)]) -> AccessRules {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        AccessRules::read(
            "telegram",
            &|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
            Vec::new(),
            None,
            None,
        )
    }

    #[test]
    fn nobody_is_let_in_by_default_and_strangers_are_offered_pairing() {
        let dir = tempfile::tempdir().unwrap();
        let pairing = PairingStore::new(dir.path());
        let r = rules(&[]);
        assert!(!r.allows("telegram", &from("42", ChatKind::Dm), &pairing));
        assert_eq!(r.stranger_dm(), StrangerDm::Pair);
        let open = rules(&[("GATEWAY_ALLOW_ALL_USERS", "true")]);
        assert!(open.allows("telegram", &from("42", ChatKind::Dm), &pairing));
    }

    #[test]
    fn allowlists_admit_their_users_and_silence_strangers() {
        let dir = tempfile::tempdir().unwrap();
        let pairing = PairingStore::new(dir.path());
        let r = rules(&[
            ("TELEGRAM_ALLOWED_USERS", "7, 42"),
            ("TELEGRAM_GROUP_ALLOWED_USERS", "9"),
        ]);
        assert!(r.allows("telegram", &from("42", ChatKind::Dm), &pairing));
        assert!(
            !r.allows("telegram", &from("9", ChatKind::Dm), &pairing),
            "group list is for groups"
        );
        assert!(r.allows("telegram", &from("9", ChatKind::Group), &pairing));
        assert!(!r.allows("telegram", &from("5", ChatKind::Dm), &pairing));
        assert_eq!(r.stranger_dm(), StrangerDm::Ignore);
        let code = pairing.issue_code("telegram", "5", "Eve").unwrap().unwrap();
        pairing
            .approve(
                "telegram",
                &code,
                crate::messaging::pairing::Approver::Owner,
            )
            .unwrap();
        assert!(
            r.allows("telegram", &from("5", ChatKind::Dm), &pairing),
            "paired users join the list"
        );
    }
}
