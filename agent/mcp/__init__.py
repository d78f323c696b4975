"""MCP servers: their configuration, connections, tools, and the catalog that keeps a large
server's schemas out of every request (seed 004 `catalog`).

Nothing here imports the `mcp` package at module level except connection.py, which only the
manager's background tasks import (off the path to the first screen).
"""
