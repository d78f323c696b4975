"""Every git process cairn starts goes through agent/tools/git_guard.py (issue 43, class 1).

A git started any other way runs unhardened: the repository's fsmonitor, hooks, filters and
gpg program with the user's rights (auto-condense's `git status` did exactly that). So no
module but git_guard may even build a git command line: an argv list or tuple whose first
item is `git`, a spawn call (subprocess, asyncio, os.exec*/spawn*/system/popen, pty) given
`git` or a shell line starting with `git `, or `shutil.which("git")`. A future module that
needs git calls `git_guard.run_git`/`run_git_async`/`WorkspaceGit`.
"""

from __future__ import annotations

import ast
from pathlib import Path

AGENT = Path(__file__).resolve().parents[2] / "agent"
THE_ONE_WAY = AGENT / "tools" / "git_guard.py"
SPAWNERS = {
    "run",
    "Popen",
    "call",
    "check_call",
    "check_output",
    "getoutput",
    "getstatusoutput",
    "create_subprocess_exec",
    "create_subprocess_shell",
    "system",
    "popen",
    "spawn",
    *(f"exec{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
    *(f"spawn{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
    "posix_spawn",
    "posix_spawnp",
}


def _program_git(node: ast.AST) -> bool:
    """A program that is git: "git", "/usr/bin/git", `shutil.which("git")`, or an argv starting so."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value == "git" or node.value.endswith("/git")
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        return _program_git(node.elts[0])
    if isinstance(node, ast.Starred):
        return _program_git(node.value)
    return isinstance(node, ast.Call) and _callee(node) == "which" and any(_program_git(a) for a in node.args)


def _line_git(node: ast.AST) -> bool:
    """A shell line that starts git: "git status", f"git {x}"."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.lstrip().startswith("git ")
    return isinstance(node, ast.JoinedStr) and bool(node.values) and _line_git(node.values[0])


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def git_spawns(source: str) -> list[int]:
    """Lines of `source` that build a git command line or start git."""
    found: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.List, ast.Tuple)) and _program_git(node):
            found.add(node.lineno)  # an argv in the making, wherever it is handed on
        elif isinstance(node, ast.Call) and _callee(node) == "which" and _program_git(node):
            found.add(node.lineno)
        elif isinstance(node, ast.Call) and _callee(node) in SPAWNERS:
            argv = [*node.args[:2], *(k.value for k in node.keywords if k.arg in ("args", "file", "path", "cmd"))]
            if any(_program_git(a) or _line_git(a) for a in argv):
                found.add(node.lineno)
    return sorted(found)


def test_only_git_guard_starts_git():
    offenders = [
        f"{path.relative_to(AGENT.parent)}:{line}"
        for path in sorted(AGENT.rglob("*.py"))
        if path != THE_ONE_WAY
        for line in git_spawns(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "start git through agent/tools/git_guard.py (run_git, run_git_async, WorkspaceGit)"


def test_git_guard_is_where_git_starts():
    """The check looks at the right thing: git_guard itself builds git's argv."""
    assert git_spawns(THE_ONE_WAY.read_text(encoding="utf-8"))


SPAWNING = {
    "subprocess.run(['git', 'status'])": [1],
    "subprocess.Popen(('git', 'log'), cwd=ws)": [1],
    "await asyncio.create_subprocess_exec('git', '-C', ws, 'status')": [1],
    "await asyncio.create_subprocess_shell('git status --short')": [1],
    "subprocess.check_output('git status', shell=True)": [1],
    "os.execvp('git', argv)": [1],
    "os.system(f'git {cmd}')": [1],
    "cmd = ['git', 'status']\nsubprocess.run(cmd)": [1],
    "exe = shutil.which('git')\nsubprocess.run([exe, 'status'])": [1],
    "subprocess.run(['/usr/bin/git', 'status'])": [1],
    "run(args=['git', 'status'])": [1],
    "subprocess.run([*['git'], 'status'])": [1],
}
INNOCENT = [
    "if words[0] == 'git': pass",
    "subprocess.run(['rg', '--files'])",
    "asyncio.run(main())",
    "reason = f'git may reach outside the workspace: {why}'",
    "subprocess.run(['sh', '-c', script])",
    "return f'git {sub} is not known to only read', []",
    "subprocess.run(['gitk'])",
]


def test_the_check_finds_every_way_to_start_git():
    for source, lines in SPAWNING.items():
        assert git_spawns(source) == lines, source
    for source in INNOCENT:
        assert git_spawns(source) == [], source
