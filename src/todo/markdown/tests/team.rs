//! The comments of several agents: who holds or completed a task, since
//! when, and the task a blocked one waits for, out and back in.

use super::*;

/// A list three agents worked on: w1 holds one task (claimed at a time
/// with milliseconds), sub-2 completed one, and one waits for another.
fn team_list() -> TodoList {
    let mut held = task("Parse bodies", Status::InProgress);
    held.agent = Some("w1".into());
    held.since_ms = Some(1_764_441_600_250);
    let mut done = task("Parse headers", Status::Completed);
    done.agent = Some("sub-2".into());
    let mut waits = task("Tag the release", Status::Blocked);
    waits.blocker = Some("after Parse bodies".into());
    waits.after = Some("Parse bodies".into());
    TodoList::new(vec![phase("Core", vec![done, held, waits])])
}

const TEAM_MARKDOWN: &str = "\
# Core
- [x] Parse headers <!-- done-by: sub-2 -->
- [/] Parse bodies <!-- held-by: w1 since 2025-11-29T18:40:00.250Z -->
- [!] Tag the release <!-- blocker: after Parse bodies --> <!-- after: Parse bodies -->
";

#[test]
fn holders_claim_times_and_after_links_round_trip() {
    assert_eq!(to_markdown(&team_list()), TEAM_MARKDOWN);
    assert_eq!(from_markdown(TEAM_MARKDOWN), Ok(team_list()));
}

/// The session's own agent is no name: its list reads as it always did.
#[test]
fn a_list_of_the_main_agent_carries_no_new_comment() {
    let list = TodoList::new(vec![phase(
        "P",
        vec![task("a", Status::Completed), task("b", Status::InProgress)],
    )]);
    assert_eq!(to_markdown(&list), "# P\n- [x] a\n- [/] b\n");
}

/// A holder without a claim time, and an `after` whose text needs
/// escaping, read as written.
#[test]
fn since_may_be_left_out_and_after_is_escaped() {
    let markdown = "# P\n- [/] a <!-- held-by: w1 -->\n- [ ] x &lt;!-- y\n- [!] b <!-- after: x &lt;!-- y -->\n";
    let list = from_markdown(markdown).unwrap();
    let tasks: Vec<&Task> = list.tasks().map(|(_, t)| t).collect();
    assert_eq!(
        (tasks[0].agent.as_deref(), tasks[0].since_ms),
        (Some("w1"), None)
    );
    assert_eq!(tasks[2].after.as_deref(), Some("x <!-- y"));
    assert_eq!(from_markdown(&to_markdown(&list)), Ok(list));
}

#[test]
fn a_wrong_team_comment_is_an_error_on_its_line() {
    assert_eq!(
        errors(
            "- [ ] a <!-- held-by: w1 -->\n\
             - [/] b <!-- held-by: main -->\n\
             - [/] c <!-- held-by: user -->\n\
             - [/] d <!-- held-by: w1 since yesterday -->\n\
             - [/] e <!-- done-by: w1 -->\n\
             - [!] f <!-- after: zzz -->\n\
             - [!] g <!-- after: g -->\n\
             - [!] h <!-- after: i -->\n\
             - [!] i <!-- after: h -->\n\
             - [!] j <!-- after: a --> <!-- after: b -->\n"
        ),
        [
            "line 1: a `held-by` comment belongs on a task in progress `[/]`; this task is pending",
            "line 2: `held-by: main` names the session's own agent, which a list names by no comment; leave the comment out",
            "line 3: `held-by`: invalid agent name \"user\": use 1-64 characters from A-Z, a-z, 0-9, '.', '_', ':' and '-' (\"main\" is the session's own agent; \"user\" is reserved)",
            "line 4: `held-by` gives the claim's time in UTC after `since`, as in `since 2025-11-29T18:40:00Z`, not `yesterday`",
            "line 5: a `done-by` comment belongs on a completed `[x]` task; this task is in_progress",
            "line 6: `after` names task \"zzz\", which is not in the list; name a task of the list by its exact content",
            "line 7: task \"g\" cannot wait for itself; name another task in `after`",
            "line 8: task \"h\" waits, through its `after` links, for itself; the links go in a circle",
            "line 9: task \"i\" waits, through its `after` links, for itself; the links go in a circle",
            "line 10: a second `after` comment; a task carries each note once",
        ]
    );
}
