//! `hermes logs`: the tail of `HERMES_HOME/logs/*.log`, filtered by level,
//! session, age and component, or followed as it grows.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use anyhow::Result;
use clap::Args;
use hermes_state::HermesHome;
use hermes_state::time::UtcTime;

/// `hermes logs` arguments.
#[derive(Debug, Args)]
pub struct LogsArgs {
    /// Which log: agent (default), errors, gateway, mcp, or `list`.
    #[arg(default_value = "agent")]
    log_name: String,
    /// How many lines to show.
    #[arg(short = 'n', long = "lines", default_value_t = 50)]
    lines: usize,
    /// Keep printing new lines as they are written (Ctrl+C stops).
    #[arg(short = 'f', long = "follow")]
    follow: bool,
    /// Only lines at this level or above (DEBUG, INFO, WARNING, ERROR, CRITICAL).
    #[arg(long)]
    level: Option<String>,
    /// Only lines tagged with this session id (or part of it).
    #[arg(long)]
    session: Option<String>,
    /// Only lines newer than this (`30m`, `1h`, `2d`).
    #[arg(long)]
    since: Option<String>,
    /// Only lines from this component (agent, tools, cli, gateway, cron, mcp).
    #[arg(long)]
    component: Option<String>,
}

/// Log names and their files.
const LOGS: &[(&str, &str)] = &[
    ("agent", "agent.log"),
    ("errors", "errors.log"),
    ("gateway", "gateway.log"),
    ("mcp", "mcp-stderr.log"),
];

const LEVELS: &[&str] = &["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"];

/// Logger-name prefixes of each component.
const COMPONENTS: &[(&str, &[&str])] = &[
    ("agent", &["agent", "run_agent"]),
    ("cli", &["cli", "hermes_cli"]),
    ("cron", &["cron"]),
    ("gateway", &["gateway"]),
    ("mcp", &["mcp", "tools.mcp"]),
    ("tools", &["tools"]),
];

/// The filters a line must pass.
#[derive(Debug, Default)]
struct Filter {
    min_level: Option<usize>,
    session: Option<String>,
    since_unix: Option<i64>,
    component: Option<&'static [&'static str]>,
}

impl Filter {
    fn active(&self) -> bool {
        self.min_level.is_some()
            || self.session.is_some()
            || self.since_unix.is_some()
            || self.component.is_some()
    }

    /// Whether `line` passes. Lines without a level or timestamp (a
    /// traceback's continuation) pass those filters.
    fn keeps(&self, line: &str) -> bool {
        let mut words = line.split_whitespace();
        let (date, time, level) = (words.next(), words.next(), words.next());
        if let Some(min) = self.min_level
            && let Some(at) = level.and_then(|l| LEVELS.iter().position(|x| *x == l))
            && at < min
        {
            return false;
        }
        if let Some(s) = &self.session
            && !line.contains(s.as_str())
        {
            return false;
        }
        if let (Some(cutoff), Some(stamp)) = (self.since_unix, date.zip(time).and_then(parse_stamp))
            && stamp < cutoff
        {
            return false;
        }
        if let Some(prefixes) = self.component {
            // `… LEVEL [session] logger: message`
            let logger = line
                .split_once(": ")
                .map(|(head, _)| head.rsplit(' ').next().unwrap_or(""))
                .unwrap_or("");
            if !prefixes
                .iter()
                .any(|p| logger == *p || logger.starts_with(&format!("{p}.")))
            {
                return false;
            }
        }
        true
    }
}

impl Filter {
    /// The lines that pass, a record's continuation lines (a message of
    /// several lines) going with the line that starts it.
    fn records<'a>(&self, lines: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
        let mut kept = Vec::new();
        let mut keeping = true;
        for line in lines {
            let mut words = line.split_whitespace();
            if words
                .next()
                .zip(words.next())
                .and_then(parse_stamp)
                .is_some()
            {
                keeping = self.keeps(line);
            }
            if keeping {
                kept.push(line);
            }
        }
        kept
    }
}

/// `2026-01-01 10:00:01,123` (UTC) as Unix seconds.
fn parse_stamp((date, time): (&str, &str)) -> Option<i64> {
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (year, month, day) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.split([':', ',']).map(|p| p.parse::<i64>().ok());
    let (hour, minute, second) = (t.next()??, t.next()??, t.next()??);
    let at = UtcTime {
        year,
        month: u32::try_from(month).ok()?,
        day: u32::try_from(day).ok()?,
        hour: u32::try_from(hour).ok()?,
        minute: u32::try_from(minute).ok()?,
        second: u32::try_from(second).ok()?,
    };
    Some(at.to_unix())
}

/// `30m`, `1h`, `2d`, `45s` as a duration.
fn parse_since(text: &str) -> Option<Duration> {
    let text = text.trim().to_ascii_lowercase();
    let unit = text.chars().last()?;
    let n: u64 = text[..text.len() - 1].trim().parse().ok()?;
    let secs = match unit {
        's' => n,
        'm' => n * 60,
        'h' => n * 3600,
        'd' => n * 86_400,
        _ => return None,
    };
    Some(Duration::from_secs(secs))
}

fn fail(out: &mut impl Write, message: &str) -> Result<ExitCode> {
    writeln!(out, "{message}")?;
    Ok(ExitCode::FAILURE)
}

/// Runs `hermes logs`.
pub fn run(args: LogsArgs, home: &HermesHome) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let dir = home.logs_dir();
    if args.log_name == "list" {
        return list(&mut out, &dir);
    }
    let Some((_, file)) = LOGS.iter().find(|(name, _)| *name == args.log_name) else {
        let names: Vec<&str> = LOGS.iter().map(|(n, _)| *n).collect();
        return fail(
            &mut out,
            &format!(
                "Unknown log: '{}'. Available: {}",
                args.log_name,
                names.join(", ")
            ),
        );
    };
    let mut filter = Filter::default();
    if let Some(level) = &args.level {
        let upper = level.to_ascii_uppercase();
        let Some(at) = LEVELS.iter().position(|l| *l == upper) else {
            return fail(
                &mut out,
                &format!(
                    "Invalid --level: '{level}'. Use DEBUG, INFO, WARNING, ERROR, or CRITICAL."
                ),
            );
        };
        filter.min_level = Some(at);
    }
    filter.session = args.session.clone();
    if let Some(since) = &args.since {
        let Some(age) = parse_since(since) else {
            return fail(
                &mut out,
                &format!("Invalid --since value: '{since}'. Use format like '1h', '30m', '2d'."),
            );
        };
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        filter.since_unix = Some(i64::try_from(now.saturating_sub(age).as_secs()).unwrap_or(0));
    }
    if let Some(component) = &args.component {
        let Some((_, prefixes)) = COMPONENTS.iter().find(|(n, _)| n == component) else {
            let names: Vec<&str> = COMPONENTS.iter().map(|(n, _)| *n).collect();
            return fail(
                &mut out,
                &format!(
                    "Unknown component: '{component}'. Available: {}",
                    names.join(", ")
                ),
            );
        };
        filter.component = Some(prefixes);
    }
    let path = dir.join(file);
    let Ok(text) = std::fs::read(&path) else {
        return fail(
            &mut out,
            &format!(
                "Log file not found: {}\n(Logs are created when Hermes runs — try '{}' first)",
                path.display(),
                if args.log_name == "gateway" {
                    "hermes gateway run"
                } else {
                    "hermes chat"
                }
            ),
        );
    };
    let text = String::from_utf8_lossy(&text);
    let shown: Vec<&str> = {
        let kept = filter.records(text.lines());
        kept[kept.len().saturating_sub(args.lines)..].to_vec()
    };
    let mut labels = Vec::new();
    if let Some(l) = &args.level {
        labels.push(format!("level>={}", l.to_ascii_uppercase()));
    }
    if let Some(s) = &args.session {
        labels.push(format!("session={s}"));
    }
    if let Some(c) = &args.component {
        labels.push(format!("component={c}"));
    }
    if let Some(s) = &args.since {
        labels.push(format!("since={s}"));
    }
    let labels = if labels.is_empty() {
        String::new()
    } else {
        format!(" [{}]", labels.join(", "))
    };
    let tail = if args.follow {
        "(Ctrl+C to stop)".to_owned()
    } else {
        format!("(last {})", args.lines)
    };
    writeln!(out, "--- {}{labels} {tail} ---", path.display())?;
    for line in shown {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    if args.follow {
        follow(&path, &filter, &mut out)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints lines appended to `path` until interrupted (a rotated file is reopened).
fn follow(path: &Path, filter: &Filter, out: &mut impl Write) -> Result<()> {
    let mut offset = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let mut partial = String::new();
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let Ok(mut file) = std::fs::File::open(path) else {
            continue;
        };
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if len < offset {
            offset = 0;
        }
        if len == offset {
            continue;
        }
        file.seek(SeekFrom::Start(offset))?;
        let mut chunk = Vec::new();
        file.read_to_end(&mut chunk)?;
        offset += chunk.len() as u64;
        partial.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = partial.find('\n') {
            let line: String = partial.drain(..=end).collect();
            let line = line.trim_end_matches('\n');
            if !filter.active() || filter.keeps(line) {
                writeln!(out, "{line}")?;
            }
        }
        out.flush()?;
    }
}

fn list(out: &mut impl Write, dir: &Path) -> Result<ExitCode> {
    writeln!(out, "Log files in {}:\n", dir.display())?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.to_string_lossy().contains(".log"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    if files.is_empty() {
        writeln!(
            out,
            "  (no log files yet — run 'hermes chat' to generate logs)"
        )?;
    }
    let now = SystemTime::now();
    for path in files {
        let meta = std::fs::metadata(&path)?;
        let size = meta.len();
        let size = if size < 1024 {
            format!("{size}B")
        } else if size < 1024 * 1024 {
            format!("{:.1}KB", size as f64 / 1024.0)
        } else {
            format!("{:.1}MB", size as f64 / (1024.0 * 1024.0))
        };
        let age = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .map_or_else(String::new, |d| match d.as_secs() {
                s if s < 60 => "just now".to_owned(),
                s if s < 3600 => format!("{}m ago", s / 60),
                s if s < 86_400 => format!("{}h ago", s / 3600),
                s => format!("{}d ago", s / 86_400),
            });
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        writeln!(out, "  {name:<25} {size:>8}   {age}")?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_records_continuation_lines_go_with_it() {
        let text = "2026-01-01 10:00:01,123 ERROR [s1] agent: failed\n  → fix it\n\
                    2026-01-01 10:00:02,123 INFO [s2] agent: fine\n  more of s2\n";
        let f = Filter {
            session: Some("s1".into()),
            ..Filter::default()
        };
        assert_eq!(
            f.records(text.lines()),
            [
                "2026-01-01 10:00:01,123 ERROR [s1] agent: failed",
                "  → fix it"
            ]
        );
    }

    #[test]
    fn filters_by_level_session_component_and_age() {
        let line = "2026-01-01 10:00:01,123 WARNING [sess_abc] tools.terminal: slow";
        let mut f = Filter {
            min_level: Some(2),
            ..Filter::default()
        };
        assert!(f.keeps(line));
        assert!(!f.keeps("2026-01-01 10:00:01,123 INFO [s] agent: hi"));
        assert!(f.keeps("  continuation of a traceback"));
        f.session = Some("sess_ab".into());
        assert!(f.keeps(line));
        f.session = Some("other".into());
        assert!(!f.keeps(line));
        let tools = Filter {
            component: Some(&["tools"]),
            ..Filter::default()
        };
        assert!(tools.keeps(line));
        assert!(!tools.keeps("2026-01-01 10:00:01,123 INFO [s] agent: hi"));
        let cutoff = parse_stamp(("2026-01-01", "10:00:00,000")).unwrap();
        let recent = Filter {
            since_unix: Some(cutoff),
            ..Filter::default()
        };
        assert!(recent.keeps(line));
        assert!(!recent.keeps("2025-12-31 23:59:59,000 INFO agent: old"));
    }

    #[test]
    fn since_values() {
        assert_eq!(parse_since("30m"), Some(Duration::from_secs(1800)));
        assert_eq!(parse_since("2D"), Some(Duration::from_secs(172_800)));
        assert_eq!(parse_since("5x"), None);
        assert_eq!(parse_since("h"), None);
    }
}
