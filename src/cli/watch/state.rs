//! What one frame of `watch` shows: the data read from the store, the
//! viewer's own state (focus, scroll, sort, help), and the keys that change
//! it. No I/O here, so a frame is a pure function of these and the clock.

use crate::store::{SessionSnapshot, SessionSummary};
use crate::todo::Status;

/// How many events a frame can show at most.
pub(crate) const EVENTS: usize = 200;
/// The window of the token rate.
pub(crate) const RATE_WINDOW_MS: i64 = 5 * 60 * 1000;

/// The data of one frame, as last read from the store.
pub(crate) enum Data {
    /// One session (`--session`, `--session-from`).
    One(SessionSnapshot),
    /// Every session (`--all`), with the selected one read in full.
    All {
        /// One row per session, most recently updated first.
        sessions: Vec<SessionSummary>,
        /// The selected session.
        detail: Option<SessionSnapshot>,
    },
}

/// The panes that take the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pane {
    Sessions,
    Todos,
    Events,
}

/// The orders of the `--all` board (`s` cycles through them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sort {
    /// Last activity, newest first.
    Activity,
    /// Session id.
    Session,
    /// Share of tasks closed, least first.
    Progress,
    /// Share of the budget used, most first.
    Budget,
}

impl Sort {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Sort::Activity => "last activity",
            Sort::Session => "session",
            Sort::Progress => "progress",
            Sort::Budget => "budget",
        }
    }

    fn next(self) -> Sort {
        match self {
            Sort::Activity => Sort::Session,
            Sort::Session => Sort::Progress,
            Sort::Progress => Sort::Budget,
            Sort::Budget => Sort::Activity,
        }
    }
}

/// The viewer's own state.
pub(crate) struct Ui {
    pub(crate) focus: Pane,
    /// First line of the todo pane; `None` follows the task in progress.
    pub(crate) todo_scroll: Option<usize>,
    /// First line of the event pane.
    pub(crate) event_scroll: usize,
    /// The selected session of the board.
    pub(crate) selected: Option<String>,
    pub(crate) sort: Sort,
    pub(crate) help: bool,
    /// Colours on (off with `NO_COLOR`).
    pub(crate) color: bool,
    /// `todo.claim.lease`, in milliseconds: when the claims shown lapse.
    pub(crate) lease_ms: i64,
    /// Why the last read failed (the database unreachable), while it does.
    pub(crate) trouble: Option<String>,
    /// Since when reads fail.
    pub(crate) trouble_since_ms: i64,
}

impl Ui {
    pub(crate) fn new(all: bool, color: bool) -> Ui {
        Ui {
            focus: if all { Pane::Sessions } else { Pane::Todos },
            todo_scroll: None,
            event_scroll: 0,
            selected: None,
            sort: Sort::Activity,
            help: false,
            color,
            lease_ms: 600_000,
            trouble: None,
            trouble_since_ms: 0,
        }
    }
}

/// A key, as the view understands it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    Quit,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Tab,
    Help,
    Sort,
}

/// The rows of the board in the order `sort` puts them.
pub(crate) fn sorted(sessions: &[SessionSummary], sort: Sort) -> Vec<&SessionSummary> {
    let mut rows: Vec<&SessionSummary> = sessions.iter().collect();
    let share = |part: u64, whole: u64| {
        if whole == 0 {
            0.0
        } else {
            part as f64 / whole as f64
        }
    };
    let budget = |s: &SessionSummary| {
        s.goal
            .as_ref()
            .and_then(|g| g.token_budget.map(|b| share(g.tokens_used, b)))
            .unwrap_or(-1.0)
    };
    match sort {
        Sort::Activity => {}
        Sort::Session => rows.sort_by(|a, b| a.id.cmp(&b.id)),
        Sort::Progress => rows.sort_by(|a, b| {
            share(a.todos.closed as u64, a.todos.total as u64)
                .total_cmp(&share(b.todos.closed as u64, b.todos.total as u64))
        }),
        Sort::Budget => rows.sort_by(|a, b| budget(b).total_cmp(&budget(a))),
    }
    rows
}

/// The session the board has selected: the remembered one while it
/// exists, else the first row.
pub(crate) fn selected<'a>(sessions: &'a [SessionSummary], ui: &Ui) -> Option<&'a SessionSummary> {
    let rows = sorted(sessions, ui.sort);
    ui.selected
        .as_ref()
        .and_then(|id| rows.iter().find(|s| &s.id == id).copied())
        .or_else(|| rows.first().copied())
}

/// The todo pane's lines: one per phase, one per task.
pub(crate) fn todo_lines(snapshot: &SessionSnapshot) -> usize {
    snapshot
        .todos
        .phases
        .iter()
        .map(|p| 1 + p.tasks.len())
        .sum()
}

/// The line of the task in progress (else the first open task) in the
/// todo pane, which a following pane keeps in view.
pub(crate) fn focus_line(snapshot: &SessionSnapshot) -> Option<usize> {
    let mut line = 0;
    let mut first_open = None;
    for phase in &snapshot.todos.phases {
        line += 1;
        for task in &phase.tasks {
            if task.status == Status::InProgress {
                return Some(line);
            }
            if first_open.is_none() && task.status.is_open() {
                first_open = Some(line);
            }
            line += 1;
        }
    }
    first_open
}

/// Whether the key asks to quit; otherwise applies it to `ui`. `page` is
/// the height of a scrolled pane, for page keys.
pub(crate) fn apply_key(ui: &mut Ui, key: Key, data: &Data, page: usize, todo_top: usize) -> bool {
    let page = page.max(1);
    let all = matches!(data, Data::All { .. });
    let detail = match data {
        Data::One(s) => Some(s),
        Data::All { detail, .. } => detail.as_ref(),
    };
    match key {
        Key::Quit => return true,
        Key::Help => ui.help = !ui.help,
        Key::Sort if all => ui.sort = ui.sort.next(),
        Key::Sort => {}
        Key::Tab => {
            ui.focus = match (ui.focus, all) {
                (Pane::Sessions, _) => Pane::Todos,
                (Pane::Todos, _) => Pane::Events,
                (Pane::Events, true) => Pane::Sessions,
                (Pane::Events, false) => Pane::Todos,
            }
        }
        _ => {
            let delta: i64 = match key {
                Key::Up => -1,
                Key::Down => 1,
                Key::PageUp => -(page as i64),
                Key::PageDown => page as i64,
                Key::Top => i64::MIN / 2,
                _ => i64::MAX / 2,
            };
            let moved = |from: usize, len: usize| {
                (from as i64)
                    .saturating_add(delta)
                    .clamp(0, len.saturating_sub(1) as i64) as usize
            };
            match ui.focus {
                Pane::Sessions => {
                    if let Data::All { sessions, .. } = data {
                        let rows = sorted(sessions, ui.sort);
                        let current = selected(sessions, ui)
                            .and_then(|s| rows.iter().position(|r| r.id == s.id))
                            .unwrap_or(0);
                        if let Some(row) = rows.get(moved(current, rows.len())) {
                            ui.selected = Some(row.id.clone());
                            // A newly opened session follows its own work.
                            ui.todo_scroll = None;
                            ui.event_scroll = 0;
                        }
                    }
                }
                Pane::Todos => {
                    let len = detail.map_or(0, todo_lines);
                    let last_top = len.saturating_sub(page);
                    let top = ui.todo_scroll.unwrap_or(todo_top);
                    ui.todo_scroll = Some(moved(top, last_top + 1));
                }
                Pane::Events => {
                    let len = detail.map_or(0, |s| s.events.len());
                    ui.event_scroll = moved(ui.event_scroll, len.saturating_sub(page) + 1);
                }
            }
        }
    }
    false
}
