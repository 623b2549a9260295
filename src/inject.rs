//! The prompt injector: builds the hidden messages of SPEC §3.4 from the
//! stored state. Rendering is pure ([`Injector`]); the functions at the
//! bottom read (and, for the continuation, update) the store in one
//! transaction.

use serde::Serialize;

use crate::SessionId;
use crate::error::Result;
use crate::goal::{BudgetNotice, Goal, GoalStatus, format_duration};
use crate::prompt::sanitize::{one_line, sanitize, sanitize_multiline};
use crate::prompt::{ContextOptions, Gate, HiddenMessage, MessageKind, Templates, todo_context};
use crate::store::Store;
use crate::todo::{Status, TodoList};

/// The settings the injector reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InjectOptions {
    /// `todo.enabled`.
    pub todo_enabled: bool,
    /// `goal.enabled`.
    pub goal_enabled: bool,
    /// `todo.context.inactive_tool = "read-only"`.
    pub read_only_when_inactive: bool,
    /// `todo.context.max_tasks`.
    pub max_tasks: usize,
    /// `goal.continuation.max_idle`.
    pub max_idle: u32,
}

impl Default for InjectOptions {
    fn default() -> InjectOptions {
        InjectOptions {
            todo_enabled: true,
            goal_enabled: true,
            read_only_when_inactive: false,
            max_tasks: 0,
            max_idle: 3,
        }
    }
}

/// Renders hidden messages from state, with the configured templates.
pub struct Injector {
    templates: Templates,
    options: InjectOptions,
}

#[derive(Serialize)]
struct GoalData {
    objective: String,
    token_budget: Option<String>,
    tokens_used: String,
    tokens_left: String,
    time_used: String,
}

impl GoalData {
    fn new(goal: &Goal, now_ms: i64) -> GoalData {
        GoalData {
            objective: sanitize_multiline(&goal.objective),
            token_budget: goal.token_budget.map(|b| b.to_string()),
            tokens_used: goal.tokens_used.to_string(),
            tokens_left: goal.tokens_left().unwrap_or_default().to_string(),
            time_used: format_duration(goal.time_used_seconds(now_ms)),
        }
    }
}

impl Injector {
    /// An injector with these templates and options.
    pub fn new(templates: Templates, options: InjectOptions) -> Injector {
        Injector { templates, options }
    }

    /// The templates in use.
    pub fn templates(&self) -> &Templates {
        &self.templates
    }

    /// The options in use.
    pub fn options(&self) -> &InjectOptions {
        &self.options
    }

    /// The bare `<todo_context>` block, or the gate that keeps it out.
    pub fn todo_block(
        &self,
        list: &TodoList,
        active_tools: &[String],
    ) -> Result<std::result::Result<String, Gate>> {
        let options = ContextOptions {
            enabled: self.options.todo_enabled,
            tool_active: active_tools.iter().any(|t| t == "todo"),
            read_only_when_inactive: self.options.read_only_when_inactive,
            max_tasks: self.options.max_tasks,
        };
        todo_context(&self.templates, list, &options)
    }

    /// The `todo-context` message: the bare block, for hosts without a goal.
    pub fn todo_context_message(
        &self,
        list: &TodoList,
        active_tools: &[String],
        now_ms: i64,
    ) -> Result<std::result::Result<HiddenMessage, Gate>> {
        Ok(self.todo_block(list, active_tools)?.map(|block| {
            HiddenMessage::new(MessageKind::TodoContext, block, todo_label(list), now_ms)
        }))
    }

    /// The `goal-mode-context` message: the active-goal prompt, then the
    /// block when its gates hold. Closed unless goal mode is enabled and the
    /// goal is active.
    pub fn goal_mode_context(
        &self,
        goal: Option<&Goal>,
        list: &TodoList,
        active_tools: &[String],
        now_ms: i64,
    ) -> Result<std::result::Result<HiddenMessage, Gate>> {
        let goal = match self.active_goal(goal) {
            Ok(goal) => goal,
            Err(gate) => return Ok(Err(gate)),
        };
        let goal_context = self
            .templates
            .render("goal-active", &GoalData::new(goal, now_ms))?;
        let todo_context = self.todo_block(list, active_tools)?.ok();
        let content = self.templates.render(
            "goal-mode-context",
            &serde_json::json!({"goal_context": goal_context, "todo_context": todo_context}),
        )?;
        Ok(Ok(HiddenMessage::new(
            MessageKind::GoalModeContext,
            content,
            goal_label(goal, list),
            now_ms,
        )))
    }

    /// The `goal-continuation` message for an active goal.
    pub fn continuation(
        &self,
        goal: Option<&Goal>,
        list: &TodoList,
        active_tools: &[String],
        now_ms: i64,
    ) -> Result<std::result::Result<HiddenMessage, Gate>> {
        let goal = match self.active_goal(goal) {
            Ok(goal) => goal,
            Err(gate) => return Ok(Err(gate)),
        };
        let mut data = serde_json::to_value(GoalData::new(goal, now_ms)).expect("serializes");
        data["todo_context"] = self.todo_block(list, active_tools)?.ok().into();
        let content = self.templates.render("goal-continuation", &data)?;
        Ok(Ok(HiddenMessage::new(
            MessageKind::GoalContinuation,
            content,
            goal_label(goal, list),
            now_ms,
        )))
    }

    /// The `goal-budget-limit` wrap-up for a goal whose budget ran out.
    pub fn budget_limit(&self, goal: &Goal, list: &TodoList, now_ms: i64) -> Result<HiddenMessage> {
        let content = self
            .templates
            .render("goal-budget-limit", &GoalData::new(goal, now_ms))?;
        let label = format!(
            "goal: {} · budget {}/{} tokens",
            short(&goal.objective),
            goal.tokens_used,
            goal.token_budget.unwrap_or_default()
        );
        let _ = list;
        Ok(HiddenMessage::new(
            MessageKind::GoalBudgetLimit,
            content,
            label,
            now_ms,
        ))
    }

    /// The `todo-error-reminder` for a rejected agent call.
    pub fn todo_error_reminder(&self, error: &str, list: &TodoList, now_ms: i64) -> Result<HiddenMessage> {
        let content = self
            .templates
            .render("todo-error-reminder", &serde_json::json!({"error": sanitize(error)}))?;
        Ok(HiddenMessage::new(
            MessageKind::TodoErrorReminder,
            content,
            format!("todo call rejected · {}", todo_label(list)),
            now_ms,
        ))
    }

    /// The `todo-incomplete-reminder`: the open tasks by phase. `None` when
    /// nothing is open.
    pub fn incomplete_reminder(&self, list: &TodoList, now_ms: i64) -> Result<Option<HiddenMessage>> {
        let counts = list.counts();
        if counts.open == 0 {
            return Ok(None);
        }
        let phases: Vec<_> = list
            .phases
            .iter()
            .filter(|p| p.tasks.iter().any(|t| t.status.is_open()))
            .map(|p| {
                let tasks: Vec<_> = p
                    .tasks
                    .iter()
                    .filter(|t| t.status.is_open())
                    .map(|t| {
                        serde_json::json!({"status": t.status, "content": sanitize(&t.content)})
                    })
                    .collect();
                serde_json::json!({"name": sanitize(&p.name), "tasks": tasks})
            })
            .collect();
        let content = self.templates.render(
            "todo-incomplete-reminder",
            &serde_json::json!({
                "open": counts.open.to_string(),
                "total": counts.total.to_string(),
                "phases": phases,
            }),
        )?;
        Ok(Some(HiddenMessage::new(
            MessageKind::TodoIncompleteReminder,
            content,
            format!("{} · {} open", todo_label(list), counts.open),
            now_ms,
        )))
    }

    fn active_goal<'g>(&self, goal: Option<&'g Goal>) -> std::result::Result<&'g Goal, Gate> {
        if !self.options.goal_enabled {
            return Err(Gate::GoalDisabled);
        }
        match goal {
            None => Err(Gate::NoGoal),
            Some(goal) if goal.status != GoalStatus::Active => Err(Gate::GoalNotActive),
            Some(goal) => Ok(goal),
        }
    }
}

/// `goal: Ship the release · todos 1/3`.
fn goal_label(goal: &Goal, list: &TodoList) -> String {
    format!("goal: {} · {}", short(&goal.objective), todo_label(list))
}

/// `todos 1/3` (closed of total), or `no todos`.
fn todo_label(list: &TodoList) -> String {
    let counts = list.counts();
    if counts.total == 0 {
        "no todos".into()
    } else {
        format!("todos {}/{}", counts.closed, counts.total)
    }
}

fn short(objective: &str) -> String {
    crate::todo::text::preview(&one_line(objective))
}

/// What `continuation` produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Continuation {
    /// A message to inject: the continuation, or the budget-limit wrap-up.
    Message(HiddenMessage),
    /// The runaway guard paused the goal; the text says why.
    Paused(String),
    /// Nothing to send, and why.
    Closed(Gate),
}

/// The goal-mode context for `session`, from its stored state.
pub fn goal_mode_context(
    store: &mut Store,
    injector: &Injector,
    session: &SessionId,
    active_tools: &[String],
    now_ms: i64,
) -> Result<std::result::Result<HiddenMessage, Gate>> {
    let (goal, list) = store.goal_and_list(session)?;
    injector.goal_mode_context(goal.as_ref(), &list, active_tools, now_ms)
}

/// The next continuation for `session`, in one transaction: a pending
/// budget-limit wrap-up is delivered (once); an active goal gets the
/// continuation steer, unless it made no progress (no todo or goal change)
/// for `max_idle` continuations in a row, in which case it is paused.
pub fn continuation(
    store: &mut Store,
    injector: &Injector,
    session: &SessionId,
    active_tools: &[String],
    now_ms: i64,
) -> Result<Continuation> {
    store.continue_goal(session, now_ms, injector.options.max_idle, |state| {
        let Some(goal) = state.goal else {
            return Ok(Step::Closed(Gate::NoGoal));
        };
        if !injector.options.goal_enabled {
            return Ok(Step::Closed(Gate::GoalDisabled));
        }
        if goal.budget_notice == BudgetNotice::Pending {
            return Ok(Step::BudgetLimit(injector.budget_limit(goal, state.list, now_ms)?));
        }
        if goal.status != GoalStatus::Active {
            return Ok(Step::Closed(Gate::GoalNotActive));
        }
        Ok(Step::Continue)
    })
    .and_then(|step| match step {
        StepOutcome::Message(message) => Ok(Continuation::Message(message)),
        StepOutcome::Paused(text) => Ok(Continuation::Paused(text)),
        StepOutcome::Closed(gate) => Ok(Continuation::Closed(gate)),
        StepOutcome::Render(goal, list) => {
            match injector.continuation(Some(&goal), &list, active_tools, now_ms)? {
                Ok(message) => Ok(Continuation::Message(message)),
                Err(gate) => Ok(Continuation::Closed(gate)),
            }
        }
    })
}

/// The state a continuation decision reads.
pub(crate) struct ContinuationState<'a> {
    pub goal: Option<&'a Goal>,
    pub list: &'a TodoList,
}

/// The decision, before the store applies it.
pub(crate) enum Step {
    BudgetLimit(HiddenMessage),
    Continue,
    Closed(Gate),
}

/// What the store did with the decision.
pub(crate) enum StepOutcome {
    Message(HiddenMessage),
    Paused(String),
    Closed(Gate),
    Render(Goal, TodoList),
}

/// True when some task is still open (used by reminders).
pub fn has_open_tasks(list: &TodoList) -> bool {
    list.tasks().any(|(_, t)| t.status != Status::Completed && t.status.is_open())
}
