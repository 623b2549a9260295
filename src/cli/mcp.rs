//! `goalkeeper mcp`: the MCP server on stdio. Only JSON-RPC goes to
//! stdout; failures are logged to stderr.

use clap::Args;
use goalkeeper::integrations::host_session::Host;
use goalkeeper::integrations::mcp::{McpServer, SessionSource, serve};
use goalkeeper::{Error, SessionId};

use super::{Context, Outcome};

#[derive(Debug, Args)]
pub struct McpArgs {}

pub fn run(ctx: &Context, _args: McpArgs) -> Result<Outcome, Error> {
    let settings = ctx.settings()?;
    // Opened up front so a bad --db fails before the client connects.
    let store = ctx.store()?;
    let mut server = McpServer::new(store, ctx.session.clone(), settings)?
        // Per call, so timestamps move while the server runs.
        .with_clock(|| Ok(super::now_ms().unwrap_or_else(|_| goalkeeper::time::system_now_ms())))
        .with_log(|line| super::write_stderr_as("goalkeeper mcp", format_args!("{line}")));
    if let Some(host) = ctx.session_from {
        // Claude Code tells its MCP servers the session they serve.
        let launched = match host {
            Host::ClaudeCode => std::env::var("CLAUDE_CODE_SESSION_ID")
                .ok()
                .and_then(|id| SessionId::parse(&id).ok()),
            _ => None,
        };
        server = server.with_session_source(SessionSource {
            host,
            dir: super::current_dir()?,
            launched,
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
