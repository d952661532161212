//! `hermes sessions export`: JSONL (every column, one session per line, to a
//! file or stdout), or Markdown / HTML transcripts (one file per session in
//! a folder, `<home>/session-exports` by default) — optionally with secrets
//! redacted and a compressed conversation's whole lineage in one file.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use hermes_state::ListFilter;
use hermes_state::store::SessionAdmin;

/// The export's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Every column, one JSON object per session per line.
    Jsonl,
    /// A Markdown transcript per session.
    Md,
    /// A self-contained HTML page per session.
    Html,
}

/// Which rows a transcript holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Lineage {
    /// The session alone.
    Single,
    /// The session after the ones compression continued it from, oldest first.
    Logical,
}

/// `hermes sessions export` arguments.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// JSONL: the file (- for stdout, required). md/html: the folder
    /// (default: <hermes home>/session-exports).
    output: Option<String>,
    /// The format.
    #[arg(long, value_enum, default_value = "jsonl")]
    format: Format,
    /// Only this session (id, prefix or title).
    #[arg(long = "session-id")]
    session_id: Option<String>,
    /// Only sessions from this source.
    #[arg(long)]
    source: Option<String>,
    /// Mask secrets (API keys, tokens, passwords) in what is written.
    #[arg(long)]
    redact: bool,
    /// md/html: the session alone, or with the sessions it was compressed from.
    #[arg(long, value_enum, default_value = "single")]
    lineage: Lineage,
}

fn clean(redact: bool) -> impl Fn(&str) -> String {
    move |text: &str| {
        if redact {
            hermes_llm::redact::redact_secrets(text)
        } else {
            text.to_owned()
        }
    }
}

/// The sessions to export, by id.
fn chosen(
    admin: &dyn SessionAdmin,
    args: &ExportArgs,
    named: &dyn Fn(&str) -> Result<String>,
) -> Result<Vec<String>> {
    Ok(match &args.session_id {
        Some(key) => vec![named(key)?],
        None => admin
            .list_sessions(&ListFilter {
                source: args.source.clone(),
                limit: usize::MAX,
                include_children: args.format == Format::Jsonl,
                ..ListFilter::default()
            })?
            .into_iter()
            .map(|s| s.id)
            .collect(),
    })
}

/// Runs the export; `home` is where md/html go by default.
pub fn export(
    out: &mut impl Write,
    admin: &dyn SessionAdmin,
    home: &Path,
    args: &ExportArgs,
    named: &dyn Fn(&str) -> Result<String>,
) -> Result<()> {
    let ids = chosen(admin, args, named)?;
    let clean = clean(args.redact);
    if args.format == Format::Jsonl {
        let Some(output) = args.output.as_deref() else {
            bail!("give the file to write (or - for stdout): hermes sessions export FILE");
        };
        let mut text = String::new();
        for id in &ids {
            if let Some(export) = admin.export_session(id)? {
                text.push_str(&clean(&serde_json::to_string(&export)?));
                text.push('\n');
            }
        }
        if output == "-" {
            out.write_all(text.as_bytes())?;
        } else {
            std::fs::write(output, text).with_context(|| format!("cannot write {output}"))?;
            writeln!(
                std::io::stderr(),
                "Exported {} session(s) to {output}",
                ids.len()
            )?;
        }
        return Ok(());
    }
    let folder = args
        .output
        .as_deref()
        .map_or_else(|| home.join("session-exports"), PathBuf::from);
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    for id in &ids {
        let path = folder.join(format!(
            "{id}.{}",
            if args.format == Format::Md {
                "md"
            } else {
                "html"
            }
        ));
        std::fs::write(&path, transcript(admin, id, args, &clean)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        writeln!(out, "{}", path.display())?;
    }
    writeln!(
        std::io::stderr(),
        "Exported {} session(s) to {}",
        ids.len(),
        folder.display()
    )?;
    Ok(())
}

/// One session's transcript (with its lineage when asked).
fn transcript(
    admin: &dyn SessionAdmin,
    id: &str,
    args: &ExportArgs,
    clean: &dyn Fn(&str) -> String,
) -> Result<String> {
    let row = admin
        .session_row(id)?
        .with_context(|| format!("session {id} not found"))?;
    let mut ids = vec![id.to_owned()];
    if args.lineage == Lineage::Logical {
        // Compression continues a conversation in a child session: walk up.
        let mut at = row.parent_session_id.clone();
        while let Some(parent) = at.take() {
            if ids.contains(&parent) {
                break;
            }
            at = admin
                .session_row(&parent)?
                .and_then(|r| r.parent_session_id);
            ids.insert(0, parent);
        }
    }
    let mut messages = Vec::new();
    for id in &ids {
        messages.extend(admin.messages(id)?);
    }
    Ok(match args.format {
        Format::Html => hermes_state::transcript::html(&row, &messages, clean),
        _ => hermes_state::transcript::markdown(&row, &messages, clean),
    })
}
