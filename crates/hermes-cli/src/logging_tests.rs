use hermes_protocol::{Event, ToolOutcome, TurnEnd, Usage};

use super::*;

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn settings(dir: &std::path::Path, level: Level, max_bytes: u64, backups: usize) -> LogSettings {
    LogSettings {
        dir: dir.to_path_buf(),
        level,
        max_bytes,
        backups,
    }
}

fn agent_log(
    dir: &std::path::Path,
    session: &str,
    level: Level,
    max_bytes: u64,
    backups: usize,
) -> AgentLog {
    settings(dir, level, max_bytes, backups).open(session)
}

#[test]
fn tool_calls_statuses_and_nested_calls_become_tagged_lines() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = agent_log(
        dir.path(),
        "20261122_120000_abcdef",
        Level::Info,
        1 << 20,
        3,
    );
    log.record(&Event::ToolStarted {
        call_id: "c1".into(),
        name: "execute_code".into(),
        arguments: "{\"code\": \"print(1)\\nprint(2)\"}".into(),
    });
    log.record(&Event::Nested {
        origin: "execute_code".into(),
        inner: Box::new(Event::ToolStarted {
            call_id: "execute_code_1".into(),
            name: "terminal".into(),
            arguments: "{\"command\":\"echo one\"}".into(),
        }),
    });
    log.record(&Event::TextDelta {
        text: "hello".into(),
    });
    log.record(&Event::ToolFinished {
        call_id: "c2".into(),
        name: "read_file".into(),
        outcome: ToolOutcome::Error,
        result: "{\"error\": \"no such file\"}".into(),
        duration_ms: 3,
    });
    log.record(&Event::Status {
        message: "retrying with key sk-abcdefghijklmnopqrstuvwxyz0123456789".into(),
    });
    log.record(&Event::TurnComplete {
        final_text: "done".into(),
        reason: TurnEnd::Completed,
        usage: Usage::default(),
        api_calls: 2,
    });
    let agent = read(&dir.path().join("agent.log"));
    let lines: Vec<&str> = agent.lines().collect();
    assert_eq!(lines.len(), 5, "{agent}");
    assert!(
        lines
            .iter()
            .all(|l| l.contains(" [20261122_120000_abcdef] ")),
        "{agent}"
    );
    assert!(lines[0].contains("INFO") && lines[0].contains("tools: execute_code called"));
    assert!(
        lines[0].contains("print(1)\\nprint(2)"),
        "one line per record: {}",
        lines[0]
    );
    assert!(lines[1].contains("tools.execute_code: terminal called: {\"command\":\"echo one\"}"));
    assert!(lines[2].contains("WARNING") && lines[2].contains("read_file failed"));
    assert!(
        !agent.contains("abcdefghijklmnopqrstuvwxyz0123456789"),
        "secrets are masked: {agent}"
    );
    assert!(lines[4].contains("turn ended (Completed): 2 API calls"));
    // The timestamp is Python logging's: `YYYY-MM-DD HH:MM:SS,mmm`.
    let stamp = &lines[0][..23];
    assert_eq!(stamp.as_bytes()[10], b' ');
    assert_eq!(stamp.as_bytes()[19], b',');

    let errors = read(&dir.path().join("errors.log"));
    assert_eq!(errors.lines().count(), 1, "{errors}");
    assert!(errors.contains("read_file failed"));
}

#[test]
fn the_level_filters_and_full_files_rotate() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = agent_log(dir.path(), "s", Level::Warning, 200, 2);
    let status = |n: usize| Event::Status {
        message: format!("status {n}"),
    };
    log.record(&status(0));
    assert_eq!(
        read(&dir.path().join("agent.log")),
        "",
        "INFO is below WARNING"
    );
    let mut info = agent_log(dir.path(), "s", Level::Info, 200, 2);
    for n in 0..12 {
        info.record(&status(n));
    }
    let current = read(&dir.path().join("agent.log"));
    assert!(current.len() <= 200, "{}", current.len());
    assert!(current.contains("status 11"));
    assert!(dir.path().join("agent.log.1").is_file());
    assert!(dir.path().join("agent.log.2").is_file());
    assert!(
        !dir.path().join("agent.log.3").exists(),
        "only backup_count files are kept"
    );
}

#[test]
fn levels_parse_like_the_reference_config() {
    assert_eq!(Level::parse("debug"), Some(Level::Debug));
    assert_eq!(Level::parse(" WARNING "), Some(Level::Warning));
    assert_eq!(Level::parse("warn"), Some(Level::Warning));
    assert_eq!(Level::parse("loud"), None);
}

#[test]
fn a_message_of_several_lines_is_written_as_they_are_and_the_gateway_gets_its_own_lines() {
    let dir = tempfile::tempdir().unwrap();
    let files = LogFiles::open(&settings(dir.path(), Level::Info, 1 << 20, 3), true);
    files.write(Level::Error, "s1", "agent", "provider said:\nline two\n");
    files.write(
        Level::Info,
        "",
        "gateway.platforms.telegram",
        "inbound message: platform=telegram chat=42",
    );
    files.record(
        "s2",
        &Event::Status {
            message: "compressing".into(),
        },
    );
    let errors = read(&dir.path().join("errors.log"));
    assert!(
        errors.ends_with("ERROR [s1] agent: provider said:\nline two\n"),
        "real line breaks, as the reference writes them, not a literal \\n: {errors:?}"
    );
    let gateway = read(&dir.path().join("gateway.log"));
    assert_eq!(gateway.lines().count(), 1, "{gateway}");
    assert!(gateway.contains("INFO gateway.platforms.telegram: inbound message"));
    let agent = read(&dir.path().join("agent.log"));
    assert!(agent.contains("inbound message") && agent.contains("[s2] agent: compressing"));
}

#[test]
fn the_terminal_log_follows_the_session_id_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = agent_log(dir.path(), "first", Level::Info, 1 << 20, 3);
    log.record(&Event::SessionChanged {
        session_id: "second".into(),
        reason: "new".into(),
        messages: 0,
    });
    log.record(&Event::Status {
        message: "hello".into(),
    });
    assert!(read(&dir.path().join("agent.log")).contains("[second] agent: hello"));
}
