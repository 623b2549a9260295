//! The MCP server (DESIGN.md §9): the `todo` and `goal` tools, and the
//! goal-mode context as a prompt, for one session over newline-delimited
//! JSON-RPC (stdio in `goalkeeper mcp`).
//!
//! A tool call becomes a tool result: the summary as text content (never
//! the list as JSON), a few facts in `_meta`, `isError` when the call was
//! rejected. A rejected or malformed call is a result the model can read
//! and fix, never a JSON-RPC error. Every call is one immediate store transaction, so
//! several servers on one session stay consistent.
//!
//! rmcp reads `tools/call` arguments as a JSON object and answers anything
//! else with an id-less "Invalid request". So that an array or a string gets
//! the engine's own error instead, [`serve`] relays the input line by line
//! and moves non-object arguments into the request's `_meta`, where
//! [`McpServer`] picks them up; any other request rmcp cannot read, the
//! relay answers itself, with the request's id.
//!
//! `server` holds the tools and the prompt outside the protocol, `handler`
//! answers rmcp's requests with them, `relay` stands between the client
//! and rmcp.

mod handler;
mod relay;
mod server;
mod tool_call;

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::error::{Error, Result};
use handler::Handler;

pub use server::{McpServer, SessionSource};

/// Serves `server` over newline-delimited JSON-RPC until `input` ends.
/// Only JSON-RPC goes to `output`. Run it on a current-thread runtime to
/// keep pipelined calls in arrival order.
///
/// Every request gets an answer, with its id whenever the id can be read
/// (DESIGN.md §9): the relay answers what rmcp would drop in silence or
/// answer without the id itself, a line that is not JSON (`-32700`, id
/// null), a line that is not UTF-8 (`-32700`, with the request's id when
/// it can be read), a line over 16 MiB (`-32600`, read to its end in
/// bounded memory), a message that is not a JSON object (`-32600`; a
/// batch gets one error per request in it) and a request that is no MCP
/// message (`-32600`, or `-32602` for its `params`). Its answers and
/// rmcp's go to `output` whole lines at a time, through one writer.
pub async fn serve<R, W>(server: McpServer, input: R, output: W) -> Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (relay_end, rmcp_end) = tokio::io::duplex(64 * 1024);
    let (rmcp_out, rmcp_out_reader) = tokio::io::duplex(64 * 1024);
    let (lines, outgoing) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(relay::write_lines(outgoing, output));
    let forward = tokio::spawn(relay::forward_lines(rmcp_out_reader, lines.clone()));
    let relay = tokio::spawn(relay::relay(input, relay_end, lines));
    let handler = Handler::new(Arc::new(server));
    let result = match handler.serve((rmcp_end, rmcp_out)).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| io_error("the MCP server stopped", e)),
        // The client left before the handshake: nothing to serve.
        Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(io_error("the MCP handshake failed", e)),
    };
    relay.abort();
    // rmcp's side is closed: the forwarder ends, then the writer once every
    // sender is gone, after writing what is left.
    let _ = forward.await;
    let _ = relay.await;
    let _ = writer.await;
    result
}

fn io_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Io {
        what: what.into(),
        source: std::io::Error::other(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;
    use crate::{SessionId, Settings, Store};

    /// A call that panics (here, its clock) still gets its answer, an
    /// error result, and is logged; the server goes on serving. On the
    /// protocol's thread (SQLite) and in the blocking pool (PostgreSQL's
    /// way, [`Store::needs_own_thread`]).
    #[test]
    fn a_panicking_call_is_answered_and_the_server_goes_on() {
        for off_thread in [false, true] {
            panicking_call_is_answered(off_thread);
        }
    }

    fn panicking_call_is_answered(off_thread: bool) {
        let logged = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = Arc::clone(&logged);
        let session = SessionId::parse("s").unwrap();
        let store = Store::open_in_memory().unwrap();
        let mut server = McpServer::new(store, session, Settings::default())
            .unwrap()
            .with_clock(|| panic!("the clock broke"))
            .with_log(move |line| sink.lock().unwrap().push(line.to_owned()));
        server.off_thread = off_thread;
        let requests = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "todo", "arguments": {"op": "view"}}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
        ];
        let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let output = runtime.block_on(async {
            let (mut client, server_end) = tokio::io::duplex(1 << 16);
            let (server_in, server_out) = tokio::io::split(server_end);
            let served = tokio::spawn(serve(server, server_in, server_out));
            client.write_all(input.as_bytes()).await.unwrap();
            let mut lines = BufReader::new(client).lines();
            let mut answers = Vec::new();
            while answers.len() < 3 {
                let line = lines.next_line().await.unwrap().expect("an answer");
                answers.push(serde_json::from_str::<Value>(&line).unwrap());
            }
            drop(lines);
            served.await.unwrap().unwrap();
            answers
        });
        // Off the thread, the ping may be answered while the call runs.
        let by_id = |id: i64| output.iter().find(|a| a["id"] == id).expect("an answer");
        let call = by_id(2);
        assert_eq!(call["result"]["isError"], true);
        assert_eq!(
            call["result"]["content"][0]["text"],
            "goalkeeper failed while running the call: the clock broke"
        );
        assert_eq!(by_id(3), &json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
        assert_eq!(
            *logged.lock().unwrap(),
            ["a tool call panicked: the clock broke"]
        );
    }
}
