//! Adapters that wire goalkeeper into real agents.

pub mod claude_code;
pub mod install;
pub mod statusline;
