//! The rmcp handler: the protocol's side of [`McpServer`] (its tools,
//! its prompt, and the MCP shape of a result), running each call on the
//! store one at a time.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListToolsResult,
    PaginatedRequestParams, Prompt, PromptMessage, Role, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value};

use super::relay::RAW_ARGUMENTS;
use super::server::{GOAL_MODE_CONTEXT, McpServer};
use super::tool_call::{ExecResult, Executed};
use crate::integrations::claude_code::TOOL_USE_META;
use crate::integrations::codex::{calling_session, calling_subagent};
use crate::store::CallFrom;

/// The rmcp handler: shares the server with the blocking store calls.
/// rmcp spawns a task per request; `turn` (a fair lock) runs the calls one
/// at a time. On a current-thread runtime, as in `goalkeeper mcp`, tasks
/// first run in spawn order, so they take their turn in the order the
/// requests arrived: a client that pipelines `init` then `done` gets them
/// in that order.
pub(super) struct Handler {
    server: Arc<McpServer>,
    turn: tokio::sync::Mutex<()>,
}

impl Handler {
    /// The handler of `server`.
    pub(super) fn new(server: Arc<McpServer>) -> Handler {
        Handler {
            server,
            turn: tokio::sync::Mutex::new(()),
        }
    }

    /// Whose a `tools/call` is, as its `_meta` tells (DESIGN.md §9): Claude
    /// Code names the call's tool use, which its hook may have recorded as
    /// a subagent's; Codex names a subagent's thread. A thread that cannot
    /// name an agent is logged, and the call is the main agent's.
    ///
    /// Only a server a host started for its session (`--session-from
    /// HOST`) reads `_meta` so: there the host tells its subagents' calls
    /// from its main agent's, whom `--agent` names. Any other server acts
    /// as its `--agent` (or the session's own agent) whatever a client
    /// puts in `_meta`.
    fn call_from(&self, meta: &Map<String, Value>) -> Option<CallFrom> {
        if !self.server.follows_host() {
            return None;
        }
        if let Some(id) = meta.get(TOOL_USE_META).and_then(Value::as_str) {
            return Some(CallFrom::ToolUse(id.to_owned()));
        }
        match calling_subagent(meta)? {
            Ok(agent) => Some(CallFrom::Agent(agent)),
            Err(why) => {
                (self.server.log)(&why);
                None
            }
        }
    }

    /// Runs `work` (one call: one store transaction) and returns what it
    /// returned, or what it said if it panicked. On SQLite it runs here,
    /// on the protocol's thread: a call is short, and handing it to tokio's
    /// blocking pool and back would add two thread switches to every
    /// round trip. While it waits for another process's write lock
    /// (commands hold it briefly; the busy timeout bounds the wait) the
    /// server reads no other message; calls take turns anyway. On
    /// PostgreSQL, whose calls wait on the network, it goes to the
    /// blocking pool ([`Store::needs_own_thread`](crate::Store::needs_own_thread)).
    async fn on_store<T: Send + 'static>(
        &self,
        work: impl FnOnce(&McpServer) -> T + Send + 'static,
    ) -> std::result::Result<T, String> {
        if self.server.off_thread {
            let server = Arc::clone(&self.server);
            return tokio::task::spawn_blocking(move || work(&server))
                .await
                .map_err(|e| match e.try_into_panic() {
                    Ok(panic) => panic_text(panic.as_ref()).to_owned(),
                    Err(e) => e.to_string(),
                });
        }
        std::panic::catch_unwind(AssertUnwindSafe(|| work(&self.server)))
            .map_err(|panic| panic_text(panic.as_ref()).to_owned())
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("goalkeeper", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        let tools = self.server.tools().iter().map(|spec| {
            let schema = spec.input_schema.as_object().cloned().unwrap_or_default();
            Tool::new(spec.name, spec.description.clone(), schema)
        });
        Ok(ListToolsResult::with_all_items(tools.collect()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let arguments = match context.meta.remove(RAW_ARGUMENTS) {
            Some(raw) => raw,
            None => Value::Object(request.arguments.unwrap_or_default()),
        };
        let from = self.call_from(&context.meta.0);
        let session = calling_session(&context.meta.0);
        let _turn = self.turn.lock().await;
        let name = request.name.into_owned();
        let result = self
            .on_store(move |server| server.run(&name, &arguments, true, from, session.as_ref()))
            .await
            .unwrap_or_else(|why| {
                (self.server.log)(&format!("a tool call panicked: {why}"));
                Executed::Other(ExecResult::new(
                    format!("goalkeeper failed while running the call: {why}"),
                    Value::Null,
                    true,
                ))
            });
        Ok(tool_result(result).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListPromptsResult, ErrorData> {
        let prompt = Prompt::new(
            GOAL_MODE_CONTEXT,
            Some("The session's active goal and its todo list, as goalkeeper injects them"),
            None,
        );
        Ok(ListPromptsResult::with_all_items(vec![prompt]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<GetPromptResponse, ErrorData> {
        if request.name != GOAL_MODE_CONTEXT {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown prompt `{}`; the prompts are {GOAL_MODE_CONTEXT}",
                    request.name
                ),
                None,
            ));
        }
        let _turn = self.turn.lock().await;
        let context = self
            .on_store(McpServer::goal_mode_context)
            .await
            .map_err(|why| {
                ErrorData::internal_error(
                    format!("goalkeeper failed while rendering the context: {why}"),
                    None,
                )
            })?;
        match context {
            Ok(Ok(text)) => {
                let message = PromptMessage::new_text(Role::User, text);
                Ok(GetPromptResult::new(vec![message]).into())
            }
            Ok(Err(closed)) => Err(ErrorData::invalid_params(closed, None)),
            Err(e) => {
                (self.server.log)(&format!("{GOAL_MODE_CONTEXT} failed: {e}"));
                Err(ErrorData::internal_error(e.to_string(), None))
            }
        }
    }
}

/// The MCP shape of a tool result: the summary as the only content, and
/// `isError`. No `structuredContent`: Claude Code and Codex send only that
/// to the model when it is present, so the model would read JSON instead
/// of the summary (DESIGN.md §2.4, §9). A few facts for programs (the op, the
/// list's version, how many tasks the call completed, the goal's status
/// and tokens) go in `_meta` under `goalkeeper/result`, which hosts do not
/// show the model.
fn tool_result(result: Executed) -> CallToolResult {
    let (text, is_error, facts) = match result {
        // The facts straight from the typed details: turning a long list
        // into JSON only to count its completed tasks cost more than the
        // rest of the call.
        Executed::Todo(result) => {
            let mut facts = Map::new();
            if let Some(op) = &result.details.op {
                facts.insert("op".into(), op.as_str().into());
            }
            facts.insert("version".into(), result.details.version.into());
            facts.insert(
                "completed_tasks".into(),
                result.details.completed_tasks.len().into(),
            );
            let text = result.text().to_owned();
            (text, result.is_error, Some(Value::Object(facts)))
        }
        Executed::TodoAnswer(answer) => {
            let mut facts = Map::new();
            if let Some(op) = answer.op {
                facts.insert("op".into(), op.into());
            }
            facts.insert("version".into(), answer.version.into());
            facts.insert("completed_tasks".into(), answer.completed_tasks.into());
            (answer.text, answer.is_error, Some(Value::Object(facts)))
        }
        other => {
            let result = other.into_json();
            let facts = result_facts(&result.details);
            (result.text().to_owned(), result.is_error, facts)
        }
    };
    let mut out = if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    if let Some(facts) = facts {
        let mut meta = Map::new();
        meta.insert(RESULT_META.into(), facts);
        out.meta = Some(rmcp::model::MetaObject(meta));
    }
    out
}

/// The `_meta` key of a result's facts.
pub const RESULT_META: &str = "goalkeeper/result";

/// The small facts of a result's details, whatever the list's size.
fn result_facts(details: &Value) -> Option<Value> {
    let details = details.as_object()?;
    let mut facts = Map::new();
    for key in ["op", "version"] {
        if let Some(value) = details.get(key).filter(|v| !v.is_null()) {
            facts.insert(key.into(), value.clone());
        }
    }
    if let Some(done) = details.get("completed_tasks").and_then(Value::as_array) {
        facts.insert("completed_tasks".into(), done.len().into());
    }
    if let Some(goal) = details.get("goal").and_then(Value::as_object) {
        let small: Map<String, Value> = ["id", "status", "tokens_used", "token_budget"]
            .into_iter()
            .filter_map(|k| goal.get(k).map(|v| (k.to_owned(), v.clone())))
            .collect();
        facts.insert("goal".into(), Value::Object(small));
    }
    (!facts.is_empty()).then_some(Value::Object(facts))
}

/// What a caught panic says, when it said it with a string.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic")
}
