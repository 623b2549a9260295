//! What the hosts' unit tests share: a session with a goal and a one-task
//! list on an in-memory store, a fixed clock, events written by hand, and
//! the check that input a hook ignores leaves the session as it was.

use serde_json::{Value, json};

use super::hook_event::HookReply;
use super::install::Executable;
use crate::goal::GoalOp;
use crate::prompt::Injector;
use crate::store::GoalCall;
use crate::todo::{Actor, Call};
use crate::{SessionId, Settings, Store};

/// The clock of every event.
pub(crate) const NOW: i64 = 1_764_441_600_000;

/// A host's `handle`.
pub(crate) type Handle = fn(&mut Store, &crate::store::Caller, &Injector, &str, i64) -> HookReply;

/// The executable an install writes: `gk`.
pub(crate) fn gk() -> Executable {
    Executable("gk".into())
}

/// The directory of every event: a name in the temporary directory that
/// nothing creates (the hook only records it, and would resolve it were it
/// a symlink).
pub(crate) fn event_dir() -> String {
    std::env::temp_dir()
        .join(format!("goalkeeper-hook-tests-{}", std::process::id()))
        .display()
        .to_string()
}

/// The event `name` of `session` in [`event_dir`], with the fields of
/// `extra` (an object).
pub(crate) fn event(name: &str, session: &str, extra: Value) -> String {
    let mut event = json!({"hook_event_name": name, "session_id": session, "cwd": event_dir()});
    let fields = event.as_object_mut().expect("an object");
    fields.extend(extra.as_object().expect("extra is an object").clone());
    event.to_string()
}

/// One host's hook on a session that has the goal "Ship it" and the list
/// `A`.
pub(crate) struct Fixture {
    pub handle: Handle,
    pub store: Store,
    pub injector: Injector,
    pub session: SessionId,
}

impl Fixture {
    /// The session `id`, its goal with `budget`, and the default settings.
    pub(crate) fn new(handle: Handle, id: &str, budget: Option<u64>) -> Fixture {
        let mut store = Store::open_in_memory().unwrap();
        let session = SessionId::parse(id).unwrap();
        let op = GoalOp::Set {
            objective: "Ship it".into(),
            budget,
            checks: Vec::new(),
        };
        store
            .write(&session, |tx| {
                tx.goal_call(
                    GoalCall::Op(&op),
                    Actor::User,
                    &mut crate::store::Caller::default(),
                    NOW,
                )
            })
            .unwrap();
        store
            .todo(
                &session,
                Call::Json(r#"{"op": "init", "items": ["A"]}"#),
                Actor::Agent,
                &mut crate::store::Caller::default(),
                NOW,
            )
            .unwrap();
        Fixture {
            handle,
            store,
            injector: Injector::from_settings(Settings::default()).unwrap(),
            session,
        }
    }

    /// Runs one event through the hook.
    pub(crate) fn send(&mut self, input: &str) -> HookReply {
        let caller = crate::store::Caller::default();
        (self.handle)(&mut self.store, &caller, &self.injector, input, NOW)
    }

    /// The session's list, its version and its goal.
    pub(crate) fn state(&mut self) -> String {
        let (list, version) = self.store.read(&self.session, |tx| tx.todo_list()).unwrap();
        let goal = self.store.read(&self.session, |tx| tx.goal()).unwrap();
        format!("{list:?} {version} {goal:?}")
    }

    /// Sends each input of `cases`, which must get exactly its note and
    /// change nothing; returns what each printed.
    pub(crate) fn each_ignored(&mut self, cases: &[(&str, &str)]) -> Vec<Option<Value>> {
        let before = self.state();
        let stdouts = cases
            .iter()
            .map(|(input, note)| {
                let reply = self.send(input);
                assert_eq!(reply.notes, [*note], "{input}");
                reply.stdout
            })
            .collect();
        assert_eq!(before, self.state());
        stdouts
    }
}
