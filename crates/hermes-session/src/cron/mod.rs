//! Scheduled jobs, compatible with the reference's `HERMES_HOME/cron/`.

pub mod jobs;
pub mod run;
pub mod schedule;
pub mod tool;
