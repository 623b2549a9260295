//! The `goalkeeper` binary: one call into the library's command line
//! (`goalkeeper::cli`, feature `cli`).
//!
//! Rust's own start-up does what a process a host starts needs: it opens
//! `/dev/null` on any of descriptors 0–2 that are closed (so no file
//! goalkeeper opens becomes its stdout) and ignores SIGPIPE (so a closed
//! pipe is an error the CLI handles, not a signal that kills a hook).
//! SQLite needs no set-up here: its memory statistics, which goalkeeper
//! never reads, are compiled out (`SQLITE_DEFAULT_MEMSTATUS=0` in
//! `.cargo/config.toml`).

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(goalkeeper::cli::main())
}
