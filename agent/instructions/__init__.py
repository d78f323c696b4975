"""Instructions as Claude Code loads them: the user's and the project's CLAUDE.md / AGENTS.md
files, their `@path` imports, and a subfolder's files when the model first works there."""

from agent.instructions.loading import InstructionFile, Instructions, load_instructions, render
from agent.instructions.nested import call_paths, instructions_for

__all__ = ["InstructionFile", "Instructions", "call_paths", "instructions_for", "load_instructions", "render"]
