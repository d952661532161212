//! A job's script, as the reference runs it: only from `HERMES_HOME/scripts/`
//! (`.sh`/`.bash` with bash, anything else with Python), with the provider
//! keys kept out of its environment, a timeout, and secrets redacted from
//! what it prints. Its output either feeds the agent's prompt or, for a
//! `no_agent` job, is the answer itself; a last line `{"wakeAgent": false}`
//! skips the run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

/// How long a script may run unless configured (the reference's hour).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3600);

/// The script a job names, when it lies inside `HERMES_HOME/scripts/`.
pub fn resolve(
    hermes_home: &Path,
    script: &str,
    user_home: Option<&Path>,
) -> Result<PathBuf, String> {
    let dir = hermes_home.join("scripts");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let dir = dir.canonicalize().map_err(|e| e.to_string())?;
    let raw = match (script.strip_prefix("~/"), user_home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(script),
    };
    let candidate = if raw.is_absolute() {
        raw
    } else {
        dir.join(raw)
    };
    let path = candidate
        .canonicalize()
        .map_err(|_| format!("Script not found: {}", candidate.display()))?;
    if !path.starts_with(&dir) {
        return Err(format!(
            "Blocked: script path resolves outside the scripts directory ({}): {script:?}",
            dir.display()
        ));
    }
    if !path.is_file() {
        return Err(format!("Script path is not a file: {}", path.display()));
    }
    Ok(path)
}

/// Runs `path`; `Ok(stdout)` when it exits 0, else the reason with what it
/// printed. `cwd` defaults to the script's directory; `hidden` variables are
/// removed from its environment.
pub async fn run(
    path: &Path,
    cwd: Option<&Path>,
    timeout: Duration,
    hidden: &[String],
) -> Result<String, String> {
    let is_shell = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("sh") || e.eq_ignore_ascii_case("bash"));
    let mut command = tokio::process::Command::new(if is_shell { "bash" } else { "python3" });
    command
        .arg(path)
        .current_dir(cwd.or_else(|| path.parent()).unwrap_or(Path::new("/")))
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    for name in hidden {
        command.env_remove(name);
    }
    let child = command.output();
    let output = match tokio::time::timeout(timeout, child).await {
        Err(_) => {
            return Err(format!(
                "Script timed out after {}s: {}",
                timeout.as_secs(),
                path.display()
            ));
        }
        Ok(Err(e)) => return Err(format!("Script execution failed: {e}")),
        Ok(Ok(output)) => output,
    };
    let clean =
        |bytes: &[u8]| hermes_llm::redact::redact_secrets(String::from_utf8_lossy(bytes).trim());
    let (stdout, stderr) = (clean(&output.stdout), clean(&output.stderr));
    if output.status.success() {
        return Ok(stdout);
    }
    let mut parts = vec![format!(
        "Script exited with code {}",
        output
            .status
            .code()
            .map_or("signal".to_owned(), |c| c.to_string())
    )];
    if !stderr.is_empty() {
        parts.push(format!("stderr:\n{stderr}"));
    }
    if !stdout.is_empty() {
        parts.push(format!("stdout:\n{stdout}"));
    }
    Err(parts.join("\n"))
}

/// Whether a script's output lets the agent run: anything but a last line
/// of JSON saying `"wakeAgent": false`.
pub fn wakes_agent(output: &str) -> bool {
    let Some(last) = output.lines().rev().find(|l| !l.trim().is_empty()) else {
        return true;
    };
    match serde_json::from_str::<Value>(last.trim()) {
        Ok(Value::Object(gate)) => gate.get("wakeAgent") != Some(&Value::Bool(false)),
        _ => true,
    }
}

/// The script timeout: `HERMES_CRON_SCRIPT_TIMEOUT`, else
/// `cron.script_timeout_seconds`, else an hour.
pub fn timeout(env: Option<&str>, config: &Value) -> Duration {
    let positive = |v: f64| (v.is_finite() && v >= 1.0).then(|| Duration::from_secs(v as u64));
    env.and_then(|v| v.trim().parse::<f64>().ok())
        .and_then(positive)
        .or_else(|| {
            let v = config.pointer("/cron/script_timeout_seconds")?;
            v.as_f64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                .and_then(positive)
        })
        .unwrap_or(DEFAULT_TIMEOUT)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_wake_gate_reads_the_last_line() {
        assert!(wakes_agent(""));
        assert!(wakes_agent("disk at 91%"));
        assert!(!wakes_agent("checked\n{\"wakeAgent\": false}\n\n"));
        assert!(wakes_agent("{\"wakeAgent\": true}"));
        assert!(wakes_agent("{\"wakeAgent\": false}\nmore"));
    }

    #[test]
    fn scripts_stay_inside_the_scripts_directory() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("scripts")).unwrap();
        std::fs::write(home.path().join("scripts/ok.sh"), "echo hi").unwrap();
        std::fs::write(home.path().join("evil.sh"), "echo no").unwrap();
        assert!(resolve(home.path(), "ok.sh", None).is_ok());
        let outside = resolve(home.path(), "../evil.sh", None).unwrap_err();
        assert!(outside.starts_with("Blocked"), "{outside}");
        let absolute = home.path().join("evil.sh").display().to_string();
        assert!(
            resolve(home.path(), &absolute, None)
                .unwrap_err()
                .starts_with("Blocked")
        );
        assert!(
            resolve(home.path(), "missing.py", None)
                .unwrap_err()
                .starts_with("Script not found")
        );
    }

    #[tokio::test]
    async fn a_script_runs_without_hidden_variables_and_times_out() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("scripts");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("env.sh"),
            "echo \"key=${PATH_NOT_SECRET:-none}\"; echo \"home=$HOME\" >/dev/null",
        )
        .unwrap();
        let out = run(
            &dir.join("env.sh"),
            None,
            Duration::from_secs(20),
            &["PATH_NOT_SECRET".into()],
        )
        .await
        .unwrap();
        assert_eq!(out, "key=none");
        std::fs::write(dir.join("fail.sh"), "echo partial; echo oops >&2; exit 3").unwrap();
        let err = run(&dir.join("fail.sh"), None, Duration::from_secs(20), &[])
            .await
            .unwrap_err();
        assert_eq!(
            err,
            "Script exited with code 3\nstderr:\noops\nstdout:\npartial"
        );
        std::fs::write(dir.join("slow.sh"), "sleep 5").unwrap();
        let err = run(&dir.join("slow.sh"), None, Duration::from_secs(1), &[])
            .await
            .unwrap_err();
        assert!(err.starts_with("Script timed out after 1s"), "{err}");
    }
}
