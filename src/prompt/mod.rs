//! Prompt text: sanitizing what goes into prompts.

pub mod sanitize;
