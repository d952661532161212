//! Shared pieces of the hermes-web integration tests.

pub mod dns;
