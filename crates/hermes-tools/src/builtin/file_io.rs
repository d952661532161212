//! The file tools' view of the files: the host's disk, or the session's
//! environment (`terminal.backend`: sandbox, ssh) through commands run in
//! it, so `write_file` writes where the model's commands will look. The
//! tools' logic (guards, encodings, fuzzy patching) is the same for both.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hermes_env::Environment;
use hermes_env::files::{self, Kind};

use super::write_file::fsio;
use crate::ToolContext;

/// Reading and replacing whole files.
pub(crate) trait FileIo: Send + Sync {
    /// What `path` is; `None` when it does not exist.
    fn kind(&self, path: &Path) -> io::Result<Option<Kind>>;
    /// Its bytes.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// Replaces it atomically; `true` when its directory had to be created.
    fn write(&self, path: &Path, bytes: &[u8]) -> io::Result<bool>;
    /// Removes it (a missing file is fine).
    fn remove(&self, path: &Path) -> io::Result<()>;
}

/// The host's disk.
pub(crate) struct HostIo;

impl FileIo for HostIo {
    fn kind(&self, path: &Path) -> io::Result<Option<Kind>> {
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => Ok(Some(Kind::Dir)),
            Ok(_) => Ok(Some(Kind::File)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    fn write(&self, path: &Path, bytes: &[u8]) -> io::Result<bool> {
        let created = fsio::ensure_parent(path)?;
        fsio::atomic_write(path, bytes)?;
        Ok(created)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}

/// Files inside an environment, from a blocking thread (the tools run their
/// file work in `spawn_blocking`).
pub(crate) struct EnvIo {
    env: Arc<dyn Environment>,
    cwd: PathBuf,
    runtime: tokio::runtime::Handle,
}

impl FileIo for EnvIo {
    fn kind(&self, path: &Path) -> io::Result<Option<Kind>> {
        self.runtime
            .block_on(files::stat(self.env.as_ref(), path, &self.cwd))
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.runtime
            .block_on(files::read(self.env.as_ref(), path, &self.cwd))
    }

    fn write(&self, path: &Path, bytes: &[u8]) -> io::Result<bool> {
        self.runtime
            .block_on(files::write(self.env.as_ref(), path, bytes, &self.cwd))
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        self.runtime
            .block_on(files::remove(self.env.as_ref(), path, &self.cwd))
    }
}

/// The file view for a tool call in `ctx` (call from the async side).
pub(crate) fn for_context(ctx: &ToolContext) -> Arc<dyn FileIo> {
    if ctx.env.is_host() {
        return Arc::new(HostIo);
    }
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => Arc::new(EnvIo {
            env: ctx.env.clone(),
            cwd: ctx.cwd.clone(),
            runtime,
        }),
        // Without a runtime there is no environment to reach; never the host instead.
        Err(_) => Arc::new(Unreachable),
    }
}

/// A view that refuses everything (no runtime to reach the environment).
struct Unreachable;

impl FileIo for Unreachable {
    fn kind(&self, _: &Path) -> io::Result<Option<Kind>> {
        Err(io::Error::other(
            "the terminal environment cannot be reached",
        ))
    }
    fn read(&self, _: &Path) -> io::Result<Vec<u8>> {
        Err(io::Error::other(
            "the terminal environment cannot be reached",
        ))
    }
    fn write(&self, _: &Path, _: &[u8]) -> io::Result<bool> {
        Err(io::Error::other(
            "the terminal environment cannot be reached",
        ))
    }
    fn remove(&self, _: &Path) -> io::Result<()> {
        Err(io::Error::other(
            "the terminal environment cannot be reached",
        ))
    }
}

/// A file's text for editing, read through `io`.
pub(crate) fn read_text(io: &dyn FileIo, path: &Path) -> Result<fsio::TextFile, String> {
    let bytes = io.read(path).map_err(|e| fsio::describe_io(path, &e))?;
    fsio::text_from_bytes(path, bytes)
}
