//! Scheduled jobs, compatible with the reference's `HERMES_HOME/cron/`.

pub mod deliver;
pub mod jobs;
pub mod prompt;
pub mod run;
pub mod schedule;
pub mod script;
pub mod tool;
pub mod zone;
