//! `goalkeeper mcp`: the MCP server on stdio. Only JSON-RPC goes to
//! stdout; failures are logged to stderr.

use std::io::{Read, Write};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

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
    let served = runtime.block_on(serve(server, StdinThread::start(), SyncStdout));
    // Do not wait for a stdin read that may never end.
    runtime.shutdown_background();
    served.map(|()| Outcome::Success)
}

/// Standard input, read by a thread of its own that hands what it read to
/// the runtime. tokio's `stdin()` starts a blocking-pool task for every
/// read: per request, one more thread switch than this (each costs tens of
/// microseconds on a busy machine; a round trip is 0.2-0.4 ms). At most
/// two reads wait in the channel; the thread then waits too. Each read
/// goes into one 64 KiB buffer and is handed on as a copy of what it read.
/// The thread ends at the end of the input; the process's exit ends it if
/// the server stops first.
struct StdinThread {
    chunks: tokio::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    pending: Vec<u8>,
    at: usize,
}

impl StdinThread {
    fn start() -> StdinThread {
        let (sender, chunks) = tokio::sync::mpsc::channel(2);
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buffer = vec![0; 64 * 1024];
            loop {
                let read = match stdin.read(&mut buffer) {
                    Ok(0) => return,
                    Ok(n) => Ok(buffer[..n].to_vec()),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => Err(e),
                };
                let failed = read.is_err();
                if sender.blocking_send(read).is_err() || failed {
                    return;
                }
            }
        });
        StdinThread {
            chunks,
            pending: Vec::new(),
            at: 0,
        }
    }
}

impl tokio::io::AsyncRead for StdinThread {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.at == this.pending.len() {
            match this.chunks.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                // The end of the input.
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                Poll::Ready(Some(Ok(chunk))) => {
                    this.pending = chunk;
                    this.at = 0;
                }
            }
        }
        let n = buf.remaining().min(this.pending.len() - this.at);
        buf.put_slice(&this.pending[this.at..this.at + n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}

/// Standard output, written on the runtime's thread. tokio's `stdout()`
/// hands every write to its blocking pool and waits for it: two thread
/// switches per answer. A line goes to a pipe the host reads; if the host
/// stops reading while the pipe is full, the whole server waits for it
/// (with tokio's, only the writer waited, and answers piled up in memory).
struct SyncStdout;

impl tokio::io::AsyncWrite for SyncStdout {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Poll::Ready(std::io::stdout().lock().write(buf))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(std::io::stdout().lock().flush())
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<std::io::Result<()>> {
        self.poll_flush(cx)
    }
}
