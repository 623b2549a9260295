//! The board of `watch --all`: one row per session.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use super::{Paint, pane};
use crate::cli::watch::state::{Pane, Ui, selected, sorted};
use crate::cli::watch::text::{ago, bar, objective_lines, percent, safe};
use crate::goal::format_tokens;
use crate::store::SessionSummary;

/// The board: one row per session.
pub(super) fn draw_board(
    frame: &mut Frame<'_>,
    area: Rect,
    sessions: &[SessionSummary],
    ui: &Ui,
    now_ms: i64,
    p: Paint,
) {
    let block = pane(
        format!("Sessions · sorted by {}", ui.sort.label()),
        ui.focus == Pane::Sessions,
        p,
    );
    let width = area.width.saturating_sub(2) as usize;
    let page = area.height.saturating_sub(3) as usize;
    let rows = sorted(sessions, ui.sort);
    if rows.is_empty() {
        frame.render_widget(Paragraph::new("No sessions yet.").block(block), area);
        return;
    }
    let chosen = selected(sessions, ui).map(|s| s.id.as_str());
    let at = rows
        .iter()
        .position(|s| Some(s.id.as_str()) == chosen)
        .unwrap_or(0);
    let top = (at + 1).saturating_sub(page);
    // session, status, progress, budget, last activity; the goal takes the rest.
    // The agents column only where some list has named agents at work.
    let team = rows.iter().any(|s| s.agents > 0);
    let (sw, tw, pw, bw, aw) = (16, 14, 13, 11, 9);
    let nw = if team { 7 } else { 0 };
    let gw = width
        .saturating_sub(2 + sw + tw + pw + nw + bw + aw + 5)
        .max(4);
    let cell = |text: &str, w: usize| {
        let mut t: String = text.chars().take(w).collect();
        if text.chars().count() > w && w > 1 {
            t.pop();
            t.push('…');
        }
        format!("{t:<w$}")
    };
    let mut lines = vec![Line::styled(
        format!(
            "  {} {} {} {} {}{} {}",
            cell("session", sw),
            cell("goal", gw),
            cell("status", tw),
            cell("progress", pw),
            if team {
                cell("agents", nw - 1) + " "
            } else {
                String::new()
            },
            cell("budget", bw),
            cell("activity", aw)
        ),
        p.bold(),
    )];
    for s in rows.iter().skip(top).take(page) {
        let (goal, status, budget) = match &s.goal {
            Some(g) => (
                objective_lines(&g.objective)
                    .into_iter()
                    .next()
                    .unwrap_or_default(),
                g.status.as_str().to_owned(),
                match g.token_budget {
                    Some(b) => format!("{}% of {}", percent(g.tokens_used, b), format_tokens(b)),
                    None if g.tokens_used == 0 => "no budget".into(),
                    None => format!("{} used", format_tokens(g.tokens_used)),
                },
            ),
            None => ("—".into(), "no goal".into(), "—".into()),
        };
        let agents = match s.agents {
            0 => "—".to_owned(),
            n => n.to_string(),
        };
        let progress = format!(
            "{} {}/{}",
            bar(s.todos.closed as u64, s.todos.total as u64, 6),
            s.todos.closed,
            s.todos.total
        );
        let is_selected = Some(s.id.as_str()) == chosen;
        let text = format!(
            "{}{} {} {} {} {}{} {}",
            if is_selected { "▶ " } else { "  " },
            cell(&safe(&s.id), sw),
            cell(&goal, gw),
            cell(&status, tw),
            cell(&progress, pw),
            if team {
                cell(&agents, nw - 1) + " "
            } else {
                String::new()
            },
            cell(&budget, bw),
            cell(&ago(s.updated_ms, now_ms), aw)
        );
        lines.push(if is_selected {
            Line::styled(text, Style::new().add_modifier(Modifier::REVERSED))
        } else {
            Line::from(text)
        });
    }
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
