"""Commands cairn runs without asking, checked against bash itself (SPEC §8).

A parser's view is not bash's: tree-sitter-bash reads `"$\\<newline>(cmd)"` as a plain string
while bash runs `cmd`. So hypothesis builds commands from a grammar of safe-looking pieces
and dangerous fragments, and every command the approval check lets run unasked is handed to
bash in a scratch sandbox: a real git workspace with protected files (`.env`, `.git/`,
`.cairn/config.toml`), a symlink into `.git/` and one out of the workspace, canary files
outside it, HOME pointed into the sandbox. bash must accept it (`bash -n`), and running it
(`bash -c`, as `terminal-execute` does, traced with `set -x` on a file descriptor of its own)
must leave the canaries and protected files alone, and — when only read-only rules apply —
change no file at all; its trace must show only simple commands the parse saw, and nothing
nested (`++`: a substitution or subshell ran).

The helpers here (`Sandbox`, `decide`) are shared with tests/hostile/test_command_table.py.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shlex
import shutil
import subprocess
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from agent.tools.permissions import READ_ONLY_RULE, ApprovalRequest, CommandPlan, Permissions
from agent.tools.sandbox import Sandbox as OsSandbox

BASH = shutil.which("bash")
RUN_SECONDS = 5.0
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed")


def decide(perms: Permissions, command: str, cwd: str | None = None) -> tuple[str, CommandPlan | None, ApprovalRequest]:
    """What `Permissions.check` would do without asking anyone: "ask", "rule" or "read_only"."""
    request = ApprovalRequest(
        tool="terminal-execute", kind="command", title="Run command", detail=command, key="command:x", cwd=cwd
    )
    request, plan = perms.prepare(request)
    rule = perms.rule_for(request, plan)
    decision = "ask" if rule is None else "read_only" if rule == READ_ONLY_RULE else "rule"
    return decision, plan, request


@dataclass
class BashRun:
    returncode: int
    commands: list[tuple[str, ...]]  # the simple commands bash traced
    nested: list[str]  # trace lines of a substitution or subshell (`++ …`)
    stderr: str


class Sandbox:
    """root/{ws, home, outside}: the workspace is a git repository with protected files."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ws = root / "ws"
        self.home = root / "home"
        self.outside = root / "outside"
        for folder in (self.ws / "sub", self.ws / ".cairn", self.home, self.outside):
            folder.mkdir(parents=True)
        files = {
            "ws/a.txt": "alpha\nbeta\nalpha\n",
            "ws/b.txt": "b\n",
            "ws/evil": "evil\n",
            "ws/sub/c.txt": "c\n",
            "ws/.env": "TOKEN=secret\n",
            "ws/.env.local": "K=v\n",
            "ws/.cairn/config.toml": "[permissions]\nallow_commands = []\n",
            "home/canary.txt": "home canary\n",
            "canary.txt": "canary\n",
            "outside/secret.txt": "secret\n",
        }
        for rel, text in files.items():
            (root / rel).write_text(text)
        self.env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.home),
            "LC_ALL": "C.UTF-8",
            "TERM": "dumb",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CEILING_DIRECTORIES": str(root),
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_PAGER": "cat",
            "PAGER": "cat",
        }
        if shutil.which("git"):
            git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
            for args in (["init", "-q"], ["add", "a.txt", "b.txt", "sub"], ["commit", "-qm", "init"]):
                subprocess.run(git + args, cwd=self.ws, env=self.env, check=True, capture_output=True)
        else:
            (self.ws / ".git").mkdir()
            (self.ws / ".git" / "config").write_text("[core]\n")
        (self.ws / "hooks").symlink_to(".git")  # a repository can ship this
        (self.ws / "out").symlink_to(self.outside)
        self.guarded = self._guarded()

    def _guarded(self) -> dict[str, str]:
        """What no allowed command may touch: canaries, protected files, files outside."""
        git = self.ws / ".git"
        # Outside the workspace: the canaries and whatever is in `outside/` (a program may keep
        # its own files in HOME, e.g. npm's logs, so only HOME's canary is guarded).
        paths = [self.root / "canary.txt", self.home / "canary.txt", *self.outside.rglob("*")]
        paths += [
            self.ws / ".env",
            self.ws / ".env.local",
            self.ws / ".cairn" / "config.toml",
            git / "config",
            git / "HEAD",
        ]
        # The repository's settings and hooks; git itself may write its index and objects.
        paths += [p for p in (git / "hooks").rglob("*") if p.is_file()]
        return {str(p): _digest(p) for p in paths}

    def guarded_changes(self) -> list[str]:
        now = self._guarded()
        return sorted(set(now) ^ set(self.guarded) | {p for p in now if now[p] != self.guarded.get(p)})

    def snapshot(self) -> dict[str, tuple]:
        """Every path under the sandbox: type, size, mtime and content (atime ignored)."""
        seen: dict[str, tuple] = {}
        for folder, dirs, names in os.walk(self.root):
            for name in dirs + names:
                path = os.path.join(folder, name)
                st_ = os.lstat(path)
                if os.path.islink(path):
                    seen[path] = ("link", os.readlink(path))
                elif os.path.isdir(path):
                    seen[path] = ("dir", st_.st_mode)
                else:
                    seen[path] = ("file", st_.st_mode, st_.st_size, st_.st_mtime_ns, _digest(Path(path)))
        return seen

    def syntax_ok(self, command: str) -> bool:
        res = subprocess.run(
            [BASH, "-n", "-c", command],
            cwd=self.ws,
            env=self.env,
            capture_output=True,
            timeout=RUN_SECONDS,
            stdin=subprocess.DEVNULL,
        )
        return res.returncode == 0

    def run(self, command: str, cwd: Path | None = None) -> BashRun:
        """`bash -c command` as terminal-execute runs it, traced to a file outside the sandbox."""
        trace_path = self.root.parent / f"{self.root.name}.trace"
        with open(trace_path, "w+b") as trace:
            fd = fcntl.fcntl(trace.fileno(), fcntl.F_DUPFD, 100)  # above any fd a command here touches
            env = {**self.env, "SHELLOPTS": "xtrace", "BASH_XTRACEFD": str(fd)}
            try:
                res = subprocess.run(
                    [BASH, "-c", command],
                    cwd=cwd or self.ws,
                    env=env,
                    capture_output=True,
                    timeout=RUN_SECONDS,
                    stdin=subprocess.DEVNULL,
                    pass_fds=(fd,),
                    start_new_session=True,
                )
                code, stderr = res.returncode, res.stderr.decode("utf-8", "replace")
            except subprocess.TimeoutExpired as exc:
                code, stderr = -1, f"timed out: {exc}"
            finally:
                os.close(fd)
            trace.seek(0)
            text = trace.read().decode("utf-8", "replace")
        commands, nested = parse_trace(text)
        return BashRun(code, commands, nested, stderr)


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        return f"unreadable: {exc.errno}"


def parse_trace(text: str) -> tuple[list[tuple[str, ...]], list[str]]:
    """`+ ls -la 'a b'` lines → word tuples; a quoted newline continues a record."""
    commands: list[tuple[str, ...]] = []
    nested: list[str] = []
    pending = ""
    for line in text.split("\n"):
        record = f"{pending}\n{line}" if pending else line
        if not record:
            continue
        m = re.match(r"(\++) ?", record)
        if m is None:
            nested.append(record)  # not a trace line: something wrote to fd 9
            continue
        try:
            words = shlex.split(record[m.end() :])
        except ValueError:  # a quoted word spans lines
            pending = record
            continue
        pending = ""
        if len(m.group(1)) > 1:
            nested.append(record)
        else:
            commands.append(tuple(words))
    if pending:
        nested.append(pending)
    return commands, nested


def assert_bash_agrees(
    sandbox: Sandbox, command: str, plan: CommandPlan, *, read_only_rules: bool, cwd: Path | None = None
) -> BashRun:
    """An allowed command: bash parses it, runs only what the parse saw, touches nothing guarded."""
    assert sandbox.syntax_ok(command), f"bash -n rejects an allowed command: {command!r}"
    before = sandbox.snapshot() if read_only_rules else None
    run = sandbox.run(command, cwd=cwd)
    assert run.returncode != -1, f"{command!r}: {run.stderr}"
    assert run.commands and "BASH_XTRACEFD" not in run.stderr, f"{command!r}: no trace ({run.stderr[:300]})"
    assert not run.nested, f"{command!r} ran something nested: {run.nested}"
    expected = Counter(tuple(p) for p in plan.parts)
    extra = Counter(run.commands) - expected
    assert not extra, f"{command!r}: bash ran {list(extra)} which the parse did not see ({plan.parts})"
    assert sandbox.guarded_changes() == [], f"{command!r} changed {sandbox.guarded_changes()}"
    if before is not None:
        after = sandbox.snapshot()
        changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
        assert changed == [], f"{command!r} changed files: {changed}"
    return run


# -- the grammar --------------------------------------------------------------------------------

SAFE_PROGRAMS = (
    ["ls"] * 4
    + ["echo"] * 3
    + ["git status"] * 2
    + [
        "ls -la",
        "cat",
        "head -n 1",
        "tail -n1",
        "wc -l",
        "grep -n alpha",
        "grep -c a",
        "find . -name",
        "find sub -type f",
        "pwd",
        "sort",
        "sort -r",
        "uniq -c",
        "cut -c1",
        "stat -c %s",
        "du -s",
        "file",
        "git status --short",
        "git log --oneline",
        "git diff",
        "git show --stat",
        "git branch",
        "git rev-parse HEAD",
        "true",
        "cd sub",
    ]
)
WRITING_PROGRAMS = [
    "touch",
    "cp evil",
    "cp -r sub",
    "rm -f",
    "mv b.txt",
    "tee",
    "mkdir -p",
    "sort -o pwned",
    "uniq a.txt",
    "find . -delete",
    "find . -exec touch pwned \\;",
    "git branch pwned",
    "git diff --output=pwned",
    "sed -i s/a/b/",
    "ln -s a.txt",
    "chmod 600",
]
SAFE_ARGS = [
    "a.txt",
    "b.txt",
    "sub",
    "sub/c.txt",
    "./a.txt",
    "sub/../a.txt",
    ".",
    "-",
    "--",
    "x",
    "'a b'",
    '"q r"',
    "-l",
    "-n",
    "1",
    "HEAD~1",
    "a#b",
    "'*.txt'",
    "\\*",
    "é",
    "ｘ",
    "'$(touch pwned)'",
    '"\\$(touch pwned)"',
    "'; touch pwned'",
    "'&&'",
]
# Dangerous fragments, by family (each family is drawn as often as the others).
DANGER_ARGS = [
    # bash runs something the words do not show
    [
        "$(touch pwned)",
        "`touch pwned`",
        '"$\\\n(touch pwned)"',
        "$\\\n(touch pwned)",
        "$'\\x24(touch pwned)'",
        "\\$(touch pwned)",
        "${x:-$(touch pwned)}",
        "$((1+1))",
        "<(touch pwned)",
        ">(touch pwned)",
        "a\\\nb",
        '"`touch pwned`"',
        "$HOME/canary.txt",
    ],
    # globs, braces and tildes reach what the words do not name
    [
        ".gi?/config",
        ".g*/config",
        ".[g]it/config",
        "{.git,x}/config",
        "*",
        "?",
        "[ab].txt",
        "~",
        "~/canary.txt",
        ".e?v",
        ".en*",
        "hoo*/config",
        "o?t/secret.txt",
        ".ca?rn/config.toml",
        "{a,b}.txt",
    ],
    # protected or outside paths, spelled many ways
    [
        ".env",
        ".env.local",
        ".git/config",
        ".git",
        "hooks/config",
        "out/secret.txt",
        "../canary.txt",
        "../outside/secret.txt",
        "/etc/hostname",
        "..",
        ".GIT/config",
        ".cairn/config.toml",
        "'.git'/config",
        ".g\\it/config",
        "-f.env",
        "--file=.env",
        "sub/../.git/config",
        "./.git//config",
        "-t.git",
    ],
    # options that write or run
    ["-o pwned", "--output=pwned", "-delete", "-exec touch pwned \\;", "pwned", "-fprint pwned", "--pre=touch"],
]
REDIRECTS = [
    "",
    "",
    "",
    "2>/dev/null",
    ">/dev/null",
    "2>&1",
    ">/dev/null 2>&1",
    "3>&1",
    ">&2",
    "<a.txt",
    "< .env",
    "> pwned",
    ">> a.txt",
    ">| a.txt",
    "&> pwned",
    "1>pwned",
    "2>pwned",
    "<<< x",
    "<<EOF\nx\nEOF\n",
    ">&pwned",
    "<>pwned",
    "0<a.txt",
    "2>/dev/null -la",
]
PREFIXES = [
    "",
    "",
    "",
    "",
    "FOO=1 ",
    "env ",
    "eval ",
    "command ",
    "exec ",
    "sh -c ",
    "xargs ",
    "time ",
    "\\\n",
    "! ",
    "( ",
    "{ ",
    "sudo ",
    "builtin ",
    ". ",
    "source ",
]
SEPARATORS = [" ; ", " && ", " || ", " | ", " & ", "\n", ";\n", " # ", " |& ", "\n\n", " ;; ", "\t&&\t"]


@st.composite
def words(draw, danger: float):
    if draw(st.floats(0, 1)) < danger:
        return draw(st.sampled_from(DANGER_ARGS).flatmap(st.sampled_from))
    word = draw(st.sampled_from(SAFE_ARGS))
    how = draw(st.sampled_from(["plain"] * 6 + ["single", "double", "escape"]))
    if how == "single" and "'" not in word:
        return f"'{word}'"
    if how == "double" and not set(word) & set('"$`\\'):
        return f'"{word}"'
    if how == "escape" and word[0].isalnum():
        return "\\" + word
    return word


@st.composite
def simple_commands(draw, danger: float, writers: list[str]):
    safe = draw(st.floats(0, 1)) >= (0.25 if writers is WRITING_PROGRAMS else 0.5)
    program = draw(st.sampled_from(SAFE_PROGRAMS if safe else writers))
    if draw(st.booleans()):
        program = "\\" + program if program[0].isalpha() else program  # `\ls` is ls to bash
    args = draw(st.lists(words(danger), max_size=3))
    prefix = draw(st.sampled_from(PREFIXES)) if draw(st.floats(0, 1)) < danger / 2 else ""
    redirect = draw(st.sampled_from(REDIRECTS)) if draw(st.floats(0, 1)) < 0.3 + danger else ""
    space = draw(st.sampled_from([" ", " ", "\t", "  "]))
    text = prefix + space.join([program, *args])
    if prefix == "( ":
        text += " )"
    elif prefix == "{ ":
        text += "; }"
    return f"{text} {redirect}".rstrip(" ") if redirect else text


@st.composite
def commands(draw, writers: list[str] = WRITING_PROGRAMS):
    danger = draw(st.sampled_from([0.0, 0.1, 0.3, 0.5]))
    parts = draw(st.lists(simple_commands(danger, writers), min_size=1, max_size=draw(st.sampled_from([1, 1, 2, 3]))))
    out = parts[0]
    for part in parts[1:]:
        out += draw(st.sampled_from(SEPARATORS)) + part
    if draw(st.floats(0, 1)) < 0.1:
        out += draw(st.sampled_from([" &", ";", " # trailing $(touch pwned)", "\n"]))
    return out


# Character soup after an allowed program: quotes, operators and escapes in every position
# (it found `ls <2>&1`, which tree-sitter reads as `<2` and bash as `<` then `2>&1`).
SOUP = list("ab.-_ ;&|<>$`'\"\\\n\t#*?{}~=!%:,") + [
    "a.txt",
    " ",
    " ",
    " ",
    "'",
    '"',
    "ls",
    "echo",
    "touch pwned",
    " > ",
    "2>&1",
    ">/dev/null",
    ".git/config",
    ".env",
    "..",
    "é",
    "；",
    "\u00a0",
    "$(",
    "<(",
    "\\\n",
    "hooks/",
    "out/",
    "0",
    "2",
    "3",
    ">&",
    "<&",
    "-",
]
soup_commands = st.tuples(
    st.sampled_from(["ls ", "cat ", "echo ", "ls -la ", "cat a.txt ", "echo '", 'echo "', "ls a.txt ", "grep a "]),
    st.lists(st.sampled_from(SOUP), min_size=1, max_size=10).map("".join),
).map("".join)

# What the writing sandbox allows by rule, weighted up so rules decide often.
ALLOWED_WRITERS = ["touch", "cp evil", "cp a.txt", "mkdir -p", "cp -r sub"] * 3 + WRITING_PROGRAMS

PROPERTY = settings(
    max_examples=500,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture],
)


@contextmanager
def sandbox_with_rules(root: Path, rules: list[str]):
    """A sandbox, and Permissions deciding under the PATH and locale bash gets there."""
    sandbox = Sandbox(root)
    with pytest.MonkeyPatch.context() as mp:
        for key in ("PATH", "LC_ALL"):
            mp.setenv(key, sandbox.env[key])
        box = OsSandbox(sandbox.ws)
        if not box.probe():
            pytest.skip(f"no sandbox on this machine: {box.why_not}")
        yield sandbox, Permissions(None, allow_commands=rules, workspace=sandbox.ws, sandbox=box)


@pytest.fixture(scope="module")
def read_only_box(tmp_path_factory):
    with sandbox_with_rules(tmp_path_factory.mktemp("sandbox_ro"), ["ls", "echo", "git status"]) as box:
        yield box


@pytest.fixture(scope="module")
def writing_box(tmp_path_factory):
    with sandbox_with_rules(tmp_path_factory.mktemp("sandbox_rw"), ["cp", "touch", "ls", "mkdir"]) as box:
        yield box


@pytest.mark.slow
@PROPERTY
@given(command=commands())
def test_what_runs_unasked_with_read_only_rules_changes_nothing(read_only_box, command):
    """With `ls`, `echo`, `git status` allowed and read-only commands needing no rule."""
    sandbox, perms = read_only_box
    decision, plan, request = decide(perms, command)
    event(f"decision: {decision}")
    note(f"plan: {plan} reason: {request.reason!r}")
    if decision != "ask":
        assert_bash_agrees(sandbox, command, plan, read_only_rules=True)


@pytest.mark.slow
@PROPERTY
@given(command=commands(ALLOWED_WRITERS))
def test_what_runs_unasked_with_write_rules_never_reaches_protected_files(writing_box, command):
    """With `cp`, `touch`, `mkdir` allowed (the glob family: `cp evil .gi?/config`)."""
    sandbox, perms = writing_box
    decision, plan, request = decide(perms, command)
    event(f"decision: {decision}")
    note(f"plan: {plan} reason: {request.reason!r}")
    if decision != "ask":
        assert_bash_agrees(sandbox, command, plan, read_only_rules=False)


@pytest.mark.slow
@PROPERTY
@given(command=soup_commands)
def test_what_runs_unasked_from_character_soup_changes_nothing(read_only_box, command):
    sandbox, perms = read_only_box
    decision, plan, request = decide(perms, command)
    event(f"decision: {decision}")
    note(f"plan: {plan} reason: {request.reason!r}")
    if decision != "ask":
        assert_bash_agrees(sandbox, command, plan, read_only_rules=True)
