//! `goalkeeper mcp`: the MCP server on stdio. Only JSON-RPC goes to
//! stdout; failures are logged to stderr.

use std::io::{Read, Write};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use crate::integrations::mcp::{McpServer, SessionSource, serve};
use crate::{Error, SessionId};
use clap::Args;

use super::context::{Context, Outcome};

#[derive(Debug, Args)]
pub(crate) struct McpArgs {}

pub(crate) fn run(ctx: &Context, _args: McpArgs) -> Result<Outcome, Error> {
    let settings = ctx.settings()?;
    // Opened up front so a bad --db fails before the client connects.
    let store = ctx.store()?;
    let mut server = McpServer::new(store, ctx.session.clone(), settings)?
        .with_caller(ctx.caller()?)
        // Per call, so timestamps move while the server runs.
        .with_clock(
            || Ok(super::context::now_ms().unwrap_or_else(|_| crate::time::system_now_ms())),
        )
        .with_log(|line| super::output::write_stderr_as("goalkeeper mcp", format_args!("{line}")));
    if let Some(host) = ctx.session_from {
        // A host may tell its MCP servers the session they serve.
        let launched = host
            .session_var()
            .and_then(|var| std::env::var(var).ok())
            .and_then(|id| SessionId::parse(&id).ok());
        server = server.with_session_source(SessionSource {
            host,
            dir: super::context::current_dir()?,
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
    let served = runtime.block_on(async {
        match StdinFd::register() {
            Some(stdin) => serve(server, stdin, SyncStdout).await,
            None => serve(server, StdinThread::start(), SyncStdout).await,
        }
    });
    // Do not wait for a stdin read that may never end.
    runtime.shutdown_background();
    served.map(|()| Outcome::Success)
}

/// Standard input as the runtime's own event source, when it is a pipe or
/// a socket (as every host starts an MCP server): the runtime's thread
/// waits in `epoll` for the request and reads it itself, one thread switch
/// per request fewer than [`StdinThread`]. The descriptor stays blocking
/// (`O_NONBLOCK` belongs to the open file, which the host may share): a
/// read happens only once `poll(2)` says that it will not block, and this
/// process is the pipe's only reader.
struct StdinFd {
    fd: tokio::io::unix::AsyncFd<RawStdin>,
}

/// File descriptor 0, never closed by us.
struct RawStdin;

impl std::os::fd::AsRawFd for RawStdin {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        std::io::stdin().as_raw_fd()
    }
}

impl StdinFd {
    /// `None` when standard input is not a pipe or a socket (a regular
    /// file, which `epoll` refuses; a terminal, which the thread serves as
    /// well) or cannot be registered.
    fn register() -> Option<StdinFd> {
        // A closed descriptor fails.
        let stat = rustix::fs::fstat(std::io::stdin()).ok()?;
        match rustix::fs::FileType::from_raw_mode(stat.st_mode) {
            rustix::fs::FileType::Fifo | rustix::fs::FileType::Socket => {}
            _ => return None,
        }
        // SAFETY: descriptor 0 is open (fstat said so) and nothing in this
        // process closes or replaces it while the server runs.
        let fd = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(
                RawStdin,
                tokio::io::Interest::READABLE,
            )
        }
        .ok()?;
        Some(StdinFd { fd })
    }
}

/// Whether a read of standard input would return at once: data, the end of
/// the input, or an error.
fn stdin_ready() -> std::io::Result<bool> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    loop {
        match poll(&mut fds, Some(&now)) {
            Ok(ready) => return Ok(ready > 0),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

impl tokio::io::AsyncRead for StdinFd {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        loop {
            let mut guard = match self.fd.poll_read_ready(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(guard)) => guard,
            };
            // The readiness may be older than the last read, which took
            // what had come: wait for the next event instead of blocking.
            match stdin_ready() {
                Ok(true) => {}
                Ok(false) => {
                    guard.clear_ready();
                    continue;
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
            let unfilled = buf.initialize_unfilled();
            let n = match rustix::io::read(std::io::stdin(), unfilled) {
                Ok(n) => n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Poll::Ready(Err(e.into())),
            };
            buf.advance(n);
            return Poll::Ready(Ok(()));
        }
    }
}

/// Standard input that cannot wait in the runtime's `epoll` (a regular
/// file, a terminal; see [`StdinFd`]), read by a thread of its own that
/// hands what it read to the runtime. tokio's `stdin()` starts a
/// blocking-pool task for every read: per request, one more thread switch
/// than this, and on a busy machine a switch is a large part of a round
/// trip. At most two reads wait in the channel; the thread then waits too. Each read
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
