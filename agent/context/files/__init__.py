"""Context files (seed 004, SPEC §6): large outputs, condensed history and the tool catalog as
files the model reads by id (list, read, tail, grep) instead of carrying them in context.

`manager.ContextFiles` is the API; `refs` the ids; `artifacts` how a stored tool result
becomes a file; `manifest` the per-session index and eviction; `reading` and `grep` the
bounded-memory primitives; `security` the folder confinement. Nothing is imported here, so
importing `agent.context.files.refs` stays cheap.
"""
