//! One command in a container through the Engine API, attached to this
//! process's stdin, stdout and stderr (`hermes __engine-exec`): what `docker
//! exec -i` does, without the docker command line. Variables named with
//! `--env` are passed by name: their values come from this process's
//! environment into the exec's, never onto a command line.

use std::io::{Read, Write};
use std::net::Shutdown;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use super::{API, http, query};

/// The relay's mode word on the command line.
pub const MODE: &str = "__engine-exec";

/// Exit status when the engine could not run the command (as `docker exec`).
const ENGINE_FAILED: i32 = 125;

/// What to run where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exec {
    /// The engine's socket.
    pub socket: PathBuf,
    /// The container.
    pub container: String,
    /// The working directory there.
    pub cwd: Option<String>,
    /// Variables passed by name.
    pub forward: Vec<String>,
    /// The command.
    pub argv: Vec<String>,
}

impl Exec {
    /// The relay's arguments after its mode word.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            "--socket".to_owned(),
            self.socket.display().to_string(),
            "--container".to_owned(),
            self.container.clone(),
        ];
        if let Some(cwd) = &self.cwd {
            args.extend(["--cwd".to_owned(), cwd.clone()]);
        }
        for name in &self.forward {
            args.extend(["--env".to_owned(), name.clone()]);
        }
        args.push("--".to_owned());
        args.extend(self.argv.iter().cloned());
        args
    }

    /// Reads [`Exec::to_args`] back.
    pub fn from_args(args: &[String]) -> Result<Self, String> {
        let mut exec = Exec {
            socket: PathBuf::new(),
            container: String::new(),
            cwd: None,
            forward: Vec::new(),
            argv: Vec::new(),
        };
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let mut value = || it.next().cloned().ok_or(format!("{arg} needs a value"));
            match arg.as_str() {
                "--socket" => exec.socket = PathBuf::from(value()?),
                "--container" => exec.container = value()?,
                "--cwd" => exec.cwd = Some(value()?),
                "--env" => exec.forward.push(value()?),
                "--" => {
                    exec.argv = it.cloned().collect();
                    break;
                }
                other => return Err(format!("unknown argument {other}")),
            }
        }
        if exec.container.is_empty() || exec.argv.is_empty() {
            return Err(
                "usage: __engine-exec --socket S --container C [--cwd D] [--env NAME]… -- COMMAND…"
                    .into(),
            );
        }
        Ok(exec)
    }
}

/// Runs `exec` and returns its exit status (125 when the engine could not).
pub fn run(exec: &Exec) -> i32 {
    match attach(exec) {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "hermes: {e}");
            ENGINE_FAILED
        }
    }
}

fn attach(exec: &Exec) -> Result<i32, String> {
    let env: Vec<String> = exec
        .forward
        .iter()
        .filter_map(|name| std::env::var(name).ok().map(|v| format!("{name}={v}")))
        .collect();
    let mut body = json!({
        "AttachStdin": true, "AttachStdout": true, "AttachStderr": true,
        "Tty": false, "Cmd": exec.argv, "Env": env,
    });
    if let Some(cwd) = &exec.cwd {
        body["WorkingDir"] = json!(cwd);
    }
    let path = format!("{API}/containers/{}/exec", query(&exec.container));
    let made = http::call(&exec.socket, "POST", &path, Some(&body)).map_err(|e| e.to_string())?;
    if made.status != 201 {
        return Err(format!(
            "cannot run in {}: {}",
            exec.container,
            made.message()
        ));
    }
    let id = made.body["Id"].as_str().unwrap_or_default().to_owned();
    let start = format!("{API}/exec/{}/start", query(&id));
    let (mut reader, status) = http::hijack(
        &exec.socket,
        &start,
        &json!({"Detach": false, "Tty": false}),
    )
    .map_err(|e| e.to_string())?;
    if !matches!(status, 101 | 200) {
        return Err(format!(
            "the engine refused to start the command ({status})"
        ));
    }
    let mut writer = reader.get_ref().try_clone().map_err(|e| e.to_string())?;
    std::thread::spawn(move || {
        // Our input goes to the command; at its end, so does the command's.
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut writer);
        let _ = writer.shutdown(Shutdown::Write);
    });
    demux(&mut reader);
    exit_code(exec, &id)
}

/// Copies the engine's framed stream (8-byte headers: stream, size) to
/// stdout and stderr until it ends.
fn demux(reader: &mut impl Read) {
    let (mut out, mut err) = (std::io::stdout(), std::io::stderr());
    let mut header = [0u8; 8];
    let mut payload = Vec::new();
    while reader.read_exact(&mut header).is_ok() {
        let size = u32::from_be_bytes([header[4], header[5], header[6], header[7]]) as usize;
        payload.resize(size, 0);
        if reader.read_exact(&mut payload).is_err() {
            break;
        }
        let sink: &mut dyn Write = if header[0] == 2 { &mut err } else { &mut out };
        if sink
            .write_all(&payload)
            .and_then(|()| sink.flush())
            .is_err()
        {
            break;
        }
    }
}

/// The command's exit status, once the engine has it.
fn exit_code(exec: &Exec, id: &str) -> Result<i32, String> {
    let path = format!("{API}/exec/{}/json", query(id));
    for _ in 0..100 {
        let answer = http::call(&exec.socket, "GET", &path, None).map_err(|e| e.to_string())?;
        if answer.body["Running"] != Value::Bool(true)
            && let Some(code) = answer.body["ExitCode"].as_i64()
        {
            return Ok(i32::try_from(code).unwrap_or(ENGINE_FAILED));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err("the engine never reported how the command ended".into())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn arguments_round_trip() {
        let exec = Exec {
            socket: PathBuf::from("/run/podman/podman.sock"),
            container: "hermes-1-default".into(),
            cwd: Some("/workspace".into()),
            forward: vec!["GITHUB_TOKEN".into()],
            argv: vec!["bash".into(), "-c".into(), "echo --env x".into()],
        };
        assert_eq!(Exec::from_args(&exec.to_args()).unwrap(), exec);
        assert!(Exec::from_args(&["--container".into()]).is_err());
    }

    #[test]
    fn frames_go_to_their_streams() {
        let mut framed = Vec::new();
        for (stream, text) in [(1u8, "out"), (2, "err")] {
            framed.extend([stream, 0, 0, 0]);
            framed.extend((text.len() as u32).to_be_bytes());
            framed.extend(text.as_bytes());
        }
        // Reads to the end without a partial frame stopping it early.
        demux(&mut framed.as_slice());
    }
}
