//! The built-in local tools.

pub mod clarify;
pub(crate) mod file_io;
pub mod holographic;
pub mod memory;
pub mod patch;
pub mod process;
pub mod read_file;
pub mod search_files;
pub mod session_search;
pub mod skills;
pub mod terminal;
pub mod todo;
pub mod write_file;

use std::sync::Arc;

use crate::Tool;

/// Every built-in tool, freshly constructed (per-session state such as the todo list starts empty).
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(terminal::TerminalTool),
        Arc::new(process::ProcessTool),
        Arc::new(read_file::ReadFileTool),
        Arc::new(write_file::WriteFileTool),
        Arc::new(patch::PatchTool),
        Arc::new(search_files::SearchFilesTool),
        Arc::new(todo::TodoTool::default()),
        Arc::new(clarify::ClarifyTool),
        Arc::new(skills::SkillsListTool),
        Arc::new(skills::SkillViewTool),
        Arc::new(skills::SkillManageTool),
    ]
}
