"""File folding (seed 001 §3.1): files → names-only `<system-reminder>` blocks within a budget.

Pure apart from reading the files; tree-sitter loads lazily inside `names.py`, so importing
this package is cheap.
"""

from agent.context.folding.drop import DEFAULT_DROP_SEED, MAX_FOLD_TOKENS, apply_random_drop
from agent.context.folding.fold import FoldResult, SkippedFile, fold_file, fold_files
from agent.context.folding.merge import MAX_LINE_SPAN, merge_function_blocks
from agent.context.folding.names import EXTENSION_LANGUAGES, Definition, extract_definitions

__all__ = [
    "DEFAULT_DROP_SEED",
    "EXTENSION_LANGUAGES",
    "MAX_FOLD_TOKENS",
    "MAX_LINE_SPAN",
    "Definition",
    "FoldResult",
    "SkippedFile",
    "apply_random_drop",
    "extract_definitions",
    "fold_file",
    "fold_files",
    "merge_function_blocks",
]
