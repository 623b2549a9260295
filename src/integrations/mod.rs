//! Adapters that wire goalkeeper into real agents.

pub mod claude_code;
