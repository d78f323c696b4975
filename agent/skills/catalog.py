"""Which skills exist: folders with a `SKILL.md` in the Agent Skills format (SPEC §13.3).

A skill is a folder holding `SKILL.md` — front matter `name` (lowercase letters, digits,
hyphens, at most 64), `description` (what it does and when to use it), optional `license`,
`allowed-tools`, `metadata` — and the files its instructions point to. The same folder works
in Claude Code, Codex, opencode and Vibe, so cairn reads theirs too: the user's
`~/.agents/skills`, `~/.claude/skills`, `~/.cairn/skills` and cairn's config folder (with
CAIRN_HOME, which relocates everything, tests included, only `$CAIRN_HOME/skills`), and the
project's `.agents/skills`, `.claude/skills`, `.cairn/skills`. A later folder wins a name:
cairn's own over the other agents', the project's over the user's.

Only each skill's name and description go into the request (the catalog, seed 004's idea:
fifty skills cost a few thousand tokens, not fifty bodies); the body is read when the model
loads the skill (tool.py). As in Claude Code, a skill's catalog text is its `description`
and `when_to_use` together, cut at 1,536 characters (a description missing: the body's first
line), and a collection over the catalog's budget keeps every skill reachable: the rest are
named, counted, found by skill-load's `query` and loaded by name (listing.py). The folders
are looked at again before each turn (`refreshed`: their modification times, a stat per
skill), so a skill added while cairn runs is offered at the next turn, and the catalog text,
part of the cached prefix, changes only when a skill did. A project's skill is instructions from a possibly hostile
repository, so its files are read through agent/fs/repo_files.py like AGENTS.md (no symlink
out, regular files only, a size cap); the user's are their own files (symlinks followed: a
dotfiles manager links them; still regular files only, still capped). `allowed-tools` grants
nothing: a skill is instructions, never power. What is skipped is said in a notice (`/skills`
shows them), never a traceback.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from agent.fs import front_matter
from agent.fs.nofollow import CLOEXEC, DIRECTORY, DescendError, descend
from agent.fs.repo_files import FileMissing, RepoFileError, list_repo_folder, read_own_file, read_repo_file
from agent.skills.listing import Entry, listing, search

log = logging.getLogger("agent.skills")

SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 256 * 1024  # the format asks for bodies under 500 lines; more is a mistake or hostile
NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
# The catalog rides in every request: about 2% of a 200k window (Codex caps its list there),
# counted in characters (about 4 to a token: no tokenizer). Past it, skills are named only.
CATALOG_MAX_CHARS = 16_000
# Claude Code's `skillListingMaxDescChars` default: `description` + `when_to_use`, per skill.
# (The Agent Skills format says 1,024 for `description`; Claude Code lists up to this, so a
# longer description written for Claude Code reaches the model whole up to here.)
CATALOG_DESCRIPTION_CHARS = 1536
REACH = (
    "Call skill-load with `query` (a few words) to search every skill's name and description, or with "
    "`name` to load any skill by its exact name, listed here or not."
)
MAX_LISTED_FILES = 100  # a skill's other files named in its load result
MAX_DEPTH = 4  # folders below the skill's own that are listed
PROJECT_FOLDERS = (Path(".agents") / "skills", Path(".claude") / "skills", Path(".cairn") / "skills")
_FOLDER_FLAGS = os.O_RDONLY | DIRECTORY | CLOEXEC


class SkillError(Exception):
    """A skill that could not be loaded, in words for the model."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str  # on one line
    folder: Path  # absolute: a user's with its symlinks resolved, a project's as found below the workspace
    source: str  # "user" | "project"
    relative: Path | None = None  # a project's folder, relative to the workspace: read through repo_files
    # Claude Code's `disable-model-invocation: true`: only the user invokes it (`/name`); not in the catalog.
    model_invocable: bool = True


Stamp = tuple[tuple[str, int, int], ...]  # (path, mtime_ns, size) of every folder and SKILL.md looked at


@dataclass
class SkillCatalog:
    """The skills of one workspace as found at `stamp`, and what was skipped."""

    workspace: Path
    skills: dict[str, Skill] = field(default_factory=dict)  # by name, in the catalog's order
    notices: list[str] = field(default_factory=list)
    stamp: Stamp = ()

    def get(self, name: str) -> Skill | None:
        name = name.strip()
        return self.skills.get(name) or self.skills.get(name.lower())

    def read_roots(self) -> list[str]:
        """The user's skill folders: filesystem-read may read there without asking, though they
        are outside the workspace (a project's are inside it anyway)."""
        return [str(s.folder) for s in self.skills.values() if s.source == "user"]

    def entries(self) -> list[Entry]:
        """Each skill the model may load as the catalog shows it: its description cut at
        CATALOG_DESCRIPTION_CHARS."""
        return [
            Entry(s.name, _cut(s.description, CATALOG_DESCRIPTION_CHARS))
            for s in self.skills.values()
            if s.model_invocable
        ]

    def text(self, max_chars: int = CATALOG_MAX_CHARS) -> str:
        """One line per skill, name and description, as the model reads it in skill-load's
        description; past `max_chars` the rest named, counted and searchable (listing.py)."""
        return listing(self.entries(), max_chars=max_chars, noun="skill", reach=REACH)

    def search(self, query: str) -> list[Entry]:
        return search(self.entries(), query)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def user_folders() -> list[Path]:
    """The user's skill folders, the winner of a name last."""
    from agent.paths import claude_dir, config_dir, home_dir

    folders: list[Path] = []
    home = Path.home()
    if home_dir() is None:
        folders.append(home / ".agents" / "skills")
    folders.append(claude_dir() / "skills")  # Claude Code's, wherever CLAUDE_CONFIG_DIR puts it
    if home_dir() is None:
        folders.append(home / ".cairn" / "skills")
    folders.append(config_dir() / "skills")
    return list(dict.fromkeys(folders))


def stamp(workspace: Path) -> Stamp:
    """What the skill folders look like now, cheaply: each folder's and each SKILL.md's
    modification time and size (a stat each, nothing read). A skill added, removed or edited
    changes it."""
    seen: list[tuple[str, int, int]] = []
    for folder in [*user_folders(), *(Path(workspace) / rel for rel in PROJECT_FOLDERS)]:
        try:
            info = os.stat(folder)
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        seen.append((str(folder), info.st_mtime_ns, 0))
        for name in names:
            try:
                info = os.stat(folder / name / SKILL_FILE)
            except OSError:
                continue
            seen.append((str(folder / name), info.st_mtime_ns, info.st_size))
    return tuple(seen)


def refreshed(catalog: SkillCatalog | None, workspace: Path) -> SkillCatalog | None:
    """The skills found again when the folders changed since `catalog` was found (None: they
    did not)."""
    if catalog is not None and stamp(workspace) == catalog.stamp:
        return None
    return discover(workspace)


def discover(workspace: Path) -> SkillCatalog:
    """Every skill by name (user < project; within each, the later folder wins)."""
    # Stamped before reading: a change made meanwhile shows at the next look.
    catalog = SkillCatalog(Path(workspace), stamp=stamp(workspace))
    found: dict[str, Skill] = {}
    for folder in user_folders():
        for skill in _user_skills(folder, catalog.notices):
            found[skill.name] = skill
    for relative in PROJECT_FOLDERS:
        for skill in _project_skills(catalog.workspace, relative, catalog.notices):
            found[skill.name] = skill
    # A repository's own skills first: when the list is cut, they are the ones about this code.
    ordered = sorted(found.values(), key=lambda s: (s.source != "project", s.name))
    catalog.skills = {s.name: s for s in ordered}
    return catalog


def _user_skills(folder: Path, notices: list[str]) -> list[Skill]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out = []
    for name in names:
        if name.startswith(".") or not (folder / name).is_dir():
            continue
        path = folder / name / SKILL_FILE
        try:
            raw = read_own_file(path, max_bytes=MAX_SKILL_BYTES)
        except FileMissing:
            continue  # a folder that is not a skill
        except RepoFileError as exc:
            _say(notices, f"Skipping the skill {exc.path}: it {exc.reason}")
            continue
        skill = _parse(raw, path, Path(os.path.realpath(folder / name)), "user", None, notices)
        if skill is not None:
            out.append(skill)
    return out


def _project_skills(workspace: Path, relative: Path, notices: list[str]) -> list[Skill]:
    try:
        names = list_repo_folder(workspace, relative)
    except FileMissing:
        return []
    except RepoFileError as exc:
        _say(notices, f"Skipping the skills in {exc.path}: it {exc.reason}")
        return []
    out = []
    for name in names:
        if name.startswith("."):
            continue
        path = relative / name / SKILL_FILE
        try:
            raw = read_repo_file(workspace, path, max_bytes=MAX_SKILL_BYTES)
        except FileMissing:
            continue  # a folder that is not a skill, or a plain file
        except RepoFileError as exc:
            _say(notices, f"Skipping the skill {exc.path}: it {exc.reason}")
            continue
        skill = _parse(raw, workspace / path, workspace / relative / name, "project", relative / name, notices)
        if skill is not None:
            out.append(skill)
    return out


def _parse(
    raw: bytes, path: Path, folder: Path, source: str, relative: Path | None, notices: list[str]
) -> Skill | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        _say(notices, f"Skipping the skill {path}: it is not UTF-8 text")
        return None
    fields, body = front_matter.split(text)
    name = str(fields.get("name") or folder.name).strip()
    if not NAME.fullmatch(name):
        _say(
            notices,
            f"Skipping the skill {path}: its name {name[:70]!r} is not lowercase letters, digits and hyphens "
            f"(at most 64)",
        )
        return None
    # Claude Code's listing: `description` then `when_to_use`; no description, the body's first line.
    said = str(fields.get("description") or "") or next((line for line in body.splitlines() if line.strip()), "")
    description = " ".join(f"{said} {fields.get('when_to_use') or ''}".split())
    if not description:
        _say(notices, f"Skipping the skill {path}: it has no description (front matter `description:`) and no body")
        return None
    user_only = str(fields.get("disable-model-invocation") or "").strip().lower() == "true"
    return Skill(
        name=name,
        description=description,
        folder=folder,
        source=source,
        relative=relative,
        model_invocable=not user_only,
    )


def _say(notices: list[str], text: str) -> None:
    log.warning("%s", text)
    notices.append(text)


# -- loading ------------------------------------------------------------------------------------


def read_body(catalog: SkillCatalog, skill: Skill) -> str:
    """The body of the skill's SKILL.md as it is now, read the same safe way as at discovery."""
    try:
        if skill.relative is not None:
            raw = read_repo_file(catalog.workspace, skill.relative / SKILL_FILE, max_bytes=MAX_SKILL_BYTES)
        else:
            raw = read_own_file(skill.folder / SKILL_FILE, max_bytes=MAX_SKILL_BYTES)
        text = raw.decode("utf-8")
    except RepoFileError as exc:
        raise SkillError(f"{exc.path} {exc.reason}") from None
    except UnicodeDecodeError:
        raise SkillError(f"{skill.folder / SKILL_FILE} is not UTF-8 text") from None
    return front_matter.split(text)[1].strip()


def other_files(catalog: SkillCatalog, skill: Skill) -> tuple[list[str], int]:
    """The regular files beside SKILL.md (relative paths, at most MAX_LISTED_FILES), and how
    many there are in all. Walked without following a symlink: a link in a project's skill
    could name files outside the workspace, and a link in the user's would lead
    filesystem-read outside the folder it may read unasked; hidden names are left out."""
    try:
        if skill.relative is not None:
            top = os.open(os.path.realpath(catalog.workspace), _FOLDER_FLAGS)
            fd = descend(top, skill.relative.parts, flags=_FOLDER_FLAGS)
        else:
            fd = os.open(skill.folder, _FOLDER_FLAGS)
    except (OSError, DescendError):
        return [], 0
    found: list[str] = []
    try:
        _walk(fd, "", MAX_DEPTH, found)
    finally:
        os.close(fd)
    return found[:MAX_LISTED_FILES], len(found)


def _walk(fd: int, prefix: str, depth: int, found: list[str]) -> None:
    if len(found) > 10 * MAX_LISTED_FILES:  # enough to say "and N more"; a huge tree is not walked whole
        return
    try:
        with os.scandir(fd) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        shown = prefix + entry.name
        if entry.is_dir(follow_symlinks=False):
            if depth <= 0:
                continue
            try:
                child = descend(os.dup(fd), [entry.name], flags=_FOLDER_FLAGS)
            except (OSError, DescendError):
                continue
            try:
                _walk(child, shown + "/", depth - 1, found)
            finally:
                os.close(child)
        elif entry.is_file(follow_symlinks=False) and shown != SKILL_FILE:
            found.append(shown)
