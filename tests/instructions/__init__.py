"""Instructions as Claude Code loads them (agent/instructions/)."""
