//! The prompt injector: renders the hidden messages of DESIGN.md §3.4 from
//! state it is given, with the configured templates and settings. Pure:
//! the store reads the state and records what was delivered
//! (`store::SessionTx`), and the continuation is decided in
//! `goal::continuation`.

use std::path::Path;

use serde::Serialize;

use super::{ContextOptions, Gate, HiddenMessage, MessageKind, Templates, ToolNames, todo_context};
use crate::check::{Proof, Scope};
use crate::error::Result;
use crate::goal::{Goal, GoalStatus, format_duration};
use crate::sanitize::{one_line, sanitize, sanitize_multiline};
use crate::settings::{InactiveTool, Settings};
use crate::todo::{Listing, TodoList};

/// Renders hidden messages from state, with the configured templates.
pub struct Injector {
    templates: Templates,
    settings: Settings,
}

#[derive(Serialize)]
struct GoalData {
    objective: String,
    token_budget: Option<String>,
    tokens_used: String,
    tokens_left: String,
    time_used: String,
    /// Each check and where it stands, one sanitized line each (empty
    /// without checks: the prompt is then what it always was).
    checks: Vec<CheckLine>,
}

/// One check as a prompt lists it.
#[derive(Serialize)]
struct CheckLine {
    line: String,
}

impl GoalData {
    fn new(goal: &Goal, now_ms: i64) -> GoalData {
        GoalData {
            objective: sanitize_multiline(&goal.objective),
            token_budget: goal.token_budget.map(|b| b.to_string()),
            tokens_used: goal.tokens_used.to_string(),
            tokens_left: goal.tokens_left().unwrap_or_default().to_string(),
            time_used: format_duration(goal.time_used_seconds(now_ms)),
            checks: Vec::new(),
        }
    }

    /// The same data, listing the checks of `proof` as they stand at
    /// `now_ms` (DESIGN.md §13): `` `cargo test`: failed 4m ago (exit
    /// 101)``, a task's as `` task "Lexer": `cargo test lexer`: not run
    /// yet``.
    fn with_checks(mut self, proof: &Proof, now_ms: i64) -> GoalData {
        self.checks = proof
            .checked
            .iter()
            .map(|c| {
                let check = format!("`{}`: {}", c.command, c.state.describe(now_ms));
                let line = match &c.scope {
                    Scope::Goal => check,
                    Scope::Task(task) => format!("task \"{task}\": {check}"),
                };
                CheckLine {
                    line: sanitize(&line),
                }
            })
            .collect();
        if let (Some(error), false) = (&proof.tree_error, self.checks.is_empty()) {
            self.checks.push(CheckLine {
                line: sanitize(&format!("(the files cannot be read: {error})")),
            });
        }
        self
    }
}

impl Injector {
    /// An injector with these templates and settings.
    pub fn new(templates: Templates, settings: Settings) -> Injector {
        Injector {
            templates,
            settings,
        }
    }

    /// An injector for `settings`, with the templates of `prompts.dir`
    /// overriding the built-in ones.
    #[cfg_attr(not(feature = "cli"), expect(dead_code))]
    pub(crate) fn from_settings(settings: Settings) -> Result<Injector> {
        let templates = Templates::load(settings.prompts.dir.as_deref())?;
        Ok(Injector::new(templates, settings))
    }

    /// The same injector, naming the tools in every prompt as the host
    /// shows them to the model (a host may prefix MCP tools:
    /// `mcp__goalkeeper__todo`). The default names are `todo` and `goal`.
    pub fn with_tool_names(mut self, tools: ToolNames) -> Injector {
        self.templates = self.templates.with_tool_names(tools);
        self
    }

    /// The templates in use.
    pub fn templates(&self) -> &Templates {
        &self.templates
    }

    /// The settings in use.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The `<todo_context>` block as it goes under an active goal, or the
    /// gate that keeps it out.
    pub fn todo_block<'a>(
        &self,
        list: impl Into<Listing<'a>>,
        active_tools: &[String],
    ) -> Result<std::result::Result<String, Gate>> {
        self.block(list.into(), active_tools, true)
    }

    fn block(
        &self,
        list: Listing<'_>,
        active_tools: &[String],
        goal: bool,
    ) -> Result<std::result::Result<String, Gate>> {
        let todo = &self.settings.todo;
        let options = ContextOptions {
            enabled: todo.enabled,
            tool_active: self.todo_tool_active(active_tools),
            read_only_when_inactive: todo.context.inactive_tool == InactiveTool::ReadOnly,
            max_tasks: self.max_tasks(),
            goal,
        };
        todo_context(&self.templates, list, &options)
    }

    /// How many tasks a `<todo_context>` block lists at most (setting
    /// `todo.context.max_tasks`; 0 = all): what a part of a list read for
    /// the block ([`crate::todo::ListPart`]) must be read with.
    pub(crate) fn max_tasks(&self) -> usize {
        usize::try_from(self.settings.todo.context.max_tasks).unwrap_or(usize::MAX)
    }

    /// True when the active tools include the todo tool, by its own name or
    /// by the name the host shows the model.
    fn todo_tool_active(&self, active_tools: &[String]) -> bool {
        let host_name = &self.templates.tool_names().todo;
        active_tools
            .iter()
            .any(|t| t == crate::todo::TOOL_NAME || t == host_name)
    }

    /// The `todo-context` message: the bare block, for hosts without a goal.
    pub fn todo_context_message<'a>(
        &self,
        list: impl Into<Listing<'a>>,
        active_tools: &[String],
        now_ms: i64,
    ) -> Result<std::result::Result<HiddenMessage, Gate>> {
        let list = list.into();
        Ok(self.block(list, active_tools, false)?.map(|block| {
            HiddenMessage::new(MessageKind::TodoContext, block, todo_label(list), now_ms)
        }))
    }

    /// The `goal-mode-context` message: the active-goal prompt, then the
    /// block when its gates hold. Closed unless goal mode is enabled and the
    /// goal is active.
    pub fn goal_mode_context<'a>(
        &self,
        goal: Option<&Goal>,
        list: impl Into<Listing<'a>>,
        active_tools: &[String],
        now_ms: i64,
    ) -> Result<std::result::Result<HiddenMessage, Gate>> {
        self.goal_mode_context_checked(goal, list, active_tools, &Proof::default(), now_ms)
    }

    /// [`Injector::goal_mode_context`] naming the session's checks and where
    /// each stands (`proof`; DESIGN.md §13): "Done means these checks
    /// pass…". Without checks it is that message, byte for byte.
    pub fn goal_mode_context_checked<'a>(
        &self,
        goal: Option<&Goal>,
        list: impl Into<Listing<'a>>,
        active_tools: &[String],
        proof: &Proof,
        now_ms: i64,
    ) -> Result<std::result::Result<HiddenMessage, Gate>> {
        let list = list.into();
        let goal = match self.active_goal(goal) {
            Ok(goal) => goal,
            Err(gate) => return Ok(Err(gate)),
        };
        let goal_context = self.templates.render(
            "goal-active",
            &GoalData::new(goal, now_ms).with_checks(proof, now_ms),
        )?;
        let todo_context = self.todo_block(list, active_tools)?.ok();
        let content = if self.templates.is_builtin("goal-mode-context") {
            join_goal_mode_context(goal_context, todo_context)
        } else {
            self.templates.render(
                "goal-mode-context",
                &serde_json::json!({"goal_context": goal_context, "todo_context": todo_context}),
            )?
        };
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
        self.continuation_checked(goal, list, active_tools, &Proof::default(), now_ms)
    }

    /// [`Injector::continuation`] naming the session's checks and where
    /// each stands (`proof`; DESIGN.md §13). When every task is closed but
    /// a check has not passed on the files as they are, it asks for the
    /// fix, not for `complete`. Without checks it is that message, byte for
    /// byte.
    pub fn continuation_checked(
        &self,
        goal: Option<&Goal>,
        list: &TodoList,
        active_tools: &[String],
        proof: &Proof,
        now_ms: i64,
    ) -> Result<std::result::Result<HiddenMessage, Gate>> {
        let goal = match self.active_goal(goal) {
            Ok(goal) => goal,
            Err(gate) => return Ok(Err(gate)),
        };
        let mut data = serde_json::to_value(GoalData::new(goal, now_ms).with_checks(proof, now_ms))
            .expect("serializes");
        let counts = list.counts();
        data["fix_checks"] = (counts.total > 0
            && counts.open == 0
            && proof
                .checked
                .iter()
                .any(|c| c.scope == Scope::Goal && !c.state.is_passing()))
        .into();
        data["todo_context"] = self.todo_block(list, active_tools)?.ok().into();
        data["todo_tool_active"] =
            (self.settings.todo.enabled && self.todo_tool_active(active_tools)).into();
        let blocked = all_blocked(list);
        data["all_blocked"] = blocked.is_some().into();
        data["blocked"] = blocked.unwrap_or_default().into();
        let content = self.templates.render("goal-continuation", &data)?;
        Ok(Ok(HiddenMessage::new(
            MessageKind::GoalContinuation,
            content,
            goal_label(goal, list.into()),
            now_ms,
        )))
    }

    /// The `goal-budget-limit` wrap-up for a goal whose budget ran out.
    pub fn budget_limit(&self, goal: &Goal, now_ms: i64) -> Result<HiddenMessage> {
        let content = self
            .templates
            .render("goal-budget-limit", &GoalData::new(goal, now_ms))?;
        let label = format!(
            "goal: {} · budget {}/{} tokens",
            short(&goal.objective),
            goal.tokens_used,
            goal.token_budget.unwrap_or_default()
        );
        Ok(HiddenMessage::new(
            MessageKind::GoalBudgetLimit,
            content,
            label,
            now_ms,
        ))
    }

    /// The `todo-error-reminder` for a rejected agent call.
    pub fn todo_error_reminder(
        &self,
        error: &str,
        list: &TodoList,
        now_ms: i64,
    ) -> Result<HiddenMessage> {
        let content = self.templates.render(
            "todo-error-reminder",
            &serde_json::json!({"error": sanitize(error)}),
        )?;
        Ok(HiddenMessage::new(
            MessageKind::TodoErrorReminder,
            content,
            format!("todo call rejected · {}", todo_label(list.into())),
            now_ms,
        ))
    }

    /// The `todo-incomplete-reminder`: the open tasks by phase. `None` when
    /// nothing is open.
    pub fn incomplete_reminder(
        &self,
        list: &TodoList,
        now_ms: i64,
    ) -> Result<Option<HiddenMessage>> {
        let counts = list.counts();
        // Nothing open, or only work that waits on someone else: nothing to
        // continue with, and the agent may stop (DESIGN.md §3.4).
        if counts.open == 0 || counts.open == counts.blocked {
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
            format!("{} · {} open", todo_label(list.into()), counts.open),
            now_ms,
        )))
    }

    /// The `memory` message: the memory file's `text`, read from `path`.
    pub(crate) fn memory(&self, path: &Path, text: &str, now_ms: i64) -> Result<HiddenMessage> {
        let content = self.templates.render(
            "memory",
            &serde_json::json!({"content": sanitize_multiline(text.trim_end())}),
        )?;
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        Ok(HiddenMessage::new(
            MessageKind::Memory,
            content,
            format!("memory: {name} · {} bytes", text.len()),
            now_ms,
        ))
    }

    /// What the runaway guard tells the person when it pauses goal
    /// `goal_id` after `idle` continuations without progress.
    pub(crate) fn guard_paused(&self, goal_id: i64, idle: u64) -> String {
        format!(
            "goalkeeper paused goal #{goal_id} after {idle} continuations in a row without progress (no change to the todo list or the goal). Resume it with `{} goal resume` once there is a way forward.",
            crate::check::program()
        )
    }

    fn active_goal<'g>(&self, goal: Option<&'g Goal>) -> std::result::Result<&'g Goal, Gate> {
        if !self.settings.goal.enabled {
            return Err(Gate::GoalDisabled);
        }
        match goal {
            None => Err(Gate::NoGoal),
            Some(goal) if goal.status != GoalStatus::Active => Err(Gate::GoalNotActive),
            Some(goal) => Ok(goal),
        }
    }
}

/// What the built-in `goal-mode-context` template makes of its two parts:
/// the goal prompt, then a blank line and the block when there is one.
/// Both parts are already rendered and tidy, so this is the template's
/// output without passing a block of up to a megabyte through Handlebars
/// and the line-by-line tidy pass again: three copies, which made the
/// message's cost grow faster than its list.
fn join_goal_mode_context(goal_context: String, todo_context: Option<String>) -> String {
    match todo_context {
        Some(block) => {
            let mut content = goal_context;
            content.reserve(block.len() + 2);
            content.push_str("\n\n");
            content.push_str(&block);
            content
        }
        None => goal_context,
    }
}

/// When every open task is blocked (and at least one is open), each of
/// them as `{content, phase, reason}`, sanitized, for the continuation
/// that asks for what they need.
fn all_blocked(list: &TodoList) -> Option<Vec<serde_json::Value>> {
    if !list.every_open_task_blocked() {
        return None;
    }
    Some(
        list.tasks()
            .filter(|(_, t)| t.status == crate::todo::Status::Blocked)
            .map(|(p, t)| {
                serde_json::json!({
                    "content": sanitize(&t.content),
                    "phase": sanitize(&list.phases[p].name),
                    "reason": t.blocker.as_deref().map(sanitize),
                })
            })
            .collect(),
    )
}

/// `goal: Ship the release · todos 1/3`.
fn goal_label(goal: &Goal, list: Listing<'_>) -> String {
    format!("goal: {} · {}", short(&goal.objective), todo_label(list))
}

/// `todos 1/3` (closed of total), or `no todos`.
fn todo_label(list: Listing<'_>) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::BUILTIN;

    #[test]
    fn the_joined_goal_mode_context_matches_the_template() {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in BUILTIN {
            let path = dir.path().join(format!("{name}.md"));
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let templates = Templates::load(Some(dir.path())).unwrap();
        let goal_context = Templates::builtin()
            .render(
                "goal-active",
                &GoalData::new(
                    &Goal::new(1, "Ship </goal> & <x>\r\nsoon\u{7}".into(), Some(10), 0),
                    0,
                ),
            )
            .unwrap();
        let block =
            "<todo_context>\nOverall: 0/1 done, 1 open.\n- P\n  - [in_progress] a\n</todo_context>";
        for todo_context in [Some(block.to_owned()), None] {
            let expected = templates
                .render(
                    "goal-mode-context",
                    &serde_json::json!({"goal_context": goal_context, "todo_context": todo_context}),
                )
                .unwrap();
            assert_eq!(
                join_goal_mode_context(goal_context.clone(), todo_context),
                expected
            );
        }
    }
}
