"""Function-block merging: one line per run of consecutive functions (seed 001 §3.1 step 2).

One line per function repeats the same boilerplate hundreds of times in a big file; a line
per run of neighbours keeps every name at a fraction of the tokens. The seed's rule:
classes and interfaces stand on their own lines; functions go into a buffer, and the buffer
is written out when adding the next function would make its line span exceed
`max_line_span` (default 100). Two refinements keep the result readable: a container line
flushes the buffer (so a class's methods follow their class line), and so does a change of
enclosing container (so a top-level function never shares a line with the last methods).

Rendering (names only, no line numbers or signatures — the seed filters those out):

    class Repository
      functions: __init__, size
    functions: load, fetch

Nesting is shown by two spaces per container level. A name repeated within one line
(overloads, a property's getter and setter) is written once.
"""

from __future__ import annotations

from collections.abc import Iterable

from agent.context.folding.names import Definition

MAX_LINE_SPAN = 100
INDENT = "  "
FUNCTIONS_PREFIX = "functions: "


def merge_function_blocks(
    definitions: Iterable[Definition], *, max_line_span: int = MAX_LINE_SPAN, merge_functions: bool = True
) -> list[str]:
    """Render definitions (in source order) as folded lines; see the module docstring."""
    lines: list[str] = []
    buffer: list[Definition] = []

    def flush() -> None:
        if buffer:
            names = ", ".join(dict.fromkeys(d.name for d in buffer))  # overloads, getter/setter
            lines.append(f"{INDENT * buffer[0].depth}{FUNCTIONS_PREFIX}{names}")
            buffer.clear()

    for definition in definitions:
        if not definition.is_function:
            flush()
            lines.append(f"{INDENT * definition.depth}{definition.kind} {definition.name}")
            continue
        if buffer and not _fits(buffer, definition, max_line_span, merge_functions):
            flush()
        buffer.append(definition)
    flush()
    return lines


def _fits(buffer: list[Definition], candidate: Definition, max_line_span: int, merge: bool) -> bool:
    """Whether `candidate` may join the buffered run without breaking the seed's span rule."""
    if not merge or candidate.scope != buffer[0].scope:
        return False
    span = max(candidate.end_line, *(d.end_line for d in buffer)) - buffer[0].start_line + 1
    return span <= max_line_span
