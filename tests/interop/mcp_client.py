"""Drives `goalkeeper mcp` with the official MCP Python SDK client.

Usage: mcp_client.py GOALKEEPER_BINARY DB_PATH SESSION

Lists the tools and calls both of them over stdio, checking what an MCP
host relies on; prints one line per check and exits non-zero on the first
failure. Run by tests/it/mcp_python.rs.
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print(f"ok: {what}")


def text_of(result):
    return "".join(block.text for block in result.content if block.type == "text")


async def main(binary, db, session):
    params = StdioServerParameters(
        command=binary,
        args=["--db", db, "--session", session, "mcp"],
        env={
            key: os.environ[key]
            for key in ("GOALKEEPER_CONFIG", "GOALKEEPER_NOW")
            if key in os.environ
        },
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as client:
            init = await client.initialize()
            check(init.server_info.name == "goalkeeper", "server name is goalkeeper")

            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            check(sorted(tools) == ["goal", "todo"], "tools/list has todo and goal")
            todo_ops = tools["todo"].input_schema["properties"]["op"]["enum"]
            check("init" in todo_ops and "view" in todo_ops, "todo schema lists the ops")
            goal_ops = tools["goal"].input_schema["properties"]["op"]["enum"]
            check(goal_ops == ["get", "create", "resume", "complete"], "goal schema lists the agent ops")
            check("phased todo list" in tools["todo"].description, "todo has its description")

            result = await client.call_tool(
                "todo",
                {"op": "init", "list": [{"phase": "Build", "items": ["Write code", "Test it"]}]},
            )
            check(not result.is_error, "todo init succeeds")
            check("Overall: 0/2 done, 2 open." in text_of(result), "todo init returns the summary")
            check(result.structured_content is None, "no structuredContent: hosts would send it instead of the summary")
            check(result.meta["goalkeeper/result"]["version"] == 1, "_meta carries the version")

            result = await client.call_tool("todo", {"op": "done", "task": "Write code"})
            check(result.meta["goalkeeper/result"]["completed_tasks"] == 1, "todo done counts the completed task")

            result = await client.call_tool("todo", {"op": "start", "task": "No such task"})
            check(result.is_error, "a rejected todo call is an error result")
            check(text_of(result).startswith("Errors: "), "the rejection names the problem")

            result = await client.call_tool("goal", {"op": "create", "objective": "Ship the release"})
            check(not result.is_error, "goal create succeeds")
            check(result.meta["goalkeeper/result"]["goal"]["status"] == "active", "the goal is active")

            result = await client.call_tool("goal", {"op": "pause"})
            check(result.is_error, "goal pause is refused to the agent")
            check("only the user can pause the goal" in text_of(result), "the refusal says why")

            result = await client.call_tool("goal", {"op": "complete"})
            check(not result.is_error, "goal complete succeeds")
            check(result.meta["goalkeeper/result"]["goal"]["status"] == "complete", "the goal is complete")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
