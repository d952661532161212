//! Runs real Python scripts against fake tools (needs `python3` on PATH).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use hermes_protocol::{Event, ToolOutcome, ToolSchema};
use hermes_tools::{Registry, Tool, ToolContext, ToolResult};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::*;

/// Answers like `terminal` without running anything; optionally fires a token.
struct FakeTool {
    name: &'static str,
    fire: Option<CancellationToken>,
}

impl Tool for FakeTool {
    fn name(&self) -> &str {
        self.name
    }
    fn toolset(&self) -> &str {
        "test"
    }
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: self.name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
        }
    }
    fn call<'a>(&'a self, args: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            if let Some(token) = &self.fire {
                token.cancel();
            }
            // Pretty-printed on purpose: results must still travel as one line.
            Ok(serde_json::to_string_pretty(&json!({
                "output": format!("ran {}", args["command"].as_str().unwrap_or("?")),
                "exit_code": 0,
                "args": args,
            }))
            .unwrap())
        })
    }
}

struct Run {
    result: Value,
    events: Vec<Event>,
}

async fn run_with(code: &str, settings: CodeExecSettings, fire: bool) -> Run {
    let work = tempfile::tempdir().unwrap();
    let mut ctx = ToolContext::new(work.path(), "s1");
    let mut registry = Registry::new();
    registry.register(Arc::new(FakeTool {
        name: "terminal",
        fire: fire.then(|| ctx.cancel.clone()),
    }));
    registry.register(Arc::new(FakeTool {
        name: "memory",
        fire: None,
    }));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    ctx.events = Some(tx);
    ctx.registry = Some(registry.clone());
    let tool = ExecuteCodeTool::new(registry.names().map(str::to_owned), settings);
    let text = tool.call(json!({ "code": code }), &ctx).await.unwrap();
    drop(ctx);
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    Run {
        result: serde_json::from_str(&text).unwrap(),
        events,
    }
}

async fn run(code: &str) -> Run {
    run_with(code, CodeExecSettings::default(), false).await
}

#[tokio::test]
async fn a_script_gets_parsed_json_back_and_calls_show_as_nested_events() {
    let r = run("from hermes_tools import terminal\nr = terminal('echo hi')\nprint(r['output'], r['exit_code'])\n").await;
    assert_eq!(r.result["status"], "success", "{}", r.result);
    assert_eq!(r.result["output"], "ran echo hi 0\n");
    assert_eq!(r.result["tool_calls_made"], 1);
    assert_eq!(r.result["exit_code"], 0);
    assert_eq!(r.result["stdout_truncated"], false);
    assert!(r.result.get("error").is_none());
    let nested: Vec<&Event> = r
        .events
        .iter()
        .map(|e| match e {
            Event::Nested { origin, inner } if origin == "execute_code" => inner.as_ref(),
            other => panic!("unexpected event {other:?}"),
        })
        .collect();
    assert!(
        matches!(nested[0], Event::ToolStarted { name, arguments, .. }
        if name == "terminal" && arguments.contains("echo hi"))
    );
    assert!(
        matches!(nested[1], Event::ToolFinished { name, outcome: ToolOutcome::Ok, .. }
        if name == "terminal")
    );
    assert_eq!(nested.len(), 2);
}

#[tokio::test]
async fn blocked_terminal_parameters_are_stripped() {
    let r = run("import hermes_tools\nr = hermes_tools._call('terminal', {'command': 'x', 'background': True, 'pty': True})\nprint(sorted(r['args']))\n").await;
    assert_eq!(r.result["output"], "['command']\n", "{}", r.result);
}

#[tokio::test]
async fn a_tool_outside_the_allow_list_gets_the_reference_error() {
    let r = run("import hermes_tools\nprint(hermes_tools._call('memory', {'action': 'add'})['error'])\nprint(hermes_tools._call('delegate_task', {})['error'])\n").await;
    assert_eq!(
        r.result["output"],
        "Tool 'memory' is not available in execute_code. Available: terminal\n\
         Tool 'delegate_task' is not available in execute_code. Available: terminal\n",
        "{}",
        r.result
    );
    assert_eq!(r.result["tool_calls_made"], 0);
    assert!(r.events.is_empty());
}

#[tokio::test]
async fn a_wrong_token_is_refused() {
    let r = run("import os, hermes_tools\nos.environ['HERMES_RPC_TOKEN'] = 'guess'\nprint(hermes_tools.terminal('x')['error'])\n").await;
    assert_eq!(
        r.result["output"], "Unauthorized RPC request\n",
        "{}",
        r.result
    );
    assert_eq!(r.result["tool_calls_made"], 0);
}

#[tokio::test]
async fn calls_past_the_limit_are_refused() {
    let settings = CodeExecSettings {
        max_tool_calls: 2,
        ..CodeExecSettings::default()
    };
    let code = "from hermes_tools import terminal\nfor i in range(3):\n    r = terminal(f'echo {i}')\n    print(r.get('output') or r.get('error'))\n";
    let r = run_with(code, settings, false).await;
    assert_eq!(
        r.result["output"],
        "ran echo 0\nran echo 1\nTool call limit reached (2). No more tool calls allowed in this execution.\n",
        "{}",
        r.result
    );
    assert_eq!(r.result["tool_calls_made"], 2);
}

#[tokio::test]
async fn long_stdout_keeps_head_and_tail_with_the_reference_notice() {
    let r = run("import sys\nsys.stdout.write('a' * 30000 + 'b' * 30000 + 'END')\n").await;
    let out = r.result["output"].as_str().unwrap();
    let expected = format!(
        "{}\n\n... [OUTPUT TRUNCATED - 10,003 bytes omitted out of 60,003 total] ...\n\n{}END",
        "a".repeat(20_000),
        "b".repeat(29_997)
    );
    // Head: the first 20,000 bytes; tail: the last 30,000.
    assert_eq!(out.len(), expected.len());
    assert!(out == expected, "output differs from the head/tail layout");
    assert_eq!(r.result["stdout_truncated"], true);
    assert_eq!(r.result["stdout_bytes_captured"], 50_000);
    assert_eq!(r.result["stdout_bytes_total"], 60_003);
    assert_eq!(r.result["stdout_bytes_omitted"], 10_003);
    assert!(
        r.result["warning"]
            .as_str()
            .unwrap()
            .starts_with("execute_code stdout was truncated")
    );
}

#[tokio::test]
async fn stderr_is_capped_and_a_failing_script_reports_an_error() {
    let r = run("import sys\nsys.stderr.write('e' * 20000)\nsys.exit(3)\n").await;
    assert_eq!(r.result["status"], "error");
    assert_eq!(r.result["exit_code"], 3);
    assert_eq!(r.result["error"].as_str().unwrap(), "e".repeat(10_000));
    assert_eq!(
        r.result["output"].as_str().unwrap(),
        format!("\n--- stderr ---\n{}", "e".repeat(10_000))
    );
}

#[tokio::test]
async fn a_traceback_reaches_the_model() {
    let r = run("print('before')\nraise ValueError('boom')\n").await;
    assert_eq!(r.result["status"], "error");
    let out = r.result["output"].as_str().unwrap();
    assert!(
        out.starts_with("before\n\n--- stderr ---\nTraceback"),
        "{out}"
    );
    assert!(out.contains("ValueError: boom"), "{out}");
}

#[tokio::test]
async fn an_endless_loop_is_killed_at_the_timeout() {
    let settings = CodeExecSettings {
        timeout_secs: 2.0,
        ..CodeExecSettings::default()
    };
    let r = run_with(
        "print('spinning', flush=True)\nwhile True:\n    pass\n",
        settings,
        false,
    )
    .await;
    assert_eq!(r.result["status"], "timeout", "{}", r.result);
    assert_eq!(
        r.result["error"],
        "Script timed out after 2s and was killed."
    );
    assert_eq!(
        r.result["output"],
        "spinning\n\n\n⏰ Script timed out after 2s and was killed."
    );
}

#[tokio::test]
async fn an_interrupt_kills_the_script() {
    // The fake terminal fires the turn's cancel token, as a user's Ctrl+C would.
    let code = "from hermes_tools import terminal\nprint('started', flush=True)\nterminal('x')\nimport time\nwhile True:\n    time.sleep(0.05)\n";
    let r = run_with(code, CodeExecSettings::default(), true).await;
    assert_eq!(r.result["status"], "interrupted", "{}", r.result);
    assert_eq!(
        r.result["output"],
        "started\n\n[execution interrupted — user sent a new message]"
    );
}

#[tokio::test]
async fn secrets_never_reach_the_script_environment() {
    let r = run("import os\nprint(sorted(k for k in os.environ if 'KEY' in k or 'TOKEN' in k and k != 'HERMES_RPC_TOKEN'))\nprint(os.environ['PYTHONPATH'].split(':')[0].rsplit('/', 1)[-1].startswith('hermes_sandbox_'))\n").await;
    assert_eq!(r.result["output"], "[]\nTrue\n", "{}", r.result);
    let env = child_env(
        [
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("PATH", "/bin"),
            ("HERMES_TIMEZONE", "Europe/Paris"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned())),
        std::path::Path::new("/tmp/stage"),
        std::path::Path::new("/tmp/stage/rpc.sock"),
        "tok",
    );
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("ANTHROPIC_API_KEY"), None);
    assert_eq!(get("HERMES_TIMEZONE"), None);
    assert_eq!(get("TZ"), Some("Europe/Paris"));
    assert_eq!(get("PYTHONPATH"), Some("/tmp/stage"));
    assert_eq!(get("HERMES_RPC_TOKEN"), Some("tok"));
}

#[tokio::test]
async fn project_mode_runs_in_the_session_directory_and_strict_mode_does_not() {
    let work = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(work.path(), "s1");
    let code = json!({"code": "import os\nprint(os.getcwd())\n"});
    let project = ExecuteCodeTool::new([], CodeExecSettings::default());
    let out: Value =
        serde_json::from_str(&project.call(code.clone(), &ctx).await.unwrap()).unwrap();
    let here = work.path().canonicalize().unwrap();
    assert_eq!(out["output"], format!("{}\n", here.display()));
    let strict = ExecuteCodeTool::new(
        [],
        CodeExecSettings {
            mode: ExecMode::Strict,
            ..CodeExecSettings::default()
        },
    );
    let out: Value = serde_json::from_str(&strict.call(code, &ctx).await.unwrap()).unwrap();
    assert_ne!(out["output"], format!("{}\n", here.display()));
}

#[tokio::test]
async fn empty_code_is_a_model_error() {
    let ctx = ToolContext::new(".", "s1");
    let tool = ExecuteCodeTool::new([], CodeExecSettings::default());
    let err = tool.call(json!({"code": "  "}), &ctx).await.unwrap_err();
    assert_eq!(err.to_string(), "No code provided.");
}
