"""Slash commands from files and skills, as Claude Code has them (one expansion for every front end).

catalog.py finds the command files, arguments.py and inline.py fill a body (`$1`, `` !`cmd` ``,
`@file`), allowed_tools.py reads `allowed-tools`, invocation.py turns `/name args` into a turn.
"""
