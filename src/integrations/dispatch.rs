//! Each host's adapter: the one place that maps a [`Host`] to it.

use super::adapter::Adapter;
use super::host_session::Host;
use super::{claude_code, codex, gemini_cli, pi};

impl Host {
    /// The host's adapter.
    pub fn adapter(self) -> &'static dyn Adapter {
        match self {
            Host::ClaudeCode => &claude_code::ClaudeCode,
            Host::GeminiCli => &gemini_cli::GeminiCli,
            Host::Codex => &codex::Codex,
            Host::Pi => &pi::Pi,
        }
    }
}
