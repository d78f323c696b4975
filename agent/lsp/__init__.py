"""Language servers for diagnostics after edits and the `lsp` tool (SPEC §13.8).

A language server runs the repository's code (its plugins, build scripts, the project's own
compiler), so cairn starts one only in the sandbox, reads what it says as untrusted, bounded
text, and never lets it hold an edit up beyond `[lsp] timeout_ms`. One `LspManager` per
session (manager.py), owned by the runtime and handed to the tools through their context.
"""
