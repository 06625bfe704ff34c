"""recall as an MCP server: the /recall answer and `recall learn` as tools for any MCP client.

- `recall mcp` (`recall_agent.mcp.cli`): stdio, working from the folder the client starts it in, exactly as the
  CLI does (`recall_agent.mcp.local`).
- `recall serve` mounts the same tools at `/mcp` (streamable HTTP, `recall_agent.mcp.http`), answered by the
  server's own stores and behind its bearer tokens (`recall_agent.mcp.team`).

The tool definitions (names, arguments, descriptions) live once, in `recall_agent.mcp.tools`. Nothing here is
imported by a plain `recall "<error>"`: the MCP SDK loads only when one of the two servers starts.
"""
