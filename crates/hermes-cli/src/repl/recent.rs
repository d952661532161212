//! `/sessions`: the recent terminal sessions, numbered so `/resume N` picks one.

use std::io::Write;

use anyhow::Result;
use hermes_state::ListFilter;

use super::Repl;

/// How many sessions `/sessions` lists.
const SHOWN: usize = 10;

impl Repl {
    /// `/sessions` (or `list`): the table; `/sessions KEY`: as `/resume KEY`.
    pub(super) async fn sessions(&mut self, arg: &str) -> Result<()> {
        if !arg.is_empty() && !matches!(arg, "list" | "ls" | "browse") {
            return self.resume(arg).await;
        }
        let mut err = std::io::stderr();
        let services = hermes_session::Services::new(self.session.setup.clone());
        let Some(admin) = services.admin() else {
            let why = services
                .store_problem()
                .unwrap_or_else(|| "session history is off".to_owned());
            writeln!(err, "  Cannot list sessions: {why}")?;
            return Ok(());
        };
        let current = self.session.id();
        let rows: Vec<_> = admin
            .list_sessions(&ListFilter {
                source: Some("cli".into()),
                limit: SHOWN + 1,
                ..ListFilter::default()
            })?
            .into_iter()
            .filter(|r| r.id != current)
            .take(SHOWN)
            .collect();
        if rows.is_empty() {
            writeln!(err, "  (._.) No previous sessions yet.")?;
            self.listed.clear();
            return Ok(());
        }
        writeln!(err, "\n  Recent sessions:\n")?;
        writeln!(
            err,
            "  {:<3} {:<32} {:<40} {:<13} ID",
            "#", "Title", "Preview", "Last Active"
        )?;
        writeln!(
            err,
            "  {} {} {} {} {}",
            "─".repeat(3),
            "─".repeat(32),
            "─".repeat(40),
            "─".repeat(13),
            "─".repeat(24)
        )?;
        for (n, row) in rows.iter().enumerate() {
            writeln!(
                err,
                "  {:<3} {:<32} {:<40} {:<13} {}",
                n + 1,
                cut(row.title.as_deref().unwrap_or("—"), 32),
                cut(&row.preview, 38),
                crate::render::ago(row.last_active as u64),
                row.id
            )?;
        }
        writeln!(
            err,
            "\n  Use /resume <number>, /resume <session id>, or /resume <session title> to continue.\n"
        )?;
        self.listed = rows.into_iter().map(|r| r.id).collect();
        Ok(())
    }

    /// The session `/resume N` means after a `/sessions` listing, if it does.
    pub(super) fn listed_session(&self, key: &str) -> Option<String> {
        let n: usize = key.parse().ok()?;
        self.listed.get(n.checked_sub(1)?).cloned()
    }
}

fn cut(text: &str, max: usize) -> String {
    let flat = text.replace(['\n', '\r'], " ");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut head: String = flat.chars().take(max.saturating_sub(1)).collect();
    head.push('…');
    head
}
