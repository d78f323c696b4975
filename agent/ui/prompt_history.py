"""Prompts the user sent, per project, for Up/Down in the prompt.

Kept in a small JSON-lines file in the data folder (`prompt_history.jsonl`), not in the
session store: Up must work from the first frame, before the store (aiosqlite, the
schema) is opened behind it, and reading a few hundred lines with the standard library
costs nothing there. It is also not conversation history: a rewound or deleted session
does not take back what the user typed. One line per prompt: {"project": folder, "text": …}.
Failures to read or write never reach the user: history is a convenience.
"""

from __future__ import annotations

import json
from pathlib import Path

HISTORY_FILE = "prompt_history.jsonl"
MAX_PER_PROJECT = 500  # Up walks back at most this far
MAX_FILE_LINES = 5000  # past this the file is rewritten with each project's newest entries
MAX_PROMPT_CHARS = 20_000  # a huge paste is not worth recalling whole


class HistoryWalk:
    """One walk through the history (Up, Up, Down…), starting from the draft being typed."""

    def __init__(self, entries: list[str], draft: str) -> None:
        self.entries = entries  # oldest first
        self.draft = draft
        self.index = len(entries)  # == len: at the draft

    @property
    def at_draft(self) -> bool:
        return self.index >= len(self.entries)

    def older(self) -> str | None:
        if self.index == 0:
            return None
        self.index -= 1
        return self.entries[self.index]

    def newer(self) -> str | None:
        if self.at_draft:
            return None
        self.index += 1
        return self.draft if self.at_draft else self.entries[self.index]


class PromptHistory:
    def __init__(self, path: Path, project: str) -> None:
        self.path = path
        self.project = project
        self._entries: list[str] | None = None  # read on first use (not on the first frame)

    @classmethod
    def for_project(cls, workspace: Path) -> PromptHistory:
        from agent.paths import data_dir

        return cls(data_dir() / HISTORY_FILE, str(workspace))

    def entries(self) -> list[str]:
        if self._entries is None:
            self._entries = [e["text"] for e in self._read() if e.get("project") == self.project][-MAX_PER_PROJECT:]
        return self._entries

    def walk(self, draft: str) -> HistoryWalk:
        return HistoryWalk(list(self.entries()), draft)

    def add(self, text: str) -> None:
        if not text.strip() or len(text) > MAX_PROMPT_CHARS:
            return
        entries = self.entries()
        if entries and entries[-1] == text:
            return  # the same prompt twice in a row is one entry
        entries.append(text)
        del entries[:-MAX_PER_PROJECT]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps({"project": self.project, "text": text}, ensure_ascii=False) + "\n")
            self._trim()
        except OSError:
            pass

    def _read(self) -> list[dict]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            return []
        out = []
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line cut by a crash: skip it
            if isinstance(entry, dict) and isinstance(entry.get("text"), str):
                out.append(entry)
        return out

    def _trim(self) -> None:
        entries = self._read()
        if len(entries) <= MAX_FILE_LINES:
            return
        kept: dict[str, list[dict]] = {}
        for entry in entries:
            kept.setdefault(str(entry.get("project")), []).append(entry)
        keep = {id(e) for group in kept.values() for e in group[-MAX_PER_PROJECT:]}
        if len(keep) == len(entries):
            return
        text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries if id(e) in keep)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(self.path)
