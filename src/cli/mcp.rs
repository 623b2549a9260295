//! `goalkeeper mcp`: the MCP server on stdio for the `--session` session.
//! Only JSON-RPC goes to stdout; failures are logged to stderr.

use goalkeeper::integrations::mcp::{McpServer, serve};
use goalkeeper::{Error, Settings};

use super::{Context, Outcome};

pub fn run(ctx: &Context) -> Result<Outcome, Error> {
    // Settings come from `$GOALKEEPER_CONFIG` or the platform file.
    let settings = Settings::load(None, &[])?;
    // Opened up front so a bad --db fails before the client connects.
    let store = ctx.store()?;
    let server = McpServer::new(store, ctx.session.clone(), settings)?
        // Per call, so timestamps move while the server runs.
        .with_clock(super::now_ms)
        .with_log(|line| eprintln!("goalkeeper mcp: {line}"));
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
