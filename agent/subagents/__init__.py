"""Subagents: a child conversation with a context of its own, run by the `subagent` tool.

Its definitions (definitions.py), the tool the model calls (tool.py) and what runs a child
(runner.py, driven by agent/turn/loop.py)."""
