//! The host itself: commands run as the user, where they are.

use std::path::Path;

use crate::{EnvError, Environment};

/// The local host.
#[derive(Debug, Default)]
pub struct Local {
    /// Shells kept running to start commands (a fork of a small bash
    /// instead of a new bash).
    launchers: crate::Launchers,
}

impl Local {
    /// Keeps the variables `names` (credentials) out of every long-lived
    /// shell this environment starts.
    pub fn hiding_env(mut self, names: Vec<String>) -> Self {
        self.launchers = crate::Launchers::hiding(names);
        self
    }
}

impl Environment for Local {
    fn kind(&self) -> &'static str {
        "local"
    }

    fn is_host(&self) -> bool {
        true
    }

    fn command(&self, argv: &[&str], cwd: &Path) -> Result<tokio::process::Command, EnvError> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| EnvError::Io("no command to run".into()))?;
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args).current_dir(cwd);
        Ok(cmd)
    }

    fn launchers(&self) -> Option<&crate::Launchers> {
        Some(&self.launchers)
    }

    fn describe(&self) -> String {
        "local: commands run on this machine as the current user".into()
    }
}
