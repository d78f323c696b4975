"""`fold_files`: the file-folding entry point (seed 001 §3.1, `foldFiles`).

Condense and smart truncation both call this to keep the files a session read in context
at names-only cost: extract definitions (names.py), merge consecutive functions (merge.py),
wrap each file in its own `<system-reminder>` block, and randomly drop whole blocks
(drop.py) while the result is over `max_tokens`. Files are read from disk as they are now,
not as they were when read. Anything that cannot be folded — unknown language, binary,
minified, unreadable, too large, mostly syntax errors — is reported in `skipped`, never raised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent.context.folding.drop import (
    DEFAULT_DROP_SEED,
    MAX_FOLD_TOKENS,
    apply_random_drop,
    join_sections,
)
from agent.context.folding.merge import MAX_LINE_SPAN, merge_function_blocks
from agent.context.folding.names import FoldSkip, extract_definitions, language_for

# A file this big is generated or vendored; parsing it would stall a condense for nothing.
MAX_FILE_BYTES = 2_000_000
BINARY_SNIFF_BYTES = 8192
# Minified bundles: one endless line, slow to parse and no names worth keeping.
MINIFIED_MIN_BYTES = 10_000
MINIFIED_AVG_LINE = 300
SECTION_OPEN = "<system-reminder>"
SECTION_CLOSE = "</system-reminder>"
SECTION_TITLE = "## File Context: "


@dataclass(frozen=True)
class SkippedFile:
    path: str
    reason: str


@dataclass(frozen=True)
class FoldResult:
    """The folded text plus what happened to each input path (paths as displayed)."""

    text: str
    tokens: int
    folded: list[str] = field(default_factory=list)  # in the text, in input order
    skipped: list[SkippedFile] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # folded, then dropped to fit max_tokens


def fold_files(
    paths: Sequence[Path | str],
    *,
    workspace: Path,
    max_line_span: int = MAX_LINE_SPAN,
    max_tokens: int = MAX_FOLD_TOKENS,
    seed: int = DEFAULT_DROP_SEED,
    merge_functions: bool = True,
    count_tokens: Callable[[str], int] | None = None,
) -> FoldResult:
    """Fold `paths` (relative ones resolve against `workspace`) into system-reminder blocks."""
    if count_tokens is None:
        from agent.context.tokens import counter_for

        count_tokens = counter_for("o200k_base").count_text
    workspace = Path(workspace)
    sections: list[str] = []
    names: list[str] = []
    skipped: list[SkippedFile] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw) if Path(raw).is_absolute() else workspace / raw
        key = _normalised(path)
        if key in seen:
            continue
        seen.add(key)
        shown = display_path(path, workspace)
        try:
            lines = fold_file(path, max_line_span=max_line_span, merge_functions=merge_functions)
        except FoldSkip as skip:
            skipped.append(SkippedFile(shown, str(skip)))
            continue
        except Exception as exc:  # folding is best effort: one odd file never fails a condense
            skipped.append(SkippedFile(shown, f"error: {type(exc).__name__}: {exc}"))
            continue
        sections.append(render_section(shown, lines))
        names.append(shown)
    drop = apply_random_drop(sections, max_tokens=max_tokens, seed=seed, count_tokens=count_tokens)
    return FoldResult(
        text=join_sections([sections[i] for i in drop.kept]),
        tokens=drop.tokens,
        folded=[names[i] for i in drop.kept],
        skipped=skipped,
        dropped=[names[i] for i in drop.dropped],
    )


def fold_file(path: Path, *, max_line_span: int = MAX_LINE_SPAN, merge_functions: bool = True) -> list[str]:
    """One file's folded lines. Raises FoldSkip with the reason it cannot be folded."""
    language = language_for(path.name)
    if language is None:
        raise FoldSkip("unknown language")
    source = _read(path)
    definitions = extract_definitions(source, language)
    return merge_function_blocks(definitions, max_line_span=max_line_span, merge_functions=merge_functions)


def render_section(shown: str, lines: Sequence[str]) -> str:
    return "\n".join([SECTION_OPEN, SECTION_TITLE + shown, *lines, SECTION_CLOSE])


def display_path(path: Path, workspace: Path) -> str:
    """Workspace-relative when inside it (what the model saw when it read the file)."""
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return path.as_posix()


def _read(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise FoldSkip(f"too large ({size} bytes)")
        data = path.read_bytes()
    except OSError as exc:
        raise FoldSkip(f"unreadable: {exc.strerror or exc}") from exc
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        raise FoldSkip("binary")
    if len(data) > MINIFIED_MIN_BYTES and len(data) / (data.count(b"\n") + 1) > MINIFIED_AVG_LINE:
        raise FoldSkip("minified")
    return data


def _normalised(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path
