"""`cairn acp`: cairn as an Agent Client Protocol agent on stdio, for editors (Zed, JetBrains,
Neovim and Emacs plugins) — server.py (the protocol's agent side), updates.py (loop events
and stored history as session updates), approvals.py (permission requests to the editor)."""
