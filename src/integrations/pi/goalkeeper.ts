/**
 * goalkeeper for pi: the `todo` and `goal` tools, the goal-mode context
 * before every model call, the continuation when the agent stops with the
 * goal active, and token usage, all from the goalkeeper CLI.
 *
 * Written by `goalkeeper install pi`, which fills in GOALKEEPER and TOOLS
 * (edits are overwritten by the next install; the previous file is kept as
 * a backup), and by `goalkeeper package` into goalkeeper's pi package.
 * Every goalkeeper call is a short process: a tool call runs
 * `goalkeeper --session <pi session> --json <tool> apply -`, the events run
 * `goalkeeper hook pi` with a small JSON event on stdin.
 */
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { TSchema } from "typebox";
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/**
 * The npm packages that carry goalkeeper's binary, by `<platform> <arch>`,
 * and `<platform> <arch> musl` for musl systems (`goalkeeper package`
 * writes them here for its pi package).
 */
const PLATFORM_PACKAGES: Record<string, string> = {};

/** How to run goalkeeper (`goalkeeper install pi` writes its path here). */
const GOALKEEPER: string = findGoalkeeper("goalkeeper");

/**
 * `command`, when given; else (goalkeeper's pi package) the binary in
 * `bin/` beside this file's folder, else the one the package's platform
 * dependency brings. A binary found nowhere is reported when it is run.
 */
function findGoalkeeper(command: string): string {
  if (command !== "") {
    return command;
  }
  const exe = process.platform === "win32" ? "goalkeeper.exe" : "goalkeeper";
  const beside = fileURLToPath(new URL(`../bin/${exe}`, import.meta.url));
  if (existsSync(beside)) {
    return beside;
  }
  // On Linux, the package for either C library: their binaries are static.
  const machine = `${process.platform} ${process.arch}`;
  for (const key of [machine, `${machine} musl`]) {
    const platform = PLATFORM_PACKAGES[key];
    if (platform === undefined) {
      continue;
    }
    try {
      return createRequire(import.meta.url).resolve(`${platform}/bin/${exe}`);
    } catch {
      // Not installed: the next one, else the folder beside.
    }
  }
  return beside;
}

/** The variable that names the session to a command run in pi's `bash`. */
const SESSION_VARIABLE = "GOALKEEPER_PI_SESSION";

/** One tool as goalkeeper describes it. */
interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** The tools (`goalkeeper install pi` writes them here). */
const TOOLS: ToolSpec[] = [];

/** A hidden message goalkeeper asks to inject. */
interface Hidden {
  customType: string;
  content: string;
}

/** What `goalkeeper hook pi` answers. */
interface HookReply {
  context?: Hidden;
  followUp?: Hidden;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs goalkeeper with `input` on stdin; never rejects. */
function run(args: string[], input: string): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(GOALKEEPER, args, { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("error", (error: Error) => resolve({ code: null, stdout, stderr: String(error) }));
    child.on("close", (code: number | null) => resolve({ code, stdout, stderr }));
    child.stdin.on("error", () => undefined);
    child.stdin.end(input);
  });
}

/**
 * One event for `goalkeeper hook pi`; problems go to stderr, never to pi.
 * Synchronous on purpose: `pi -p` may end the session while a handler
 * awaits, and the continuation must be queued within `turn_end` itself.
 * The hook's own database wait is bounded; the timeout bounds the rest.
 */
function hook(ctx: ExtensionContext, name: string, fields: Record<string, unknown> = {}): HookReply {
  const event = { hook_event_name: name, session_id: ctx.sessionManager.getSessionId(), cwd: ctx.cwd, ...fields };
  const done = spawnSync(GOALKEEPER, ["hook", "pi"], {
    input: JSON.stringify(event),
    encoding: "utf8",
    timeout: 30_000,
  });
  const ran: Ran = {
    code: done.status,
    stdout: done.stdout ?? "",
    stderr: done.error !== undefined ? `goalkeeper: ${String(done.error)}` : (done.stderr ?? ""),
  };
  if (ran.stderr.trim() !== "") {
    process.stderr.write(ran.stderr.endsWith("\n") ? ran.stderr : `${ran.stderr}\n`);
  }
  if (ran.stdout.trim() === "") {
    return {};
  }
  try {
    return JSON.parse(ran.stdout) as HookReply;
  } catch {
    process.stderr.write(`goalkeeper: unexpected hook output: ${ran.stdout.slice(0, 200)}\n`);
    return {};
  }
}

interface ToolResultJson {
  content: { type: string; text: string }[];
  is_error: boolean;
}

export default function goalkeeper(pi: ExtensionAPI): void {
  for (const tool of TOOLS) {
    pi.registerTool({
      name: tool.name,
      label: tool.name,
      description: tool.description,
      parameters: tool.parameters as unknown as TSchema,
      async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
        const session = ctx.sessionManager.getSessionId();
        const ran = await run(["--session", session, "--json", tool.name, "apply", "-"], JSON.stringify(params));
        let result: ToolResultJson;
        try {
          result = JSON.parse(ran.stdout) as ToolResultJson;
        } catch {
          throw new Error(`goalkeeper ${tool.name} did not answer: ${ran.stderr.trim() || `exit status ${ran.code}`}`);
        }
        const text = result.content.map((part) => part.text).join("\n");
        // A rejected call throws, so the model reads why (and nothing changed).
        if (result.is_error) {
          throw new Error(text);
        }
        return { content: [{ type: "text", text }], details: undefined };
      },
    });
  }

  pi.on("session_start", (_event, ctx) => {
    // pi's `bash` runs commands in pi's environment: `goalkeeper verify`
    // run there acts on this session and records its run itself.
    process.env[SESSION_VARIABLE] = ctx.sessionManager.getSessionId();
    hook(ctx, "SessionStart");
  });

  // Before every model call: the goal-mode context, last, hidden, not stored.
  pi.on("context", (event, ctx) => {
    const reply = hook(ctx, "Context");
    if (reply.context === undefined) {
      return undefined;
    }
    const message = { role: "custom" as const, ...reply.context, display: false, timestamp: Date.now() };
    return { messages: [...event.messages, message] };
  });

  pi.on("message_end", (event, ctx) => {
    const message = event.message;
    if (message.role !== "assistant") {
      return undefined;
    }
    const usage = message.usage;
    hook(ctx, "MessageEnd", {
      usage: { input: usage.input, output: usage.output, cache_read: usage.cacheRead, cache_write: usage.cacheWrite },
    });
    return undefined;
  });

  // The agent ended its turn without a tool call: continue the goal (or
  // deliver the wrap-up, or a reminder) as a hidden follow-up in the same
  // run. Handled here, not on agent_end: `pi -p` exits before that.
  pi.on("turn_end", (event, ctx) => {
    if (event.toolResults.length > 0) {
      return;
    }
    const reply = hook(ctx, "TurnEnd");
    if (reply.followUp !== undefined) {
      pi.sendMessage(
        { customType: reply.followUp.customType, content: reply.followUp.content, display: false },
        { deliverAs: "followUp", triggerTurn: true },
      );
    }
  });
}
