//! `goalkeeper mcp`: the MCP server on stdio. Only JSON-RPC goes to
//! stdout; failures are logged to stderr.

use clap::{Args, ValueEnum};
use goalkeeper::Error;
use goalkeeper::integrations::claude_code::session_pointer;
use goalkeeper::integrations::gemini_cli;
use goalkeeper::integrations::mcp::{McpServer, serve};

use super::{Context, Outcome};

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Follow the session another integration last recorded for the current
    /// directory, instead of --session (which stays the fallback)
    #[arg(long, value_enum, value_name = "HOST")]
    session_from: Option<SessionSource>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SessionSource {
    /// The Claude Code session the hooks last saw in this directory
    ClaudeCode,
    /// The Gemini CLI session the hooks last saw in this directory
    GeminiCli,
}

pub fn run(ctx: &Context, args: McpArgs) -> Result<Outcome, Error> {
    let settings = ctx.settings()?;
    // Opened up front so a bad --db fails before the client connects.
    let store = ctx.store()?;
    let mut server = McpServer::new(store, ctx.session.clone(), settings)?
        // Per call, so timestamps move while the server runs.
        .with_clock(super::now_ms)
        .with_log(|line| super::write_stderr_as("goalkeeper mcp", format_args!("{line}")));
    if let Some(source) = args.session_from {
        let cwd = std::env::current_dir().map_err(|source| Error::Io {
            what: "cannot read the current directory".into(),
            source,
        })?;
        let cwd = cwd.display().to_string();
        server = server.with_session_pointer(match source {
            SessionSource::ClaudeCode => session_pointer(&cwd),
            SessionSource::GeminiCli => gemini_cli::session_pointer(&cwd),
        });
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| Error::Io {
            what: "cannot start the MCP server's runtime".into(),
            source,
        })?;
    let served = runtime.block_on(serve(server, tokio::io::stdin(), tokio::io::stdout()));
    // Do not wait for a stdin read that may never end.
    runtime.shutdown_background();
    served.map(|()| Outcome::Success)
}
