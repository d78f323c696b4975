"""cairn: a terminal coding agent with a lossless session log and a context engine."""

__version__ = "0.1.0"
