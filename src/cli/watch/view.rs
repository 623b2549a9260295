//! Drawing one `watch` frame: a pure function of the data, the viewer's
//! state, the clock and the frame's size, so frames can be snapshot-tested
//! (`watch --once` draws into ratatui's `TestBackend`).
//!
//! Layout, top to bottom: a title line; for `--all` the board of sessions;
//! the goal (objective, status, budget gauge, rate, time); the todo list
//! (phases as bars, tasks under them) and the event log, stacked below 120
//! columns and side by side from there; a line of keys.

mod board;

use crate::goal::{Goal, GoalStatus, format_duration, format_tokens};
use crate::store::SessionSnapshot;
use crate::time::utc_datetime;
use crate::todo::{self, Status, Task, Team};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};

use super::state::{Data, EVENTS, Pane, Ui, focus_line, todo_lines};
use super::text::{
    about, ago, bar, clock, event_text, objective_lines, percent, rate, safe, tokens,
};

/// The smallest frame the view lays out; below it, it says so.
pub(crate) const MIN_WIDTH: u16 = 40;
/// See [`MIN_WIDTH`].
pub(crate) const MIN_HEIGHT: u16 = 12;
/// From this width the todo list and the events sit side by side.
const WIDE: u16 = 120;

/// What the last frame laid out, which scrolling needs.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Drawn {
    /// Lines the todo pane shows at once.
    pub(crate) todo_page: usize,
    /// Its first line as drawn (the followed position when not scrolled).
    pub(crate) todo_top: usize,
    /// Lines the event pane shows at once.
    pub(crate) event_page: usize,
}

/// Draws one frame of `data` as `ui` says, at `now_ms`.
pub(crate) fn draw(frame: &mut Frame<'_>, data: &Data, ui: &Ui, now_ms: i64) -> Drawn {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let text = format!(
            "goalkeeper watch needs at least {MIN_WIDTH}x{MIN_HEIGHT}; this terminal is {}x{}. Press q to quit.",
            area.width, area.height
        );
        frame.render_widget(
            Paragraph::new(text).wrap(ratatui::widgets::Wrap { trim: true }),
            area,
        );
        return Drawn::default();
    }
    let p = Paint(ui.color);
    let [title, body, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let (name, detail, body) = match data {
        Data::One(snapshot) => (
            format!("session {}", safe(&snapshot.session)),
            Some(snapshot),
            body,
        ),
        Data::All { sessions, detail } => {
            let rows = (sessions.len() as u16).max(1) + 3;
            let [board, rest] = Layout::vertical([
                Constraint::Length(rows.min(body.height * 2 / 5).max(5)),
                Constraint::Fill(1),
            ])
            .areas(body);
            board::draw_board(frame, board, sessions, ui, now_ms, p);
            (
                format!(
                    "{} session{}",
                    sessions.len(),
                    if sessions.len() == 1 { "" } else { "s" }
                ),
                detail.as_ref(),
                rest,
            )
        }
    };
    let stamp = utc_datetime(now_ms).replace('T', " ").replace('Z', " UTC");
    let left = format!(" goalkeeper watch · {name}");
    let gap =
        (title.width as usize).saturating_sub(left.chars().count() + stamp.chars().count() + 1);
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(left, p.bold()),
            Span::raw(" ".repeat(gap)),
            Span::raw(stamp),
        ])),
        title,
    );
    let drawn = match detail {
        Some(snapshot) => {
            let title = match data {
                Data::All { .. } => format!("Goal · session {}", safe(&snapshot.session)),
                Data::One(_) => "Goal".into(),
            };
            draw_session(frame, body, snapshot, &title, ui, now_ms, p)
        }
        None => {
            frame.render_widget(
                Paragraph::new("No sessions yet. Sessions appear here as soon as an agent or `goalkeeper todo`/`goal` writes one.")
                    .wrap(ratatui::widgets::Wrap { trim: true })
                    .block(Block::bordered().title(" Session ")),
                body,
            );
            Drawn::default()
        }
    };
    if let Some(trouble) = &ui.trouble {
        // The frame above is the last one read; this line says since when.
        let since = utc_datetime(ui.trouble_since_ms);
        let since = since.get(11..19).unwrap_or(&since);
        let line = format!(
            " ! no answer since {since}, trying again · q quit · {}",
            safe(trouble)
        );
        frame.render_widget(Paragraph::new(Span::styled(line, p.bold())), keys);
    } else {
        let mut hint = " q quit · ↑↓ j k scroll · Tab pane · ? keys".to_owned();
        if matches!(data, Data::All { .. }) {
            hint.push_str(&format!(" · s sort: {}", ui.sort.label()));
        }
        frame.render_widget(Paragraph::new(Span::styled(hint, p.dim())), keys);
    }
    if ui.help {
        draw_help(frame, area, matches!(data, Data::All { .. }));
    }
    drawn
}

/// Styles that fall back to no colour (`NO_COLOR`): bold, dim and reverse
/// stay, colours go.
#[derive(Clone, Copy)]
struct Paint(bool);

impl Paint {
    fn fg(self, color: Color) -> Style {
        if self.0 {
            Style::new().fg(color)
        } else {
            Style::new()
        }
    }
    fn bold(self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }
    fn dim(self) -> Style {
        if self.0 {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new()
        }
    }
}

/// A pane's frame: thick when it has the keyboard.
fn pane<'a>(title: String, focused: bool, p: Paint) -> Block<'a> {
    let block = Block::new()
        .borders(Borders::ALL)
        .title(format!(" {title} "));
    if focused {
        block
            .border_type(BorderType::Thick)
            .border_style(p.fg(Color::Cyan))
            .title_style(p.bold())
    } else {
        block
    }
}

fn draw_session(
    frame: &mut Frame<'_>,
    area: Rect,
    snapshot: &SessionSnapshot,
    title: &str,
    ui: &Ui,
    now_ms: i64,
    p: Paint,
) -> Drawn {
    let goal = goal_lines(
        snapshot,
        now_ms,
        area.width.saturating_sub(2) as usize,
        area.height,
        p,
    );
    let [goal_area, lists] = Layout::vertical([
        Constraint::Length(goal.len() as u16 + 2),
        Constraint::Fill(1),
    ])
    .areas(area);
    frame.render_widget(
        Paragraph::new(goal).block(Block::bordered().title(format!(" {title} "))),
        goal_area,
    );
    let (todo_area, event_area) = if area.width >= WIDE {
        let [a, b] = Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)])
            .areas(lists);
        (a, b)
    } else {
        let events = (lists.height / 3).clamp(3, 10);
        let [a, b] =
            Layout::vertical([Constraint::Fill(1), Constraint::Length(events)]).areas(lists);
        (a, b)
    };
    let (todo_page, todo_top) = draw_todos(frame, todo_area, snapshot, ui, now_ms, p);
    let event_page = draw_events(frame, event_area, snapshot, ui, p);
    Drawn {
        todo_page,
        todo_top,
        event_page,
    }
}

/// The goal pane's lines, fitted to the pane's width and the frame's height.
fn goal_lines(
    snapshot: &SessionSnapshot,
    now_ms: i64,
    width: usize,
    height: u16,
    p: Paint,
) -> Vec<Line<'static>> {
    let Some(goal) = &snapshot.goal else {
        return vec![Line::from(
            "No goal. `goalkeeper goal set OBJECTIVE --budget N` sets one.",
        )];
    };
    let (status_style, status) = match goal.status {
        GoalStatus::Active => (p.fg(Color::Green), "active"),
        GoalStatus::Paused => (p.fg(Color::Yellow), "paused"),
        GoalStatus::BudgetLimited => (p.fg(Color::Red), "budget-limited"),
        GoalStatus::Complete => (p.fg(Color::Green), "complete"),
        GoalStatus::Dropped => (p.dim(), "dropped"),
    };
    let mut head = vec![
        Span::raw(format!("#{} ", goal.id)),
        Span::styled(status, status_style.add_modifier(Modifier::BOLD)),
        Span::raw(format!(
            " · {} on the goal",
            format_duration(goal.time_used_seconds(now_ms))
        )),
    ];
    if let Some(updated) = snapshot.updated_ms {
        head.push(Span::raw(format!(
            " · last activity {}",
            ago(updated, now_ms)
        )));
    }
    let mut lines = vec![Line::from(head)];
    let objective = objective_lines(&goal.objective);
    let room = if height >= 40 {
        5
    } else if height >= 30 {
        3
    } else {
        2
    };
    let shown = objective.len().min(room);
    for (i, text) in objective.iter().take(shown).enumerate() {
        let more = i + 1 == shown && objective.len() > shown;
        let text = if more {
            format!("{text} …")
        } else {
            text.clone()
        };
        lines.push(Line::styled(text, p.bold()));
    }
    lines.push(budget_line(goal, width, p));
    lines.push(rate_line(snapshot, goal, now_ms, p));
    lines.extend(check_lines(&snapshot.checks, room, now_ms, p));
    lines
}

/// The checks that still gate something, one line each (at most `room`,
/// then a count of the rest): pass, fail, stale or not run, and when.
fn check_lines(
    checks: &[crate::check::Checked],
    room: usize,
    now_ms: i64,
    p: Paint,
) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = checks
        .iter()
        .take(room)
        .map(|c| {
            let color = match c.state.word() {
                "pass" => Color::Green,
                "fail" => Color::Red,
                _ => Color::Yellow,
            };
            Line::from(vec![
                Span::raw("Check "),
                Span::styled(c.state.word(), p.fg(color).add_modifier(Modifier::BOLD)),
                Span::raw(format!(" {}", safe(&c.describe(now_ms)))),
            ])
        })
        .collect();
    if checks.len() > room {
        let more = checks.len() - room;
        lines.push(Line::from(format!(
            "… {more} more check{} (`goalkeeper goal check list`, `todo view`)",
            if more == 1 { "" } else { "s" }
        )));
    }
    lines
}

fn budget_line(goal: &Goal, width: usize, p: Paint) -> Line<'static> {
    let figures = tokens(goal);
    let Some(budget) = goal.token_budget else {
        return Line::from(format!(
            "Tokens {} used, no budget",
            format_tokens(goal.tokens_used)
        ));
    };
    let share = percent(goal.tokens_used, budget);
    let color = match share {
        0..75 => Color::Green,
        75..100 => Color::Yellow,
        _ => Color::Red,
    };
    let cells = width
        .saturating_sub(figures.chars().count() + 9)
        .clamp(10, 40);
    Line::from(vec![
        Span::raw("Budget "),
        Span::styled(bar(goal.tokens_used, budget, cells), p.fg(color)),
        Span::raw(format!(" {figures}")),
    ])
}

fn rate_line(snapshot: &SessionSnapshot, goal: &Goal, now_ms: i64, p: Paint) -> Line<'static> {
    let pace = rate(snapshot, goal, now_ms);
    let mut text = format!(
        "Rate {} tokens/min over the last {}m",
        format_tokens(pace.per_minute),
        pace.minutes
    );
    if goal.status == GoalStatus::BudgetLimited || goal.budget_exhausted() {
        return Line::from(vec![
            Span::raw(text + " · "),
            Span::styled("used up; `goal budget N` raises it", p.fg(Color::Red)),
        ]);
    }
    match (pace.exhausted_in, goal.token_budget) {
        (Some(secs), _) => text.push_str(&format!(" · budget gone in {}", about(secs))),
        (None, Some(_)) => text.push_str(" · no spending lately"),
        (None, None) => {}
    }
    Line::from(text)
}

/// Draws the todo pane; returns its page height and the first line shown.
fn draw_todos(
    frame: &mut Frame<'_>,
    area: Rect,
    snapshot: &SessionSnapshot,
    ui: &Ui,
    now_ms: i64,
    p: Paint,
) -> (usize, usize) {
    let counts = snapshot.todos.counts();
    let in_progress = (snapshot.todos.tasks())
        .filter(|(_, t)| t.status == Status::InProgress)
        .count();
    let mut title = format!("Todo · {}/{} done", counts.closed, counts.total);
    if in_progress > 0 {
        title.push_str(&format!(" · {in_progress} in progress"));
    }
    if counts.blocked > 0 {
        title.push_str(&format!(" · {} blocked", counts.blocked));
    }
    title.push_str(&format!(" · v{}", snapshot.todo_version));
    let block = pane(title, ui.focus == Pane::Todos, p);
    let page = area.height.saturating_sub(2) as usize;
    let len = todo_lines(snapshot);
    let last_top = len.saturating_sub(page);
    let top = match ui.todo_scroll {
        Some(top) => top.min(last_top),
        // The first page while the task fits on it; further down, the
        // task sits a third of the way from the top.
        None => focus_line(snapshot)
            .map_or(0, |line| {
                if line + 1 < page {
                    0
                } else {
                    line.saturating_sub(page / 3)
                }
            })
            .min(last_top),
    };
    let mut block = block;
    if len > page {
        let follow = if ui.todo_scroll.is_none() {
            " · following"
        } else {
            ""
        };
        block = block.title_bottom(format!(
            " {}–{} of {len}{follow} ",
            top + 1,
            (top + page).min(len)
        ));
    }
    if len == 0 {
        frame.render_widget(
            Paragraph::new("No tasks yet. The agent's first `todo` call fills this in.")
                .block(block),
            area,
        );
        return (page, 0);
    }
    let width = area.width.saturating_sub(2) as usize;
    let lines: Vec<Line<'static>> = todo_view(snapshot, ui.lease_ms, now_ms, p, width)
        .skip(top)
        .take(page)
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block), area);
    (page, top)
}

/// Every line of the todo pane, lazily (a 10,000-task list is drawn a
/// page at a time).
fn todo_view(
    snapshot: &SessionSnapshot,
    lease_ms: i64,
    now_ms: i64,
    p: Paint,
    width: usize,
) -> impl Iterator<Item = Line<'static>> + '_ {
    let team = std::rc::Rc::new(Team {
        now_ms,
        clock_ms: i64::MAX,
        lease_ms,
        leases: snapshot.agents.clone(),
    });
    snapshot.todos.phases.iter().flat_map(move |phase| {
        let team = team.clone();
        let closed = phase.tasks.iter().filter(|t| t.status.is_closed()).count();
        let total = phase.tasks.len();
        let done = total > 0 && closed == total;
        let head = Line::from(vec![
            Span::styled(bar(closed as u64, total as u64, 10), p.fg(Color::Green)),
            Span::raw(format!(" {closed:>3}/{total:<3} ")),
            Span::styled(safe(&phase.name), if done { p.dim() } else { p.bold() }),
        ]);
        std::iter::once(head).chain(phase.tasks.iter().map(move |task| {
            let content = safe(&task.content);
            let marker = format!("[{}] ", task.status.marker());
            match task.status {
                Status::InProgress => {
                    let text = format!("▶ {marker}{content}{}", claim_note(task, &team));
                    let pad = width.saturating_sub(text.chars().count());
                    Line::styled(
                        text + &" ".repeat(pad),
                        p.fg(Color::Yellow)
                            .add_modifier(Modifier::BOLD | Modifier::REVERSED),
                    )
                }
                Status::Blocked => {
                    let mut spans = vec![
                        Span::raw("  "),
                        Span::styled(marker, p.fg(Color::Red).add_modifier(Modifier::BOLD)),
                        Span::raw(content),
                    ];
                    spans.push(Span::styled(
                        match &task.blocker {
                            Some(note) => format!(" — blocked: {}", safe(note)),
                            None => " — blocked".into(),
                        },
                        p.fg(Color::Red),
                    ));
                    Line::from(spans)
                }
                Status::Completed => Line::styled(format!("  {marker}{content}"), p.dim()),
                Status::Abandoned => {
                    let by = if task.dropped_by.is_some() {
                        " (dropped by user)"
                    } else {
                        " (dropped)"
                    };
                    Line::styled(format!("  {marker}{content}{by}"), p.dim())
                }
                Status::Pending => Line::from(format!("  {marker}{content}")),
            }
        }))
    })
}

/// "  · w1 for 3m, lease 7m left" after a task a named agent holds: who,
/// for how long, and when its lease runs out (DESIGN.md §2.5).
fn claim_note(task: &Task, team: &Team) -> String {
    let Some(holder) = todo::holder_label(task) else {
        return String::new();
    };
    let span = |from: i64, to: i64| match ago(from, to).trim_end_matches(" ago") {
        "now" => "0s".to_owned(),
        span => span.to_owned(),
    };
    let held = task
        .since_ms
        .map(|since| format!(" for {}", span(since, team.now_ms)))
        .unwrap_or_default();
    let lease = match team.lease_end(task) {
        Some(end) if end <= team.now_ms => ", lease ran out".to_owned(),
        Some(end) => format!(", lease {} left", span(team.now_ms, end)),
        None => String::new(),
    };
    format!("  · {}{held}{lease}", safe(holder))
}

/// Draws the event pane; returns its page height.
fn draw_events(
    frame: &mut Frame<'_>,
    area: Rect,
    snapshot: &SessionSnapshot,
    ui: &Ui,
    p: Paint,
) -> usize {
    let page = area.height.saturating_sub(2) as usize;
    let len = snapshot.events.len();
    let top = ui.event_scroll.min(len.saturating_sub(page));
    let mut block = pane("Events · newest first".into(), ui.focus == Pane::Events, p);
    if len > page {
        let of = if len >= EVENTS {
            format!("the last {len}")
        } else {
            len.to_string()
        };
        block = block.title_bottom(format!(" {}–{} of {of} ", top + 1, (top + page).min(len)));
    }
    if len == 0 {
        frame.render_widget(Paragraph::new("Nothing logged yet.").block(block), area);
        return page;
    }
    let lines: Vec<Line<'static>> = snapshot
        .events
        .iter()
        .skip(top)
        .take(page)
        .map(|event| {
            let who = match event.actor.as_str() {
                "agent" => p.fg(Color::Cyan),
                "user" => p.fg(Color::Magenta),
                _ => p.fg(Color::Yellow),
            };
            let what = if event.ok {
                Style::new()
            } else {
                p.fg(Color::Red)
            };
            Line::from(vec![
                Span::styled(format!("{} ", clock(event.at_ms)), p.dim()),
                Span::styled(format!("{:<10} ", safe(&event.actor)), who),
                Span::styled(event_text(event), what),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block), area);
    page
}

fn draw_help(frame: &mut Frame<'_>, area: Rect, all: bool) {
    let mut keys = vec![
        "q, Esc, Ctrl-C   quit",
        "↑ ↓, k j         scroll the pane with the thick frame",
        "PgUp PgDn        scroll a page",
        "Home End, g G    top, bottom",
        "Tab              next pane",
        "?                this help",
    ];
    if all {
        keys.insert(5, "s                sort the sessions");
    }
    keys.push("");
    keys.push("The todo pane follows the task in progress until you scroll.");
    let w = 64.min(area.width.saturating_sub(2));
    let h = (keys.len() as u16 + 2).min(area.height.saturating_sub(2));
    let popup = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(keys.into_iter().map(Line::from).collect::<Vec<_>>()).block(
            Block::bordered()
                .border_type(BorderType::Double)
                .title(" Keys "),
        ),
        popup,
    );
}
