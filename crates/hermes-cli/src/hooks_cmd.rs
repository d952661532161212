//! `hermes hooks`: the shell hooks configured in config.yaml — list them with
//! their consent state, fire one on a sample payload, revoke an approval,
//! check them all. Also where front-ends load the hooks (asking at a terminal).

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use hermes_session::{Services, Setup};
use hermes_tools::hooks::{
    Allowlist, HookEvent, HookSite, HookSpec, ShellHook, build_payload, parse_shell_response,
    script_mtime,
};
use serde_json::{Map, Value, json};

/// Set from `--accept-hooks` before any command runs.
static ACCEPT_HOOKS: AtomicBool = AtomicBool::new(false);

/// Records the `--accept-hooks` flag.
pub(crate) fn set_accept(accept: bool) {
    ACCEPT_HOOKS.store(accept, Ordering::Relaxed);
}

/// Loads the process's hooks into `services`: approved ones, auto-accepted
/// ones, and — when `ask` and a person is at the terminal — those they approve
/// now. Warnings go to stderr.
pub(crate) fn install(services: &Services, ask: bool) {
    let accept = ACCEPT_HOOKS.load(Ordering::Relaxed);
    let tty = ask && std::io::stdin().is_terminal();
    let mut prompt = |spec: &HookSpec| confirm(spec);
    let asker: Option<&mut dyn FnMut(&HookSpec) -> bool> =
        if tty { Some(&mut prompt) } else { None };
    let loaded = hermes_session::hooks::load_hooks(services.setup(), accept, asker);
    let mut err = std::io::stderr();
    for warning in &loaded.warnings {
        let _ = writeln!(err, "warning: {warning}");
    }
    services.install_hooks(loaded);
}

fn confirm(spec: &HookSpec) -> bool {
    let mut out = std::io::stdout();
    let _ = write!(
        out,
        "\n⚠ Hermes is about to register a shell hook that will run a\n  command on your behalf.\n\n    Event:   {}\n    Command: {}\n\n  Commands run with your full user credentials.  Only approve\n  commands you trust.\n\nAllow this hook to run? [y/N]: ",
        spec.event, spec.command
    );
    let _ = out.flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => {
            let _ = writeln!(out);
            false
        }
        Ok(_) => matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"),
    }
}

/// `hermes hooks` arguments.
#[derive(Debug, Args)]
pub struct HooksArgs {
    #[command(subcommand)]
    action: Option<HooksAction>,
}

#[derive(Debug, Subcommand)]
enum HooksAction {
    /// List the configured shell hooks and whether each is allowed to run.
    #[command(visible_alias = "ls")]
    List,
    /// Run the hooks of EVENT once on a sample payload and show what they answer.
    Test {
        /// The event (pre_tool_call, post_tool_call, pre_llm_call …).
        event: String,
        /// The tool name the payload names (tool events).
        #[arg(long = "for-tool", value_name = "TOOL")]
        for_tool: Option<String>,
        /// A JSON object merged over the sample payload.
        #[arg(long = "payload-file", value_name = "FILE")]
        payload_file: Option<PathBuf>,
    },
    /// Withdraw the approval of COMMAND (every event).
    #[command(visible_aliases = ["remove", "rm"])]
    Revoke {
        /// The command text exactly as in config.yaml.
        command: String,
    },
    /// Check every hook: its script, its approval, whether it answers in JSON.
    Doctor,
}

/// Runs `hermes hooks`.
pub(crate) async fn run(args: HooksArgs, setup: &Setup) -> Result<std::process::ExitCode> {
    inner(args, setup)
        .await
        .map(|()| std::process::ExitCode::SUCCESS)
}

async fn inner(args: HooksArgs, setup: &Setup) -> Result<()> {
    let mut out = std::io::stdout();
    let Some(action) = args.action else {
        writeln!(out, "Usage: hermes hooks {{list|test|revoke|doctor}}")?;
        writeln!(out, "Run 'hermes hooks --help' for details.")?;
        return Ok(());
    };
    let (specs, warnings) = hermes_session::hooks::configured_hooks(setup);
    for w in &warnings {
        writeln!(std::io::stderr(), "warning: {w}")?;
    }
    let root = setup.home.root();
    let home = setup.env.get("HOME").map(PathBuf::from);
    match action {
        HooksAction::List => list(&specs, &Allowlist::load(root), home.as_deref(), &mut out),
        HooksAction::Test {
            event,
            for_tool,
            payload_file,
        } => test(&specs, &event, for_tool, payload_file, home, &mut out).await,
        HooksAction::Revoke { command } => {
            let mut allowlist = Allowlist::load(root);
            let n = allowlist.revoke(&command);
            if n == 0 {
                writeln!(out, "No allowlist entry found for command: {command}")?;
            } else {
                allowlist
                    .save(root)
                    .with_context(|| format!("cannot write {}", Allowlist::path(root).display()))?;
                writeln!(out, "Removed {n} allowlist entry/entries for: {command}")?;
                writeln!(
                    out,
                    "Note: currently running CLI / gateway processes keep their already-registered callbacks until they restart."
                )?;
            }
            Ok(())
        }
        HooksAction::Doctor => doctor(&specs, &Allowlist::load(root), home, &mut out).await,
    }
}

fn list(
    specs: &[HookSpec],
    allowlist: &Allowlist,
    home: Option<&std::path::Path>,
    out: &mut impl Write,
) -> Result<()> {
    if specs.is_empty() {
        writeln!(out, "No shell hooks configured in ~/.hermes/config.yaml.")?;
        writeln!(
            out,
            "Add a `hooks:` mapping (event → list of {{command, matcher, timeout}});"
        )?;
        writeln!(
            out,
            "see `hermes hooks --help` and the README's Hooks section."
        )?;
        return Ok(());
    }
    writeln!(out, "Configured shell hooks ({} total):", specs.len())?;
    writeln!(out)?;
    let mut events: Vec<HookEvent> = specs.iter().map(|s| s.event).collect();
    events.sort_by_key(|e| e.as_str());
    events.dedup();
    for event in events {
        writeln!(out, "  [{event}]")?;
        for spec in specs.iter().filter(|s| s.event == event) {
            let approval = allowlist.find(event.as_str(), &spec.command);
            let matcher = spec
                .matcher
                .as_ref()
                .map(|m| format!(" matcher='{m}'"))
                .unwrap_or_default();
            let state = if approval.is_some() {
                "✓ allowed"
            } else {
                "✗ not allowlisted"
            };
            writeln!(
                out,
                "    - {}{matcher} (timeout={}s, {state})",
                spec.command, spec.timeout_secs
            )?;
            if let Some(a) = approval {
                writeln!(out, "      approved_at: {}", a.approved_at)?;
                if let Some(drift) = drift(a, &spec.command, home) {
                    writeln!(out, "      {drift}")?;
                }
            }
        }
        writeln!(out)?;
    }
    Ok(())
}

fn drift(
    approval: &hermes_tools::hooks::Approval,
    command: &str,
    home: Option<&std::path::Path>,
) -> Option<String> {
    let (was, now) = (
        approval.script_mtime_at_approval.as_ref()?,
        script_mtime(command, home)?,
    );
    (now > *was).then(|| {
        format!(
            "⚠ script modified since approval (was {was}, now {now}) — run `hermes hooks doctor` to re-validate"
        )
    })
}

/// The sample payload `hooks test` sends for `event`.
fn sample_payload(event: HookEvent) -> Map<String, Value> {
    let v = match event {
        HookEvent::PreToolCall => json!({
            "tool_name": "terminal", "args": {"command": "echo hello"},
            "session_id": "test-session", "task_id": "test-task", "tool_call_id": "test-call"}),
        HookEvent::PostToolCall | HookEvent::TransformToolResult => json!({
            "tool_name": "terminal", "args": {"command": "echo hello"},
            "session_id": "test-session", "task_id": "test-task", "tool_call_id": "test-call",
            "result": "{\"output\": \"hello\"}", "duration_ms": 42}),
        HookEvent::PreLlmCall => json!({
            "session_id": "test-session", "user_message": "What is the weather?",
            "conversation_history": [], "is_first_turn": true, "model": "gpt-4", "platform": "cli"}),
        HookEvent::PostLlmCall => {
            json!({"session_id": "test-session", "model": "gpt-4", "platform": "cli"})
        }
        HookEvent::TransformLlmOutput => json!({
            "session_id": "test-session", "response_text": "Hello!", "model": "gpt-4", "platform": "cli"}),
        _ => json!({"session_id": "test-session"}),
    };
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

async fn test(
    specs: &[HookSpec],
    event_name: &str,
    for_tool: Option<String>,
    payload_file: Option<PathBuf>,
    home: Option<PathBuf>,
    out: &mut impl Write,
) -> Result<()> {
    let Some(event) = HookEvent::parse(event_name) else {
        writeln!(out, "Unknown event: '{event_name}'")?;
        writeln!(out, "Valid events: {}", HookEvent::names())?;
        anyhow::bail!("unknown hook event {event_name:?}");
    };
    let mut kwargs = sample_payload(event);
    if let Some(tool) = &for_tool {
        kwargs.insert("tool_name".into(), json!(tool));
    }
    if let Some(file) = &payload_file {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("Error reading payload file {}", file.display()))?;
        match serde_json::from_str::<Value>(&text)
            .with_context(|| format!("Error reading payload file {}", file.display()))?
        {
            Value::Object(custom) => kwargs.extend(custom),
            _ => writeln!(
                out,
                "Warning: {} is not a JSON object; ignoring",
                file.display()
            )?,
        }
    }
    let tool = kwargs
        .get("tool_name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let hooks: Vec<ShellHook> = specs
        .iter()
        .filter(|s| s.event == event)
        .map(|s| ShellHook::new(s.clone(), home.clone()))
        .filter(|h| for_tool.is_none() || !event.is_tool_event() || h.matches(tool.as_deref()))
        .collect();
    if hooks.is_empty() {
        write!(out, "No shell hooks configured for event: {event}")?;
        match &for_tool {
            Some(t) => writeln!(out, " (with matcher filter --for-tool={t})")?,
            None => writeln!(out)?,
        }
        return Ok(());
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let site = HookSite {
        session_id: "test-session",
        cwd: &cwd,
        events: None,
    };
    let payload = build_payload(event, site, kwargs);
    writeln!(out, "Firing {} hook(s) for event '{event}':", hooks.len())?;
    writeln!(out)?;
    for hook in hooks {
        writeln!(out, "  → {}", hook.spec().command)?;
        let run = hook.run(&payload).await;
        if let Some(error) = &run.error {
            writeln!(out, "      ✗ error: {error}")?;
        } else if run.timed_out {
            writeln!(out, "      ✗ timed out after {}s", hook.spec().timeout_secs)?;
        } else {
            let code = run.returncode.map_or("signal".into(), |c| c.to_string());
            writeln!(out, "      exit={code}  elapsed={}s", run.elapsed_secs)?;
        }
        for (label, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
            let text = text.trim();
            if !text.is_empty() {
                writeln!(out, "      {label}: {}", clip(text, 400))?;
            }
        }
        match parse_shell_response(event, &run.stdout) {
            Some(parsed) => writeln!(out, "      parsed (Hermes wire shape): {parsed}")?,
            None => writeln!(
                out,
                "      parsed: <none — hook contributed nothing to the dispatcher>"
            )?,
        }
        writeln!(out)?;
    }
    Ok(())
}

async fn doctor(
    specs: &[HookSpec],
    allowlist: &Allowlist,
    home: Option<PathBuf>,
    out: &mut impl Write,
) -> Result<()> {
    if specs.is_empty() {
        writeln!(out, "No shell hooks configured — nothing to check.")?;
        return Ok(());
    }
    writeln!(out, "Checking {} configured shell hook(s)...", specs.len())?;
    writeln!(out)?;
    let mut problems = 0;
    for spec in specs {
        writeln!(out, "  [{}] {}", spec.event, spec.command)?;
        if script_runs(&spec.command, home.as_deref()) {
            writeln!(out, "      ✓ script exists and is executable")?;
        } else {
            problems += 1;
            writeln!(
                out,
                "      ✗ script missing or not executable (chmod +x the file, or fix the path)"
            )?;
        }
        let Some(approval) = allowlist.find(spec.event.as_str(), &spec.command) else {
            problems += 1;
            writeln!(
                out,
                "      ✗ not allowlisted — hook will NOT fire at runtime (run with --accept-hooks once, or confirm at the TTY prompt)"
            )?;
            writeln!(
                out,
                "      ℹ skipped JSON smoke test — not allowlisted yet."
            )?;
            writeln!(out)?;
            continue;
        };
        writeln!(
            out,
            "      ✓ allowlisted (approved {})",
            approval.approved_at
        )?;
        match drift(approval, &spec.command, home.as_deref()) {
            Some(d) => {
                problems += 1;
                writeln!(out, "      {d}")?;
            }
            None => writeln!(out, "      ✓ script unchanged since approval")?,
        }
        let hook = ShellHook::new(spec.clone(), home.clone());
        let cwd = std::env::current_dir().unwrap_or_default();
        let site = HookSite {
            session_id: "test-session",
            cwd: &cwd,
            events: None,
        };
        let run = hook
            .run(&build_payload(spec.event, site, sample_payload(spec.event)))
            .await;
        let code = run.returncode.map_or("signal".into(), |c| c.to_string());
        if let Some(e) = &run.error {
            problems += 1;
            writeln!(out, "      ✗ could not run: {e}")?;
        } else if run.timed_out {
            problems += 1;
            writeln!(out, "      ✗ timed out after {}s", spec.timeout_secs)?;
        } else if run.stdout.trim().is_empty() {
            writeln!(
                out,
                "      ✓ ran clean with empty stdout (exit={code}, {}s) — hook is observer-only",
                run.elapsed_secs
            )?;
        } else if serde_json::from_str::<Value>(run.stdout.trim()).is_ok() {
            writeln!(
                out,
                "      ✓ produced valid JSON on synthetic payload (exit={code}, {}s)",
                run.elapsed_secs
            )?;
        } else {
            problems += 1;
            writeln!(
                out,
                "      ✗ stdout was not valid JSON (exit={code}, {}s): {}",
                run.elapsed_secs,
                clip(run.stdout.trim(), 120)
            )?;
        }
        writeln!(out)?;
    }
    if problems == 0 {
        writeln!(out, "All shell hooks look healthy.")?;
    } else {
        writeln!(
            out,
            "{problems} issue(s) found.  Fix before relying on these hooks."
        )?;
    }
    Ok(())
}

/// Whether the command's program (or script, when an interpreter runs it) is there to run.
fn script_runs(command: &str, home: Option<&std::path::Path>) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(words) = shlex::split(command) else {
        return false;
    };
    let Some(first) = words.first() else {
        return false;
    };
    let first = hermes_tools::hooks::expand_tilde_path(first, home);
    if first.components().count() == 1 {
        // A bare program name: look it up on PATH.
        let name = first.display().to_string();
        let on_path = std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(&name).is_file()));
        if !on_path {
            return false;
        }
        return match hermes_tools::hooks::script_path(command, home) {
            Some(script) if script.components().count() > 1 => script.is_file(),
            _ => true,
        };
    }
    std::fs::metadata(&first).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}...")
}
