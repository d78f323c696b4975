"""This process and the ones it starts: keys kept out of children, process groups, daemon threads.

A leaf: standard library only, imported by every floor above it (tools, hooks, llm, the turn,
the front ends), never importing any of them.
"""
