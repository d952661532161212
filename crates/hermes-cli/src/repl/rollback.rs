//! `/rollback`: list the project's checkpoints, show what changed since one,
//! or put its files back (all, or one) and undo the chat turn that changed
//! them.

use std::io::Write;

use anyhow::Result;
use hermes_protocol::{Event, Op};
use hermes_tools::checkpoints::{Checkpoint, Checkpoints};

use super::Repl;

/// Lines of a diff shown before it is cut.
const DIFF_LINES: usize = 80;

impl Repl {
    /// `/rollback [N | diff N | N FILE]`.
    pub(super) async fn rollback(&mut self, arg: &str) -> Result<()> {
        let mut err = std::io::stderr();
        // The session's own checkpoints (they may live on an SSH host or in a
        // container); else this host's, as config and `--checkpoints` say.
        let checkpoints = match self.session.conv.checkpoints() {
            Some(own) if own.enabled() => own,
            _ => std::sync::Arc::new(hermes_session::checkpoints(
                &self.session.setup,
                self.checkpoints_forced,
                true,
            )),
        };
        if !checkpoints.enabled() {
            writeln!(
                err,
                "  Checkpoints are not enabled.\n  Enable with: hermes chat --checkpoints\n  Or in config.yaml: checkpoints: {{ enabled: true }}"
            )?;
            return Ok(());
        }
        let dir = checkpoints.project_of(&self.session.conv.info().cwd);
        let list = checkpoints.list(&dir);
        let words: Vec<&str> = arg.split_whitespace().collect();
        match words.as_slice() {
            [] => write!(err, "{}", listing(&dir, &list))?,
            ["diff"] => writeln!(err, "  Usage: /rollback diff <N>")?,
            ["diff", n] => match pick(&list, n) {
                Ok(cp) => match checkpoints.diff(&dir, &cp.hash) {
                    Ok(text) if text.is_empty() => {
                        writeln!(err, "  No changes since this checkpoint.")?
                    }
                    Ok(text) => writeln!(err, "\n{}", cut(&text))?,
                    Err(e) => writeln!(err, "  ❌ {e}")?,
                },
                Err(e) => writeln!(err, "{e}")?,
            },
            [n, rest @ ..] if rest.len() <= 1 => match pick(&list, n) {
                Ok(cp) => {
                    self.restore(&checkpoints, &dir, cp, rest.first().copied())
                        .await?
                }
                Err(e) => writeln!(err, "{e}")?,
            },
            _ => writeln!(err, "  Usage: /rollback [N | diff N | N FILE]")?,
        }
        Ok(())
    }

    async fn restore(
        &mut self,
        checkpoints: &Checkpoints,
        dir: &std::path::Path,
        cp: &Checkpoint,
        file: Option<&str>,
    ) -> Result<()> {
        let mut err = std::io::stderr();
        let short: String = cp.hash.chars().take(8).collect();
        if let Err(e) = checkpoints.restore(dir, &cp.hash, file) {
            writeln!(err, "  ❌ {e}")?;
            return Ok(());
        }
        match file {
            Some(f) => writeln!(
                err,
                "  ✅ Restored {f} from checkpoint {short}: {}",
                cp.reason
            )?,
            None => writeln!(err, "  ✅ Restored to checkpoint {short}: {}", cp.reason)?,
        }
        writeln!(err, "  A pre-rollback snapshot was saved automatically.")?;
        // The files went back; so does the turn that changed them.
        if self.session.conv.info().messages > 1 {
            match self.ask(Op::Undo { turns: 1 }).await? {
                Event::Undone { .. } => {
                    writeln!(err, "  Chat turn undone to match restored file state.")?;
                }
                Event::Error { .. } => {}
                other => writeln!(err, "  (unexpected answer to the undo: {other:?})")?,
            }
        }
        Ok(())
    }
}

/// The list, newest first, with how to use it.
fn listing(dir: &std::path::Path, list: &[Checkpoint]) -> String {
    if list.is_empty() {
        return format!("  No checkpoints found for {}\n", dir.display());
    }
    let mut out = format!("📸 Checkpoints for {}:\n\n", dir.display());
    for (i, cp) in list.iter().enumerate() {
        let short: String = cp.hash.chars().take(7).collect();
        let stat = match cp.stat {
            Some((files, added, removed)) if files > 0 => format!(
                "  ({files} file{}, +{added}/-{removed})",
                if files == 1 { "" } else { "s" }
            ),
            _ => String::new(),
        };
        out.push_str(&format!(
            "  {}. {short}  {}  {}{stat}\n",
            i + 1,
            cp.when,
            cp.reason
        ));
    }
    out.push_str(
        "\n  /rollback <N>             restore to checkpoint N\n  /rollback diff <N>        preview changes since checkpoint N\n  /rollback <N> <file>      restore a single file from checkpoint N\n",
    );
    out
}

/// Checkpoint `n` (1 = newest) or the one whose hash starts with `n`.
fn pick<'a>(list: &'a [Checkpoint], n: &str) -> Result<&'a Checkpoint, String> {
    if list.is_empty() {
        return Err("  No checkpoints found.".into());
    }
    if let Ok(i) = n.parse::<usize>() {
        return list
            .get(i.wrapping_sub(1))
            .ok_or_else(|| format!("  Invalid checkpoint number. Use 1-{}.", list.len()));
    }
    let valid = n.len() >= 4 && n.chars().all(|c| c.is_ascii_hexdigit());
    list.iter()
        .find(|cp| valid && cp.hash.starts_with(&n.to_ascii_lowercase()))
        .ok_or_else(|| format!("  Checkpoint '{n}' not found"))
}

fn cut(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= DIFF_LINES {
        return text.to_owned();
    }
    format!(
        "{}\n  ... ({} more lines, showing first {DIFF_LINES})",
        lines[..DIFF_LINES].join("\n"),
        lines.len() - DIFF_LINES
    )
}
