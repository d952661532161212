//! What goes wrong choosing or reaching an environment, in words that say
//! what to do.

/// An environment that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvError {
    /// A backend this build does not have.
    #[error(
        "terminal.backend: {backend} is not available in this build. Available backends: local, \
         sandbox (bubblewrap), ssh, docker. Set terminal.backend in config.yaml (or TERMINAL_ENV) to one \
         of them; commands are not run locally instead."
    )]
    Unavailable {
        /// The configured name.
        backend: String,
    },
    /// A program the backend needs is missing.
    #[error("terminal.backend: {backend} needs `{program}`, which is not installed: {hint}")]
    Missing {
        /// The backend.
        backend: &'static str,
        /// The program.
        program: &'static str,
        /// How to install it.
        hint: &'static str,
    },
    /// The configuration is incomplete.
    #[error("terminal.backend: {0}")]
    Config(String),
    /// The environment could not be reached (a broken SSH connection).
    #[error("{0}")]
    Unreachable(String),
    /// Starting or talking to a process failed.
    #[error("{0}")]
    Io(String),
}
