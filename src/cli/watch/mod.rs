//! `goalkeeper watch`: a live full-screen view of one session (or of every
//! session, `--all`) for the person steering the agents, and `--once`, one
//! frame as plain text.
//!
//! The view reads the store in read transactions only (never the write
//! lock), polls SQLite's `data_version` every [`POLL`] (a look at shared
//! memory, no file read) and reads again only when another process
//! committed; it redraws once a second for the clocks. Drawing is a pure
//! function of the data, the viewer's state, the clock and the size
//! (`view::draw`), which is what the `--once` snapshots test.
//!
//! On PostgreSQL the view outlives the server or a pooler restarting: a
//! read that fails keeps the last frame on screen with the reason in its
//! last line, and the next poll connects again (one attempt at a time, so
//! the keys keep working), until the server is back.

mod state;
mod text;
mod view;

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use crate::integrations::host_session::last_session_key;
use crate::{Error, SessionId, Store};
use clap::Args;
use ratatui::Terminal;
use ratatui::backend::{Backend, TestBackend};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};

use super::context::{Context, Outcome};
use state::{Data, EVENTS, Key, RATE_WINDOW_MS, Ui};

/// How often the view asks the store whether anything changed.
const POLL: Duration = Duration::from_millis(200);

#[derive(Debug, Args)]
pub(crate) struct WatchArgs {
    /// Follow every session of the database: one row each, the selected one opened below
    #[arg(long)]
    all: bool,
    /// Print one frame as plain text and exit (for scripts and dumb terminals)
    #[arg(long)]
    once: bool,
    /// The size of the --once frame, e.g. 120x40 [default: the terminal's, else $COLUMNS x $LINES, else 80x24]
    #[arg(long, value_name = "COLSxROWS", requires = "once")]
    size: Option<String>,
}

/// Which session(s) the view follows.
enum Target {
    One(SessionId),
    /// The session a host last ran in this directory, read again at every
    /// change: a new host session there is followed at once.
    Pointer {
        key: String,
        fallback: SessionId,
    },
    All,
}

/// Runs `watch`. `session_given` says `--session` came from the command
/// line (it makes no sense together with `--all`).
pub(crate) fn run(ctx: &Context, args: WatchArgs, session_given: bool) -> Result<Outcome, Error> {
    if args.all && (session_given || ctx.session_from.is_some()) {
        return Err(Error::Usage(
            "--all follows every session; drop --session/--session-from, or drop --all to follow one".into(),
        ));
    }
    let target = if args.all {
        Target::All
    } else if let Some(host) = ctx.session_from {
        // The pointer the host adapters keep (`--session-from`'s own
        // resolver), read again at every change.
        Target::Pointer {
            key: last_session_key(host, &super::context::current_dir()?),
            fallback: ctx.session.clone(),
        }
    } else {
        Target::One(ctx.session.clone())
    };
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut ui = Ui::new(args.all, color);
    let lease = ctx.settings()?.todo.claim.lease;
    ui.lease_ms = i64::try_from(lease.saturating_mul(1000)).unwrap_or(i64::MAX);
    if args.once {
        let (width, height) = once_size(args.size.as_deref())?;
        let mut store = ctx.store()?;
        let data = load(&mut store, &target, &ui, ctx.now_ms)?;
        for line in frame_text(&data, &ui, ctx.now_ms, width, height) {
            out!("{line}");
        }
        return Ok(Outcome::Success);
    }
    if !std::io::stdout().is_terminal() {
        return Err(Error::Usage(
            "watch draws a full-screen view, and stdout is not a terminal; run it in a terminal, or use `goalkeeper watch --once` to print one frame as text".into(),
        ));
    }
    let mut store = ctx.store()?;
    // The view tries again itself, poll after poll.
    store.retry_connections_for(Duration::ZERO);
    live(&mut store, &target, &mut ui)
}

/// One frame of `width` × `height` as plain lines, trailing blanks trimmed.
fn frame_text(data: &Data, ui: &Ui, now_ms: i64, width: u16, height: u16) -> Vec<String> {
    let mut terminal =
        Terminal::new(TestBackend::new(width, height)).expect("an in-memory terminal");
    terminal
        .draw(|frame| {
            view::draw(frame, data, ui, now_ms);
        })
        .expect("drawing in memory cannot fail");
    buffer_lines(terminal.backend().buffer())
}

/// The text of a buffer, row by row; a wide character's shadow cells are
/// skipped so the line reads as the terminal shows it.
fn buffer_lines(buffer: &Buffer) -> Vec<String> {
    let area = buffer.area;
    (area.top()..area.bottom())
        .map(|y| {
            let mut line = String::new();
            let mut skip = 0;
            for x in area.left()..area.right() {
                let symbol = buffer[(x, y)].symbol();
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                line.push_str(symbol);
                skip = unicode_width(symbol).saturating_sub(1);
            }
            line.trim_end().to_owned()
        })
        .collect()
}

fn unicode_width(symbol: &str) -> usize {
    ratatui::text::Span::raw(symbol).width()
}

/// `--size`, else the terminal's size, else `$COLUMNS` × `$LINES`, else 80 × 24.
fn once_size(given: Option<&str>) -> Result<(u16, u16), Error> {
    if let Some(text) = given {
        let parsed = text
            .split_once(['x', 'X'])
            .and_then(|(w, h)| Some((w.trim().parse::<u16>().ok()?, h.trim().parse::<u16>().ok()?)))
            .filter(|&(w, h)| (1..=1000).contains(&w) && (1..=1000).contains(&h));
        return parsed.ok_or_else(|| {
            Error::Usage(format!(
                "--size {text:?} is not a size; give columns x rows, each 1 to 1000, e.g. --size 120x40"
            ))
        });
    }
    if std::io::stdout().is_terminal()
        && let Ok((w, h)) = ratatui::crossterm::terminal::size()
        && w > 0
        && h > 0
    {
        return Ok((w, h));
    }
    let env = |name: &str, default: u16| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.trim().parse::<u16>().ok())
            .filter(|n| (1..=1000).contains(n))
            .unwrap_or(default)
    };
    Ok((env("COLUMNS", 80), env("LINES", 24)))
}

/// Reads what the frame shows, in read transactions.
fn load(store: &mut Store, target: &Target, ui: &Ui, now_ms: i64) -> Result<Data, Error> {
    let since = now_ms - RATE_WINDOW_MS;
    // The checks as they stand on the files here, looked at once a read.
    let look = crate::tree::Look::at(None, super::context::cache_dir());
    let session = match target {
        Target::All => {
            let sessions = store.admin().session_summaries()?;
            let detail = match state::selected(&sessions, ui) {
                Some(s) => Some(store.admin().session_snapshot(
                    &SessionId::parse(&s.id)?,
                    EVENTS,
                    since,
                    &look,
                )?),
                None => None,
            };
            return Ok(Data::All { sessions, detail });
        }
        Target::One(session) => session.clone(),
        Target::Pointer { key, fallback } => match store.admin().peek_pointer(key)? {
            Some(id) => SessionId::parse(&id)?,
            None => fallback.clone(),
        },
    };
    Ok(Data::One(
        store
            .admin()
            .session_snapshot(&session, EVENTS, since, &look)?,
    ))
}

/// The full-screen loop: raw mode and the alternate screen, restored on
/// every way out (a panic included: ratatui's hook restores first).
fn live(store: &mut Store, target: &Target, ui: &mut Ui) -> Result<Outcome, Error> {
    let io = |what: &'static str| {
        move |source| Error::Io {
            what: what.into(),
            source,
        }
    };
    let mut terminal = ratatui::try_init().map_err(|e| {
        let _ = ratatui::try_restore();
        io("cannot set up the terminal")(e)
    })?;
    let result = follow(&mut terminal, store, target, ui);
    let _ = terminal.show_cursor();
    ratatui::try_restore().map_err(io("cannot restore the terminal"))?;
    result
}

fn follow<B: Backend>(
    terminal: &mut Terminal<B>,
    store: &mut Store,
    target: &Target,
    ui: &mut Ui,
) -> Result<Outcome, Error>
where
    B::Error: Into<std::io::Error>,
{
    let draw_error = |e: B::Error| Error::Io {
        what: "cannot draw on the terminal".into(),
        source: e.into(),
    };
    let input_error = |source| Error::Io {
        what: "cannot read the keyboard".into(),
        source,
    };
    let mut now = super::context::now_ms()?;
    let mut seen = store.admin().data_version()?;
    let mut data = load(store, target, ui, now)?;
    // Each read a poll wants: a failure keeps the frame and says why.
    let read = |store: &mut Store, ui: &mut Ui, now: i64| -> Option<(i64, Data)> {
        let result = store
            .admin()
            .data_version()
            .and_then(|version| Ok((version, load(store, target, ui, now)?)));
        match result {
            Ok(read) => {
                ui.trouble = None;
                Some(read)
            }
            Err(e) => {
                if ui.trouble.is_none() {
                    ui.trouble_since_ms = now;
                }
                ui.trouble = Some(e.to_string());
                None
            }
        }
    };
    let mut drawn = view::Drawn::default();
    let mut dirty = true;
    let mut second = Instant::now();
    loop {
        if dirty {
            terminal
                .draw(|frame| drawn = view::draw(frame, &data, ui, now))
                .map_err(draw_error)?;
            dirty = false;
        }
        if event::poll(POLL).map_err(input_error)? {
            match event::read().map_err(input_error)? {
                Event::Key(press) if press.kind != KeyEventKind::Release => {
                    let Some(key) = key_of(press.code, press.modifiers) else {
                        continue;
                    };
                    let before = ui.selected.clone();
                    let page = match ui.focus {
                        state::Pane::Events => drawn.event_page,
                        _ => drawn.todo_page,
                    };
                    if state::apply_key(ui, key, &data, page, drawn.todo_top) {
                        return Ok(Outcome::Success);
                    }
                    if (ui.selected != before || key == Key::Sort)
                        && let Some((_, read)) = read(store, ui, now)
                    {
                        data = read;
                    }
                    dirty = true;
                }
                Event::Resize(..) => dirty = true,
                _ => {}
            }
        }
        if ui.trouble.is_some() {
            // Connect again; the read shows everything as it is now.
            now = super::context::now_ms()?;
            if let Some((version, read)) = read(store, ui, now) {
                (seen, data) = (version, read);
            }
            dirty = true;
        } else {
            match store.admin().data_version() {
                Ok(version) if version == seen => {}
                Ok(_) => {
                    now = super::context::now_ms()?;
                    if let Some((version, read)) = read(store, ui, now) {
                        (seen, data) = (version, read);
                    }
                    dirty = true;
                }
                Err(e) => {
                    ui.trouble_since_ms = super::context::now_ms()?;
                    ui.trouble = Some(e.to_string());
                    dirty = true;
                }
            }
        }
        if second.elapsed() >= Duration::from_secs(1) {
            // The clocks move (time on the goal, "3m ago"); the diff the
            // terminal gets is the few cells that changed.
            second = Instant::now();
            now = super::context::now_ms()?;
            dirty = true;
        }
    }
}

fn key_of(code: KeyCode, modifiers: KeyModifiers) -> Option<Key> {
    Some(match code {
        KeyCode::Char('c') if modifiers.contains(KeyModifiers::CONTROL) => Key::Quit,
        KeyCode::Char('q') | KeyCode::Esc => Key::Quit,
        KeyCode::Up | KeyCode::Char('k') => Key::Up,
        KeyCode::Down | KeyCode::Char('j') => Key::Down,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown | KeyCode::Char(' ') => Key::PageDown,
        KeyCode::Home | KeyCode::Char('g') => Key::Top,
        KeyCode::End | KeyCode::Char('G') => Key::Bottom,
        KeyCode::Tab | KeyCode::BackTab => Key::Tab,
        KeyCode::Char('?') => Key::Help,
        KeyCode::Char('s') => Key::Sort,
        _ => return None,
    })
}
