//! The MCP server's tools and prompt for one session, outside the
//! protocol: [`McpServer::call`] runs one tool call, and
//! [`McpServer::goal_mode_context`] renders the prompt, each in one store
//! transaction of the session the server acts on.

use std::sync::{Mutex, PoisonError};

use serde_json::Value;

use super::tool_call::{self, ExecResult, Executed, unknown_tool};
use crate::error::Result;
use crate::integrations::agent_tools::{TODO, ToolSpec};
use crate::integrations::host_session::{self, Host};
use crate::integrations::open_session;
use crate::prompt::Injector;
use crate::store::{CallFrom, Caller, PointerRead, SessionRef};
use crate::{SessionId, Settings, Store};

/// Which host session an MCP server follows.
#[derive(Clone, Debug)]
pub struct SessionSource {
    /// The host that started the server.
    pub host: Host,
    /// The directory it runs in: the host's last session there is the one,
    /// unless the call names its session (Codex's do).
    pub dir: std::path::PathBuf,
    /// The session the host started the server for, when the host says
    /// (Claude Code's `CLAUDE_CODE_SESSION_ID`); it wins over the
    /// directory, and is followed to its successor after `/clear`.
    pub launched: Option<SessionId>,
}

/// The name of the goal-mode context prompt.
pub const GOAL_MODE_CONTEXT: &str = "goal-mode-context";

type Clock = Box<dyn Fn() -> Result<i64> + Send + Sync>;
type Log = Box<dyn Fn(&str) + Send + Sync>;

/// The goalkeeper MCP server for one session.
pub struct McpServer {
    store: Mutex<Store>,
    /// The server's caller, which keeps the list of its last todo call:
    /// locked after `store`.
    caller: Mutex<Caller>,
    session: SessionId,
    /// Where the session comes from instead, when a host names it.
    session_source: Option<SessionSource>,
    tools: Vec<ToolSpec>,
    injector: Injector,
    clock: Clock,
    pub(super) log: Log,
    /// The store's calls go to tokio's blocking pool
    /// ([`Store::needs_own_thread`]) instead of running on the protocol's
    /// thread.
    pub(super) off_thread: bool,
}

impl McpServer {
    /// A server for `session` on `store`. The tools' descriptions come from
    /// the templates of `settings` (`prompts.dir`); the `todo` tool is
    /// offered only while `todo.enabled`. The clock defaults to the system
    /// clock and the log to nothing.
    pub fn new(store: Store, session: SessionId, settings: Settings) -> Result<McpServer> {
        let off_thread = store.needs_own_thread();
        let injector = Injector::from_settings(settings)?;
        let todo_enabled = injector.settings().todo.enabled;
        let tools = ToolSpec::all(injector.templates())?
            .into_iter()
            .filter(|spec| todo_enabled || spec.name != TODO)
            .collect();
        Ok(McpServer {
            store: Mutex::new(store),
            caller: Mutex::new(kept_lists(Caller::default())),
            session,
            session_source: None,
            tools,
            injector,
            clock: Box::new(|| Ok(crate::time::system_now_ms())),
            log: Box::new(|_| {}),
            off_thread,
        })
    }

    /// Reads the time (milliseconds since the epoch) from `clock`, once per
    /// call.
    /// Makes the server's calls `caller`'s: the agent they act as and where
    /// their checks are judged. Whatever it says, the server keeps its
    /// lists: one process, many calls, and a call that follows the
    /// server's own last one reuses the list instead of reading it back.
    pub fn with_caller(mut self, caller: Caller) -> Self {
        let caller = judging(kept_lists(caller), self.session_source.as_ref());
        self.caller = Mutex::new(caller);
        self
    }

    pub fn with_clock(mut self, clock: impl Fn() -> Result<i64> + Send + Sync + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    /// Resolves the session on every call from `source` (DESIGN.md §8
    /// `--session-from`), falling back to the session given to
    /// [`McpServer::new`] while the host has not run in the directory.
    /// Its checks are judged in the directory the host's session runs
    /// in, as the host's events recorded it, not in the server's own
    /// (Codex runs a plugin's server in the plugin's folder).
    pub fn with_session_source(mut self, source: SessionSource) -> Self {
        let caller = std::mem::take(
            self.caller
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        );
        self.caller = Mutex::new(judging(caller, Some(&source)));
        self.session_source = Some(source);
        self
    }

    /// Whether a host started this server for its session
    /// ([`McpServer::with_session_source`]): only then does a call's
    /// `_meta` name the agent making it.
    pub fn follows_host(&self) -> bool {
        self.session_source.is_some()
    }

    /// Sends one line per server-side failure (a storage error) to `log`.
    pub fn with_log(mut self, log: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.log = Box::new(log);
        self
    }

    /// The tools this server offers.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// Runs one tool call. Never fails: a rejected or malformed call, an
    /// unknown tool and a storage failure (also logged) are error results.
    #[cfg(test)]
    pub fn call(&self, tool: &str, arguments: &Value) -> ExecResult {
        self.run(tool, arguments, false, None, None).into_json()
    }

    /// [`McpServer::call`], with the details still typed; `list_free`
    /// answers a `todo` call without its list (what the protocol sends).
    /// The call acts as the agent `from` names (the one a hook recorded
    /// for the host's tool-use id, or the one the call names:
    /// [`Caller::act_for_call`]), else as the session's own agent. A server
    /// that follows Codex acts on the session the call names (`named`,
    /// from its `_meta`) when it names one.
    pub(super) fn run(
        &self,
        tool: &str,
        arguments: &Value,
        list_free: bool,
        from: Option<CallFrom>,
        named: Option<&SessionId>,
    ) -> Executed {
        if !self.tools.iter().any(|spec| spec.name == tool) {
            let offered: Vec<&str> = self.tools.iter().map(|spec| spec.name).collect();
            return Executed::Other(unknown_tool(tool, &offered));
        }
        let follows_codex = self
            .session_source
            .as_ref()
            .is_some_and(|source| source.host == Host::Codex);
        let target: &dyn SessionRef = match named {
            Some(session) if follows_codex => session,
            _ => self,
        };
        let outcome = (self.clock)().and_then(|now_ms| {
            let mut store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
            let mut caller = self.caller.lock().unwrap_or_else(PoisonError::into_inner);
            caller.act_for_call(from);
            tool_call::run(
                &mut store,
                &mut caller,
                target,
                tool,
                arguments,
                now_ms,
                list_free,
            )
        });
        outcome.unwrap_or_else(|e| {
            (self.log)(&format!("{tool} call failed: {e}"));
            Executed::Other(ExecResult::new(
                format!("goalkeeper could not run the {tool} call: {e}"),
                Value::Null,
                true,
            ))
        })
    }

    /// The goal-mode context of the session (DESIGN.md §3.4) with both tools
    /// active, or why there is none.
    pub fn goal_mode_context(&self) -> Result<std::result::Result<String, String>> {
        let now_ms = (self.clock)()?;
        let active: Vec<String> = self.tools.iter().map(|s| s.name.to_owned()).collect();
        let store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        let caller = self.caller.lock().unwrap_or_else(PoisonError::into_inner);
        let message = store.read(self, |tx| {
            crate::turn::goal_mode_context(tx, &caller, &self.injector, &active, now_ms)
        })?;
        Ok(message
            .map(|m| m.content)
            .map_err(|gate| format!("no goal-mode context: {gate}")))
    }
}

/// `caller`, judging checks in the directory the session's host recorded
/// for it when the server follows a host.
fn judging(mut caller: Caller, source: Option<&SessionSource>) -> Caller {
    if let Some(source) = source {
        caller.judge_in_marked(open_session::dir_mark(source.host));
    }
    caller
}

/// `caller`, keeping its lists: a server is one process of many calls.
fn kept_lists(mut caller: Caller) -> Caller {
    caller.keep_lists();
    caller
}

/// The session a call acts on, read in the call's own transaction: the
/// host's current session when the server follows one, else the server's.
impl SessionRef for McpServer {
    fn resolve(&self, pointer: &mut PointerRead<'_>) -> Result<SessionId> {
        let Some(source) = &self.session_source else {
            return Ok(self.session.clone());
        };
        if let Some(launched) = &source.launched {
            return host_session::follow_with(pointer, source.host, launched);
        }
        Ok(host_session::last_with(pointer, source.host, &source.dir)?
            .unwrap_or_else(|| self.session.clone()))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::error::Error;
    use std::sync::Arc;

    fn server(settings: Settings) -> McpServer {
        let session = SessionId::parse("s").unwrap();
        McpServer::new(Store::open_in_memory().unwrap(), session, settings).unwrap()
    }

    /// One call (and one prompt read) is one transaction, the read of the
    /// host's session pointer included; it acts on the host's session.
    #[test]
    fn a_call_that_follows_a_host_is_one_transaction() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open_in_memory().unwrap();
        let host_session = SessionId::parse("codex-1").unwrap();
        host_session::record(&mut store, Host::Codex, dir.path(), &host_session, 0).unwrap();
        let source = SessionSource {
            host: Host::Codex,
            dir: dir.path().to_owned(),
            launched: None,
        };
        let server = McpServer::new(store, SessionId::parse("s").unwrap(), Settings::default())
            .unwrap()
            .with_clock(|| Ok(1_000))
            .with_session_source(source);
        let calls: [(&str, Value); 3] = [
            ("goal", json!({"op": "create", "objective": "Ship"})),
            ("todo", json!({"op": "init", "items": ["a"]})),
            ("todo", json!({"op": "view"})),
        ];
        for (tool, arguments) in calls {
            let before = crate::store::transactions_begun();
            let result = server.call(tool, &arguments);
            assert!(!result.is_error, "{}", result.text());
            assert_eq!(
                crate::store::transactions_begun() - before,
                1,
                "{tool} {arguments}"
            );
        }
        let before = crate::store::transactions_begun();
        assert!(server.goal_mode_context().unwrap().is_ok());
        assert_eq!(crate::store::transactions_begun() - before, 1);
        let store = server.store.lock().unwrap();
        assert_eq!(
            store
                .read(&host_session, |tx| tx.goal())
                .unwrap()
                .unwrap()
                .objective,
            "Ship"
        );
        assert_eq!(
            store.read(&host_session, |tx| tx.todo_version()).unwrap(),
            1
        );
        assert_eq!(
            store
                .read(&SessionId::parse("s").unwrap(), |tx| tx.goal())
                .unwrap(),
            None
        );
    }

    #[test]
    fn the_clock_is_read_for_every_call() {
        let ticks = std::sync::atomic::AtomicI64::new(1_000);
        let server = server(Settings::default())
            .with_clock(move || Ok(ticks.fetch_add(1_000, std::sync::atomic::Ordering::SeqCst)));
        let created = server.call("goal", &json!({"op": "create", "objective": "Ship"}));
        assert_eq!(created.details["goal"]["created_at"], 1_000);
        let completed = server.call("goal", &json!({"op": "complete"}));
        assert_eq!(completed.details["goal"]["updated_at"], 2_000);
    }

    #[test]
    fn without_todo_enabled_only_the_goal_tool_is_offered() {
        let mut settings = Settings::default();
        settings.apply_set("todo.enabled=false").unwrap();
        let server = server(settings);
        let names: Vec<&str> = server.tools().iter().map(|t| t.name).collect();
        assert_eq!(names, ["goal"]);
        let result = server.call("todo", &json!({"op": "view"}));
        assert!(result.is_error);
        assert_eq!(result.text(), "unknown tool `todo`; the tools are goal");
    }

    #[test]
    fn a_failing_clock_is_an_error_result_and_logged() {
        let logged = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = Arc::clone(&logged);
        let server = server(Settings::default())
            .with_clock(|| Err(Error::Usage("no clock".into())))
            .with_log(move |line| sink.lock().unwrap().push(line.to_owned()));
        let result = server.call("todo", &json!({"op": "view"}));
        assert!(result.is_error);
        assert_eq!(
            result.text(),
            "goalkeeper could not run the todo call: no clock"
        );
        assert_eq!(*logged.lock().unwrap(), ["todo call failed: no clock"]);
    }
}
