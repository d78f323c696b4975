"""A modal's scrolling part gets what the terminal leaves once everything else is shown.

A modal taller than the screen is cut at the bottom, where its choices are: at 80×24 an
approval with a long diff showed none of them, and Down, Down, Enter picked one unseen.
So the modal's one scrolling part (a diff, a list of keys) is sized to the rest.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.screen import Screen
from textual.widget import Widget

FIT_PASSES = 3  # a changed height re-wraps what is around it: measure again, a bounded number of times


def fit_scroll(
    screen: Screen,
    box: Widget,
    scroll: Widget,
    *,
    max_lines: int,
    min_lines: int,
    passes: int = FIT_PASSES,
    known: dict[Widget, int] | None = None,
    height: int | None = None,
    then: Callable[[], None] | None = None,
) -> None:
    """Size `scroll` to the screen's height less everything else in `box`; measured again
    after the next layout while that changes the answer. `known`: parts whose height is
    given, not measured (one just shown has no size until a later layout). `height`: the
    rows the box may take (a docked question leaves the chat some); `then`: called once
    the size holds."""
    known = known or {}
    # Measured from the parts: the box itself may already be cut at the screen's height.
    rest = (
        box.styles.gutter.height
        + scroll.styles.margin.height
        + sum(
            known[child] if child in known else child.outer_size.height + child.styles.margin.height
            for child in box.children
            if child is not scroll and child.display
        )
    )
    room = screen.size.height if height is None else min(height, screen.size.height)
    lines = min(max(min_lines, room - rest), max_lines)
    changed = scroll.styles.max_height is None or scroll.styles.max_height.value != lines
    if changed:
        scroll.styles.max_height = lines
    if changed and passes > 1:
        screen.call_after_refresh(
            fit_scroll,
            screen,
            box,
            scroll,
            max_lines=max_lines,
            min_lines=min_lines,
            passes=passes - 1,
            known=known,
            height=height,
            then=then,
        )
    elif then is not None:
        screen.call_after_refresh(then)
