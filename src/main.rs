//! The `goalkeeper` binary: a thin shell over the library (see `cli/`).
//!
//! Rust's own start-up does what a process a host starts needs: it opens
//! `/dev/null` on any of descriptors 0–2 that are closed (so no file
//! goalkeeper opens becomes its stdout) and ignores SIGPIPE (so a closed
//! pipe is an error the CLI handles, not a signal that kills a hook).

mod cli;

fn main() -> std::process::ExitCode {
    sqlite_without_memory_statistics();
    std::process::ExitCode::from(cli::main())
}

/// SQLite keeps statistics of its memory use behind a mutex taken on every
/// allocation, for `sqlite3_status`, which goalkeeper never reads; SQLite's
/// documentation recommends turning them off then. This is only allowed
/// before SQLite is first used, and nothing has used it yet.
fn sqlite_without_memory_statistics() {
    // SAFETY: no other thread exists yet and no SQLite function has run,
    // which is when `sqlite3_config` may be called; MEMSTATUS takes one
    // int.
    unsafe {
        rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as std::ffi::c_int);
    }
}
