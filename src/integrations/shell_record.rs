//! A `goalkeeper verify` run that reaches the store through a host's hook
//! (DESIGN.md §13): where the agent's shell cannot write the database (a
//! sandbox), verify prints its record as the first line of its output,
//! and the hook that fires after the host's shell call reads it from the
//! host's own record of that call, which the model does not write. Each
//! adapter reads its host's wire format into a [`ShellCall`]; the rule of
//! what is taken ([`crate::verify::record::from_shell_call`]) and how it is
//! stored ([`crate::store::SessionTx::record_from_hook`]) is one for every
//! host.
//!
//! A call that is no verify call passes without a word. A verify call
//! whose record does not check out (a compound command, a cut or forged
//! line, an exit status that disagrees, another session's record) is
//! dropped with a note on stderr; the host goes on either way.

use crate::error::{Error, Result};
use crate::integrations::hook_event::Hook;
use crate::verify::record::{self, ShellCall};

/// Takes the record of `call` into the hook event's transaction, when it
/// is a verify call whose record checks out.
pub(crate) fn take(hook: &mut Hook<'_, '_>, call: ShellCall<'_>) -> Result<()> {
    if !is_verify_call(call) {
        return Ok(());
    }
    let exe = std::env::current_exe()
        .ok()
        .map(|p| p.to_string_lossy().into_owned());
    let mut programs = vec!["goalkeeper"];
    programs.extend(exe.as_deref());
    let found = match record::from_shell_call(call, &programs) {
        Ok(found) => found,
        Err(reason) => {
            hook.notes.push(drop_note(&reason));
            return Ok(());
        }
    };
    match hook.tx.record_from_hook(&found, hook.now_ms) {
        Ok(_) => Ok(()),
        Err(Error::Rejected(reason)) => {
            hook.notes.push(drop_note(&reason));
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// The note of a record dropped for `reason`.
fn drop_note(reason: &str) -> String {
    format!(
        "the verify run's record of this shell call was not stored: {}",
        crate::sanitize::one_line(reason)
    )
}

/// Whether `call` is, or passes for, a run of `goalkeeper verify`: its
/// output starts with a record, or its command names verify. Any other
/// shell call is none of goalkeeper's business.
pub(crate) fn is_verify_call(call: ShellCall<'_>) -> bool {
    call.output.starts_with(record::MARKER)
        || (call.command.contains("goalkeeper") && call.command.contains("verify"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call<'a>(command: &'a str, output: &'a str) -> ShellCall<'a> {
        ShellCall {
            command,
            output,
            exit: Some(0),
            call: None,
        }
    }

    #[test]
    fn only_a_call_that_names_verify_or_prints_a_record_is_looked_at() {
        assert!(!is_verify_call(call("cargo test", "ok")));
        assert!(!is_verify_call(call("goalkeeper todo view", "")));
        assert!(is_verify_call(call("goalkeeper verify", "")));
        assert!(is_verify_call(call("/usr/bin/goalkeeper  verify", "")));
        assert!(is_verify_call(call("echo hi", "goalkeeper-evidence 1 {}")));
    }
}
