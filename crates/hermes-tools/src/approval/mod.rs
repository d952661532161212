//! Dangerous-command detection and the approval gate the `terminal` tool
//! passes every command through before running it.
//!
//! Detection ([`classify`]) is pure: a command is [`Verdict::Safe`],
//! [`Verdict::Dangerous`] (runs only with approval, `--yolo` or
//! `approvals.mode: off`) or [`Verdict::Hardline`] (never runs through the agent).
//! The gate ([`ApprovalGate`]) adds policy: session/permanent allowlists and an
//! injectable [`Approver`] that asks a person when one is present.

mod awk;
mod commands;
mod detect;
mod disks;
mod embedded;
mod env_files;
mod expand;
mod floor;
mod gate;
mod git;
mod interp;
mod normalize;
pub mod parse;
mod patterns;
mod pipeline;
mod remote;
mod scripts;
mod syntax;
mod wrappers;

pub use detect::{PARSER_LIMIT, classify, classify_on, classify_with_home};
pub use env_files::EnvFiles;
pub use gate::{
    ApprovalChoice, ApprovalGate, ApprovalMode, ApprovalRequest, Approver, DEFAULT_TIMEOUT,
    Decision, Presence, blocked_json,
};
pub use normalize::normalize;

/// What the gate may look at on the machine a command is about to run on:
/// the scripts it runs, the files a glob in its command word names.
#[derive(Clone, Default)]
pub struct Host {
    /// The user's home directory (`~`).
    pub home: Option<std::path::PathBuf>,
    /// The directory the command starts in.
    pub cwd: Option<std::path::PathBuf>,
    /// The `$PATH` directories the shell searches for a command word.
    pub path: Vec<std::path::PathBuf>,
    /// How its files are read when they are not this machine's (an SSH
    /// host, a container); `None`: this machine's disk.
    pub files: Option<std::sync::Arc<dyn HostFiles>>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("home", &self.home)
            .field("cwd", &self.cwd)
            .field("path", &self.path)
            .field("remote", &self.files.is_some())
            .finish()
    }
}

impl PartialEq for Host {
    fn eq(&self, other: &Self) -> bool {
        self.home == other.home
            && self.cwd == other.cwd
            && self.path == other.path
            && self.files.is_some() == other.files.is_some()
    }
}

impl Host {
    /// A host view with `home`, starting in `cwd`, searching `path`.
    pub fn new(
        home: Option<std::path::PathBuf>,
        cwd: Option<std::path::PathBuf>,
        path: Vec<std::path::PathBuf>,
    ) -> Self {
        Self {
            home,
            cwd,
            path,
            files: None,
        }
    }

    /// The view of another machine whose files `files` reads.
    pub fn remote(
        home: Option<std::path::PathBuf>,
        cwd: Option<std::path::PathBuf>,
        files: std::sync::Arc<dyn HostFiles>,
    ) -> Self {
        Self {
            home,
            cwd,
            path: Vec::new(),
            files: Some(files),
        }
    }
}

/// A file as the gate found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostFile {
    /// Its bytes (it was no larger than asked).
    Bytes(Vec<u8>),
    /// There is nothing there.
    Missing,
    /// Something that is not a regular file.
    NotFile,
    /// Larger than the gate reads.
    TooLarge,
    /// It could not be read.
    Unreadable,
}

/// Reading another machine's files for the gate (blocking: only scripts a
/// command runs are read, and it runs there right after).
pub trait HostFiles: Send + Sync {
    /// The file at `path`, if it is at most `max` bytes.
    fn read(&self, path: &std::path::Path, max: u64) -> HostFile;
    /// The names in `dir`; `None` when it cannot be listed.
    fn list(&self, dir: &std::path::Path) -> Option<Vec<String>>;
}

/// What detection says about a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing recognised as destructive.
    Safe,
    /// Needs a person's approval (or `--yolo`) before it runs.
    Dangerous {
        /// Why, in the reference's words; also the allowlist key.
        reason: String,
    },
    /// Refused always, even with `--yolo`.
    Hardline {
        /// Why, in the reference's words.
        reason: String,
    },
}

#[cfg(test)]
#[path = "detect_tests.rs"]
mod detect_tests;
#[cfg(test)]
#[path = "fuzz_tests.rs"]
mod fuzz_tests;
#[cfg(test)]
#[path = "gate_tests.rs"]
mod gate_tests;

#[cfg(test)]
#[path = "evasion_tests.rs"]
mod evasion_tests;

#[cfg(test)]
mod spellings;

#[cfg(test)]
#[path = "spelling_tests.rs"]
mod spelling_tests;

#[cfg(test)]
#[path = "wrappers_tests.rs"]
mod wrappers_tests;
