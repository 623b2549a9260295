//! Hidden messages (DESIGN.md §3.4): everything goalkeeper injects into an
//! agent's context, with durable provenance in `source`.

use serde::Serialize;

/// What produced a hidden message; also its `customType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MessageKind {
    /// The goal prompt plus the `<todo_context>` block, while a goal is active.
    GoalModeContext,
    /// The steer that continues an active goal without a user message.
    GoalContinuation,
    /// The wrap-up steer, once, when the goal's budget runs out.
    GoalBudgetLimit,
    /// The bare `<todo_context>` block, for hosts that inject without a goal.
    TodoContext,
    /// The failure of the last agent `todo` call and how to fix it.
    TodoErrorReminder,
    /// Open todos when the agent stops without an active goal.
    TodoIncompleteReminder,
    /// The first-prompt nudge to lay out a phased list.
    TodoEager,
    /// The global memory file, once per session.
    Memory,
    /// The assembled system prompt.
    SystemPrompt,
}

impl MessageKind {
    /// The kebab-case name, as in `customType`.
    pub fn as_str(self) -> &'static str {
        match self {
            MessageKind::GoalModeContext => "goal-mode-context",
            MessageKind::GoalContinuation => "goal-continuation",
            MessageKind::GoalBudgetLimit => "goal-budget-limit",
            MessageKind::TodoContext => "todo-context",
            MessageKind::TodoErrorReminder => "todo-error-reminder",
            MessageKind::TodoIncompleteReminder => "todo-incomplete-reminder",
            MessageKind::TodoEager => "todo-eager",
            MessageKind::Memory => "memory",
            MessageKind::SystemPrompt => "system-prompt",
        }
    }

    /// The shape of the content: standing `instructions`, a one-turn `steer`,
    /// a `reminder`, or reference `context`.
    pub(crate) fn form(self) -> Form {
        match self {
            MessageKind::GoalModeContext | MessageKind::SystemPrompt => Form::Instructions,
            MessageKind::GoalContinuation | MessageKind::GoalBudgetLimit => Form::Steer,
            MessageKind::TodoErrorReminder
            | MessageKind::TodoIncompleteReminder
            | MessageKind::TodoEager => Form::Reminder,
            MessageKind::TodoContext | MessageKind::Memory => Form::Context,
        }
    }
}

/// The shape of a hidden message's content, independent of its producer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Form {
    /// Standing instructions for the turn (goal mode, system prompt).
    Instructions,
    /// A one-turn steer (continuation, budget wrap-up).
    Steer,
    /// A short reminder (errors, open todos, planning nudge).
    Reminder,
    /// Reference material (the todo block alone, memory).
    Context,
}

/// Where a hidden message came from: read from stored state, never from a
/// table in the client, so any reader of a log can tell what was injected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Source {
    /// The producer.
    pub kind: MessageKind,
    /// The shape.
    pub form: Form,
    /// A short human label built from the stored state, e.g.
    /// `goal: Ship the release · todos 1/3`.
    pub label: String,
}

/// One injected message: hidden from the user, attributed to the agent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HiddenMessage {
    /// Always `custom`.
    pub role: &'static str,
    /// The producer, as `goal-mode-context` etc.
    pub custom_type: MessageKind,
    /// The text the model reads.
    pub content: String,
    /// Always false: the user does not see it in the transcript.
    pub display: bool,
    /// Always `agent`.
    pub attribution: &'static str,
    /// Milliseconds since the epoch, from the injected clock.
    pub timestamp: i64,
    /// Provenance.
    pub source: Source,
}

impl HiddenMessage {
    /// A hidden message of `kind` with its content and label.
    pub fn new(kind: MessageKind, content: String, label: String, timestamp: i64) -> HiddenMessage {
        HiddenMessage {
            role: "custom",
            custom_type: kind,
            content,
            display: false,
            attribution: "agent",
            timestamp,
            source: Source {
                kind,
                form: kind.form(),
                label,
            },
        }
    }
}
