//! Input text rules: trimming, blocker-note collapsing, and the limits of
//! DESIGN.md §1. Every error names the field and the limit so the caller can fix
//! the input.

/// Longest task content, in characters, after trimming.
pub const MAX_TASK_CHARS: usize = 1_000;
/// Longest phase name, in characters, after trimming.
pub const MAX_PHASE_CHARS: usize = 200;
/// Longest blocker note, in characters, after trimming and collapsing.
pub const MAX_BLOCKER_CHARS: usize = 1_000;
/// Most tasks one list may hold.
pub const MAX_TASKS: usize = 10_000;
/// Largest tool-call JSON document, in bytes.
pub const MAX_CALL_BYTES: usize = 1024 * 1024;

/// Trims a task content and checks it is 1–1,000 characters.
pub(crate) fn task_content(raw: &str) -> Result<String, String> {
    let text = raw.trim();
    check_task_content(text)?;
    Ok(text.to_owned())
}

/// Trims a phase name and checks it is 1–200 characters.
pub fn phase_name(raw: &str) -> Result<String, String> {
    let text = raw.trim();
    check_phase_name(text)?;
    Ok(text.to_owned())
}

/// Collapses every run of whitespace (newlines included) to one space, trims,
/// and checks the note is 1–1,000 characters.
pub fn blocker(raw: &str) -> Result<String, String> {
    let text = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    check_blocker(&text)?;
    Ok(text)
}

pub(crate) fn check_task_content(text: &str) -> Result<(), String> {
    check(text, "task content", MAX_TASK_CHARS)
}

pub(crate) fn check_phase_name(text: &str) -> Result<(), String> {
    check(text, "phase name", MAX_PHASE_CHARS)
}

pub(crate) fn check_blocker(text: &str) -> Result<(), String> {
    check(text, "blocker note", MAX_BLOCKER_CHARS)?;
    // Stored notes are collapsed on the way in; anything else did not come
    // through `blocker()` (a hand-edited database or import).
    if text.split_whitespace().collect::<Vec<_>>().join(" ") != text {
        return Err(format!(
            "blocker note \"{}\" must be one line with single spaces",
            preview(text)
        ));
    }
    Ok(())
}

fn check(text: &str, what: &str, limit: usize) -> Result<(), String> {
    if text.contains('\0') {
        return Err(crate::call::nul_refusal(what));
    }
    if text.is_empty() {
        return Err(format!("{what} is empty; give some text"));
    }
    if text.trim() != text {
        return Err(format!(
            "{what} \"{}\" has surrounding whitespace",
            preview(text)
        ));
    }
    let chars = text.chars().count();
    if chars > limit {
        return Err(format!(
            "{what} \"{}\" is {chars} characters; the limit is {limit}",
            preview(text)
        ));
    }
    Ok(())
}

/// The first 40 characters of a text, with an ellipsis when cut, for error
/// messages that must stay short however long the input is.
pub(crate) fn preview(text: &str) -> String {
    const KEEP: usize = 40;
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(KEEP).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_content_is_trimmed() {
        assert_eq!(task_content("  Run tests \n").unwrap(), "Run tests");
    }

    #[test]
    fn inner_whitespace_of_content_is_kept() {
        assert_eq!(task_content(" a  b\nc ").unwrap(), "a  b\nc");
    }

    #[test]
    fn empty_after_trimming_is_an_error() {
        assert_eq!(
            task_content(" \t\n").unwrap_err(),
            "task content is empty; give some text"
        );
        assert_eq!(
            phase_name("   ").unwrap_err(),
            "phase name is empty; give some text"
        );
        assert_eq!(
            blocker("\n\n").unwrap_err(),
            "blocker note is empty; give some text"
        );
    }

    #[test]
    fn blocker_collapses_whitespace_runs() {
        assert_eq!(
            blocker("  waiting\n for\t\tcredentials \r\n").unwrap(),
            "waiting for credentials"
        );
    }

    #[test]
    fn limits_are_counted_in_characters_and_named() {
        let at_limit = "é".repeat(MAX_TASK_CHARS);
        assert_eq!(task_content(&at_limit).unwrap(), at_limit);
        let over = "é".repeat(MAX_TASK_CHARS + 1);
        let err = task_content(&over).unwrap_err();
        assert!(
            err.ends_with("is 1001 characters; the limit is 1000"),
            "{err}"
        );
        assert!(err.contains("…"), "{err}");

        assert!(phase_name(&"p".repeat(MAX_PHASE_CHARS)).is_ok());
        assert_eq!(
            phase_name(&"p".repeat(MAX_PHASE_CHARS + 1)).unwrap_err(),
            format!(
                "phase name \"{}…\" is 201 characters; the limit is 200",
                "p".repeat(40)
            )
        );

        assert!(blocker(&"b".repeat(MAX_BLOCKER_CHARS)).is_ok());
        assert!(
            blocker(&"b".repeat(MAX_BLOCKER_CHARS + 1))
                .unwrap_err()
                .ends_with("is 1001 characters; the limit is 1000")
        );
    }

    #[test]
    fn the_limit_applies_after_trimming() {
        let padded = format!("   {}   ", "t".repeat(MAX_TASK_CHARS));
        assert!(task_content(&padded).is_ok());
    }
}
