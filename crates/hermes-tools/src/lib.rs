//! Tools the model can call: the [`Tool`] trait, the [`Registry`], toolset
//! resolution and the built-in local tools.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod approval;
pub mod builtin;
pub mod checkpoints;
pub mod hooks;
pub mod injection;
pub mod memory_provider;
pub mod paths;
pub mod processes;
mod registry;
mod tool;
pub mod toolsets;
pub mod truncate;
pub mod url_safety;

pub use registry::{Registry, SchemaInterner};
pub use tool::{
    Clarifier, ClientFiles, DynamicTools, Homes, ParallelClass, Tool, ToolContext, ToolError,
    ToolResult, arg_bool, arg_i64, arg_str, declared_schema, error_json, require_str,
};
