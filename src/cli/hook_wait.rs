//! How long a hook or the status line may work before it gives up, and
//! the watchdog that holds it to that.

use super::context::hook_wait;
use super::output::note;

/// Runs `work` on this thread, within [`hook_wait`]: a watchdog thread
/// sleeps until the deadline and, when `work` has not finished by then,
/// writes [`hook_gave_up`] to stderr and ends the process with exit 0,
/// nothing on stdout. A transaction `work` had open is rolled back as after
/// any crash. The watchdog is never woken when `work` finishes in time, so
/// a hook pays for starting one thread, not for handing its work to
/// another and waiting to be scheduled again, which on a busy machine can
/// take longer than the work itself.
///
/// Once `work` has returned, the watchdog does nothing: what the caller
/// prints next is never cut short.
pub(crate) fn within_hook_wait<T>(work: impl FnOnce() -> T) -> T {
    use std::sync::{Mutex, PoisonError};
    static FINISHED: Mutex<bool> = Mutex::new(false);
    let wait = hook_wait();
    let _ = std::thread::Builder::new()
        .name("hook-deadline".into())
        .spawn(move || {
            std::thread::sleep(wait);
            let finished = FINISHED.lock().unwrap_or_else(PoisonError::into_inner);
            if !*finished {
                note(hook_gave_up());
                // Holding the lock: the work cannot finish and print now.
                std::process::exit(0);
            }
        });
    let value = work();
    *FINISHED.lock().unwrap_or_else(PoisonError::into_inner) = true;
    value
}

/// What a hook says when it gave up waiting.
pub(crate) fn hook_gave_up() -> String {
    format!(
        "gave up after {} ms (the database or the input did not answer in time); the hook did nothing, or its change was not confirmed",
        hook_wait().as_millis()
    )
}
