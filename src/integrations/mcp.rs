//! The MCP server (DESIGN.md §9): the `todo` and `goal` tools, and the
//! goal-mode context as a prompt, for one session over newline-delimited
//! JSON-RPC (stdio in `goalkeeper mcp`).
//!
//! A tool call becomes a tool result: the summary as text content (never
//! the list as JSON), a few facts in `_meta`, `isError` when the call was
//! rejected. A
//! rejected or malformed call is a result the model can read and fix, never
//! a JSON-RPC error. Every call is one immediate store transaction, so
//! several servers on one session stay consistent.
//!
//! rmcp reads `tools/call` arguments as a JSON object and answers anything
//! else with an id-less "Invalid request". So that an array or a string gets
//! the engine's own error instead, [`serve`] relays the input line by line
//! and moves non-object arguments into the request's `_meta`, where
//! [`McpServer`] picks them up.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListToolsResult,
    PaginatedRequestParams, Prompt, PromptMessage, Role, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, ServerInitializeError};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

use super::agent_tools::{self, ExecResult, Executed, TODO, ToolSpec, unknown_tool};
use super::host_session::{self, Host};
use crate::error::{Error, Result};
use crate::prompt::Injector;
use crate::store::{PointerRead, SessionRef};
use crate::{SessionId, Settings, Store};

/// The `_meta` key that carries `tools/call` arguments which are not a JSON
/// object, past rmcp's typed parsing, to the engine.
const RAW_ARGUMENTS: &str = "goalkeeper/arguments";

/// The longest input line the relay passes on (rmcp's own line limit);
/// a longer one is answered with an error and skipped.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// Which host session an MCP server follows.
#[derive(Clone, Debug)]
pub struct SessionSource {
    /// The host that started the server.
    pub host: Host,
    /// The directory it runs in: the host's last session there is the one.
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
    session: SessionId,
    /// Where the session comes from instead, when a host names it.
    session_source: Option<SessionSource>,
    tools: Vec<ToolSpec>,
    injector: Injector,
    clock: Clock,
    log: Log,
    /// The store's calls go to tokio's blocking pool
    /// ([`Store::needs_own_thread`]) instead of running on the protocol's
    /// thread.
    off_thread: bool,
}

impl McpServer {
    /// A server for `session` on `store`. The tools' descriptions come from
    /// the templates of `settings` (`prompts.dir`); the `todo` tool is
    /// offered only while `todo.enabled`. The clock defaults to the system
    /// clock and the log to nothing.
    pub fn new(mut store: Store, session: SessionId, settings: Settings) -> Result<McpServer> {
        // One process, many calls: a call that follows this server's own
        // last one reuses the list instead of reading it back.
        store.keep_lists();
        let off_thread = store.needs_own_thread();
        let injector = Injector::from_settings(settings)?;
        let todo_enabled = injector.settings().todo.enabled;
        let tools = ToolSpec::all(injector.templates())?
            .into_iter()
            .filter(|spec| todo_enabled || spec.name != TODO)
            .collect();
        Ok(McpServer {
            store: Mutex::new(store),
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
    pub fn with_clock(mut self, clock: impl Fn() -> Result<i64> + Send + Sync + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    /// Resolves the session on every call from `source` (DESIGN.md §8
    /// `--session-from`), falling back to the session given to
    /// [`McpServer::new`] while the host has not run in the directory.
    pub fn with_session_source(mut self, source: SessionSource) -> Self {
        self.session_source = Some(source);
        self
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
    pub fn call(&self, tool: &str, arguments: &Value) -> ExecResult {
        self.run(tool, arguments, false).into_json()
    }

    /// [`McpServer::call`], with the details still typed; `list_free`
    /// answers a `todo` call without its list (what the protocol sends).
    fn run(&self, tool: &str, arguments: &Value, list_free: bool) -> Executed {
        if !self.tools.iter().any(|spec| spec.name == tool) {
            let offered: Vec<&str> = self.tools.iter().map(|spec| spec.name).collect();
            return Executed::Other(unknown_tool(tool, &offered));
        }
        let outcome = (self.clock)().and_then(|now_ms| {
            let mut store = self.store.lock().unwrap_or_else(PoisonError::into_inner);
            agent_tools::run(&mut store, self, tool, arguments, now_ms, list_free)
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
        let tx = store.begin_read_for(self)?;
        let message = tx.goal_mode_context(&self.injector, &active, now_ms)?;
        tx.commit()?;
        Ok(message
            .map(|m| m.content)
            .map_err(|gate| format!("no goal-mode context: {gate}")))
    }
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

/// Serves `server` over newline-delimited JSON-RPC until `input` ends.
/// Only JSON-RPC goes to `output`. Run it on a current-thread runtime to
/// keep pipelined calls in arrival order.
///
/// Every request gets an answer (DESIGN.md §9): the relay answers what rmcp would
/// drop in silence itself, a line that is not JSON (`-32700`, id null), a
/// line that is not UTF-8 (`-32700`, with the request's id when it can be
/// read), a line over 16 MiB (`-32600`, read to its end in bounded memory)
/// and a message that is not a JSON object (`-32600`). Its answers and
/// rmcp's go to `output` whole lines at a time, through one writer.
pub async fn serve<R, W>(server: McpServer, input: R, output: W) -> Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (relay_end, rmcp_end) = tokio::io::duplex(64 * 1024);
    let (rmcp_out, rmcp_out_reader) = tokio::io::duplex(64 * 1024);
    let (lines, outgoing) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(write_lines(outgoing, output));
    let forward = tokio::spawn(forward_lines(rmcp_out_reader, lines.clone()));
    let relay = tokio::spawn(relay(input, relay_end, lines));
    let handler = Handler {
        server: Arc::new(server),
        turn: tokio::sync::Mutex::new(()),
    };
    let result = match handler.serve((rmcp_end, rmcp_out)).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| io_error("the MCP server stopped", e)),
        // The client left before the handshake: nothing to serve.
        Err(ServerInitializeError::ConnectionClosed(_)) => Ok(()),
        Err(e) => Err(io_error("the MCP handshake failed", e)),
    };
    relay.abort();
    // rmcp's side is closed: the forwarder ends, then the writer once every
    // sender is gone, after writing what is left.
    let _ = forward.await;
    let _ = relay.await;
    let _ = writer.await;
    result
}

/// Writes each line from `lines` to `output`, flushing after each.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut lines: tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>,
    mut output: W,
) {
    while let Some(line) = lines.recv().await {
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
    let _ = output.shutdown().await;
}

/// Passes rmcp's output on, a whole line at a time.
async fn forward_lines<R: AsyncRead + Unpin>(
    input: R,
    lines: tokio::sync::mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut input = BufReader::new(input);
    loop {
        let mut line = Vec::new();
        match input.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                if lines.send(line).is_err() {
                    break;
                }
            }
        }
    }
}

/// What a caught panic says, when it said it with a string.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic")
}

fn io_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Io {
        what: what.into(),
        source: std::io::Error::other(e.to_string()),
    }
}

/// Copies `input` to `output` line by line, lifting non-object tool
/// arguments into `_meta` ([`lift_arguments`]) and answering on `answers`
/// the lines rmcp cannot read ([`check_line`]).
async fn relay<R, W>(input: R, mut output: W, answers: tokio::sync::mpsc::UnboundedSender<Vec<u8>>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = (MAX_LINE + 1) as u64;
        match (&mut input).take(limit).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            // Too long: answer from what the first bytes say, and skip the
            // rest of the line without keeping it.
            let id = id_in_prefix(&line);
            if !skip_line(&mut input).await {
                let _ = answers.send(error_line(id, -32600, TOO_LONG));
                break;
            }
            let _ = answers.send(error_line(id, -32600, TOO_LONG));
            continue;
        }
        match check_line(&line) {
            Checked::Skip => continue,
            Checked::Answer(answer) => {
                let _ = answers.send(answer);
                continue;
            }
            Checked::Pass => {}
        }
        let lifted = lift_arguments(&line);
        let mut bytes = lifted.unwrap_or_else(|| line.clone());
        if !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        if output.write_all(&bytes).await.is_err() {
            break;
        }
    }
    let _ = output.shutdown().await;
}

const TOO_LONG: &str = "Invalid Request: the message is longer than 16 MiB; send smaller calls";

/// Reads up to and including the next newline, keeping nothing. False at
/// the end of the input.
async fn skip_line<R: AsyncRead + Unpin>(input: &mut BufReader<R>) -> bool {
    loop {
        let buffer = match input.fill_buf().await {
            Ok([]) | Err(_) => return false,
            Ok(buffer) => buffer,
        };
        match buffer.iter().position(|&b| b == b'\n') {
            Some(i) => {
                input.consume(i + 1);
                return true;
            }
            None => {
                let n = buffer.len();
                input.consume(n);
            }
        }
    }
}

/// What the relay does with one complete line.
enum Checked {
    /// A blank line: nothing to answer or pass.
    Skip,
    /// Not something rmcp can read: this answer instead.
    Answer(Vec<u8>),
    /// A JSON object: rmcp's.
    Pass,
}

fn check_line(line: &[u8]) -> Checked {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Checked::Skip;
    }
    if let Err(e) = std::str::from_utf8(line) {
        // Read the id from the text with the bad bytes replaced, so the
        // client's request is answered by its id.
        let lossy = String::from_utf8_lossy(line);
        let id = serde_json::from_str::<Value>(&lossy)
            .ok()
            .and_then(|m| m.get("id").cloned())
            .unwrap_or(Value::Null);
        return Checked::Answer(error_line(
            id,
            -32700,
            &format!(
                "Parse error: the message is not valid UTF-8 (invalid byte at offset {}); send UTF-8 text",
                e.valid_up_to()
            ),
        ));
    }
    match serde_json::from_slice::<Value>(line) {
        Err(e) => Checked::Answer(error_line(
            Value::Null,
            -32700,
            &format!("Parse error: {e}"),
        )),
        Ok(Value::Object(_) | Value::Array(_)) => Checked::Pass,
        Ok(_) => Checked::Answer(error_line(
            Value::Null,
            -32600,
            "Invalid Request: a JSON-RPC message is a JSON object",
        )),
    }
}

/// One JSON-RPC error response line.
fn error_line(id: Value, code: i64, message: &str) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    }))
    .expect("an error response serializes");
    bytes.push(b'\n');
    bytes
}

/// The `"id"` of a message whose line is too long to parse, when it comes
/// early (clients write `jsonrpc`, `id`, `method` first): a number or a
/// plain string after the first `"id"` key of the first 4 KiB; else null.
fn id_in_prefix(line: &[u8]) -> Value {
    let prefix = &line[..line.len().min(4096)];
    let text = String::from_utf8_lossy(prefix);
    let Some(at) = text.find("\"id\"") else {
        return Value::Null;
    };
    let rest = text[at + 4..].trim_start();
    let Some(rest) = rest.strip_prefix(':') else {
        return Value::Null;
    };
    let rest = rest.trim_start();
    let end = rest
        .find(|c: char| c == ',' || c == '}' || c.is_whitespace())
        .unwrap_or(rest.len());
    match serde_json::from_str::<Value>(&rest[..end]) {
        Ok(id @ (Value::Number(_) | Value::String(_))) => id,
        _ => Value::Null,
    }
}

/// A `tools/call` request line whose `arguments` are present but not an
/// object (nor null), rewritten with them under `_meta`; `None` for every
/// other line, which passes unchanged.
fn lift_arguments(line: &[u8]) -> Option<Vec<u8>> {
    let mut message: Value = serde_json::from_slice(line).ok()?;
    if message.get("method")?.as_str()? != "tools/call" {
        return None;
    }
    let params = message.get_mut("params")?.as_object_mut()?;
    if params
        .get("arguments")
        .is_none_or(|a| a.is_object() || a.is_null())
    {
        return None;
    }
    if !params.get("_meta").is_none_or(Value::is_object) {
        return None;
    }
    let arguments = params.remove("arguments")?;
    params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()?
        .insert(RAW_ARGUMENTS.into(), arguments);
    let mut bytes = serde_json::to_vec(&message).ok()?;
    bytes.push(b'\n');
    Some(bytes)
}

/// The rmcp handler: shares the server with the blocking store calls.
/// rmcp spawns a task per request; `turn` (a fair lock) runs the calls one
/// at a time. On a current-thread runtime, as in `goalkeeper mcp`, tasks
/// first run in spawn order, so they take their turn in the order the
/// requests arrived: a client that pipelines `init` then `done` gets them
/// in that order.
struct Handler {
    server: Arc<McpServer>,
    turn: tokio::sync::Mutex<()>,
}

impl Handler {
    /// Runs `work` (one call: one store transaction) and returns what it
    /// returned, or what it said if it panicked. On SQLite it runs here,
    /// on the protocol's thread: handing it to tokio's blocking pool and
    /// back cost two thread switches, about 0.08 ms of a 0.2-0.4 ms round
    /// trip (BENCHMARKS.md, "Eighth pass"). While it waits for another
    /// process's write lock (commands hold it a millisecond or two; the
    /// busy timeout bounds the wait) the server reads no other message;
    /// calls take turns anyway. On PostgreSQL it goes to the blocking pool
    /// ([`Store::needs_own_thread`]).
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
        let _turn = self.turn.lock().await;
        let name = request.name.into_owned();
        let result = self
            .on_store(move |server| server.run(&name, &arguments, true))
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

    fn lifted(line: &Value) -> Option<Value> {
        let mut text = line.to_string();
        text.push('\n');
        lift_arguments(text.as_bytes()).map(|b| serde_json::from_slice(&b).unwrap())
    }

    #[test]
    fn non_object_arguments_move_into_meta() {
        let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "todo", "arguments": [1, 2]}});
        assert_eq!(
            lifted(&call),
            Some(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "todo", "_meta": {"goalkeeper/arguments": [1, 2]}}}))
        );
        let with_meta = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "goal", "arguments": "get", "_meta": {"progressToken": 1}}});
        assert_eq!(
            lifted(&with_meta).unwrap()["params"]["_meta"],
            json!({"progressToken": 1, "goalkeeper/arguments": "get"})
        );
    }

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
                .current_goal(&host_session)
                .unwrap()
                .unwrap()
                .objective,
            "Ship"
        );
        assert_eq!(store.todo_version(&host_session).unwrap(), 1);
        assert_eq!(
            store.current_goal(&SessionId::parse("s").unwrap()).unwrap(),
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

    /// A call that panics (here, its clock) still gets its answer, an
    /// error result, and is logged; the server goes on serving. On the
    /// protocol's thread (SQLite) and in the blocking pool (PostgreSQL's
    /// way, [`Store::needs_own_thread`]).
    #[test]
    fn a_panicking_call_is_answered_and_the_server_goes_on() {
        for off_thread in [false, true] {
            panicking_call_is_answered(off_thread);
        }
    }

    fn panicking_call_is_answered(off_thread: bool) {
        let logged = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = Arc::clone(&logged);
        let mut server = server(Settings::default())
            .with_clock(|| panic!("the clock broke"))
            .with_log(move |line| sink.lock().unwrap().push(line.to_owned()));
        server.off_thread = off_thread;
        let requests = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "todo", "arguments": {"op": "view"}}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
        ];
        let input: String = requests.iter().map(|r| format!("{r}\n")).collect();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let output = runtime.block_on(async {
            let (mut client, server_end) = tokio::io::duplex(1 << 16);
            let (server_in, server_out) = tokio::io::split(server_end);
            let served = tokio::spawn(serve(server, server_in, server_out));
            client.write_all(input.as_bytes()).await.unwrap();
            let mut lines = BufReader::new(client).lines();
            let mut answers = Vec::new();
            while answers.len() < 3 {
                let line = lines.next_line().await.unwrap().expect("an answer");
                answers.push(serde_json::from_str::<Value>(&line).unwrap());
            }
            drop(lines);
            served.await.unwrap().unwrap();
            answers
        });
        // Off the thread, the ping may be answered while the call runs.
        let by_id = |id: i64| output.iter().find(|a| a["id"] == id).expect("an answer");
        let call = by_id(2);
        assert_eq!(call["result"]["isError"], true);
        assert_eq!(
            call["result"]["content"][0]["text"],
            "goalkeeper failed while running the call: the clock broke"
        );
        assert_eq!(by_id(3), &json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
        assert_eq!(
            *logged.lock().unwrap(),
            ["a tool call panicked: the clock broke"]
        );
    }

    #[test]
    fn other_lines_pass_unchanged() {
        for line in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "todo", "arguments": {"op": "view"}}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "todo", "arguments": null}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "todo"}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"arguments": 1}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "todo", "arguments": 1, "_meta": 5}}),
        ] {
            assert_eq!(lifted(&line), None, "{line}");
        }
        assert_eq!(lift_arguments(b"not json\n"), None);
    }
}
