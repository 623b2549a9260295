//! The `goalkeeper` binary: a thin shell over the library (see `cli/`).
//!
//! The process starts at C's `main`, not through Rust's start-up
//! (`#![no_main]`). That start-up reads `/proc/self/maps` to find the main
//! thread's stack guard and installs a stack-overflow handler, which cost
//! about 0.04 ms of every hook event and status line, a tenth of a
//! `/bin/true` (BENCHMARKS.md, "Fifth pass, the command line"). What the
//! CLI needs of it is done here instead:
//!
//! - descriptors 0–2 are open (on `/dev/null` when a host started the
//!   process without them), so no file goalkeeper opens becomes its stdout;
//! - SIGPIPE is ignored, so a closed pipe is an error the CLI handles, not
//!   a signal that kills a hook;
//! - a panic is reported by the panic hook and exits 101;
//! - `std::process::exit` flushes stdout.
//!
//! And before SQLite starts, its memory is configured (`heap`): no
//! statistics, and the binary's heap, a bump arena in front of `malloc`
//! that Rust allocates from too.
//!
//! Not kept: std's one-line message on a stack overflow (the process still
//! ends with SIGSEGV), and the name "main" of the main thread in a panic
//! message.

#![cfg_attr(not(test), no_main)]

mod cli;
mod heap;

/// Rust's heap is the arena SQLite's is (see `heap`).
#[cfg(not(test))]
#[global_allocator]
static HEAP: heap::Heap = heap::Heap;

/// The entry point the C runtime calls.
#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    open_standard_fds();
    // SAFETY: no other thread exists yet, and SIG_IGN is a valid
    // disposition for SIGPIPE.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    // SAFETY: no other thread exists yet and nothing has used SQLite, which
    // is when SQLite may be configured.
    unsafe { heap::configure_sqlite() };
    let status = std::panic::catch_unwind(cli::main).unwrap_or(101);
    std::process::exit(i32::from(status))
}

/// Opens `/dev/null` on each of descriptors 0–2 that is closed, as Rust's
/// start-up does: `open` takes the lowest free descriptor, which is the
/// closed one.
#[cfg(not(test))]
fn open_standard_fds() {
    for fd in 0..3 {
        // SAFETY: F_GETFD only reads the descriptor table.
        let closed = unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF);
        if closed {
            // SAFETY: a NUL-terminated path and plain flags; the
            // descriptor is meant to stay open for the process's life.
            unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
        }
    }
}

/// The test harness brings its own entry point; this keeps `cli::main`
/// reachable there as in the binary.
#[cfg(test)]
fn main() {
    std::process::exit(i32::from(cli::main()))
}
