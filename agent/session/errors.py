"""What can go wrong with the session store, and how opening it fails, in words.

`Store.open` (agent/session/store/) turns SQLite's and the OS's errors into one line for
the user naming the file, what is wrong and what to do; front ends print it, never a
traceback. Kept apart from the store so that module stays the SQL.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


class StoreError(Exception):
    """A session or message could not be found or written."""


class StoreOpenError(StoreError):
    """The session database cannot be opened: `str()` is one line for the user naming the
    file, what is wrong and what to do (front ends print it; no traceback)."""


class StoreWriteError(StoreError):
    """A write to the session database failed (disk full, read-only, locked too long):
    `str()` is one line for the user saying what was not saved and what to do. The
    transaction was rolled back, so the database holds what it held before."""


class ForeignDatabase(Exception):
    """An SQLite file that is not cairn's: opening it must not add tables to it."""


def open_error(exc: BaseException, path: Path) -> StoreOpenError:
    """What went wrong opening `path`, in words, from SQLite's or the OS's error."""
    cause = str(exc).strip() or type(exc).__name__
    lower = cause.lower()
    folder = path.parent
    aside = (
        f"It was not changed: move it aside (e.g. `mv {path} {path}.broken`) and start cairn again to begin a new one."
    )
    if isinstance(exc, ForeignDatabase):
        return StoreOpenError(f"{path} is not a cairn session database (it holds other tables: {cause}). {aside}")
    if "not a database" in lower or "malformed" in lower or "corrupt" in lower:
        return StoreOpenError(f"The session database {path} is damaged or not a cairn database ({cause}). {aside}")
    if "full" in lower or ("disk i/o error" in lower and _disk_full(folder)):  # SQLITE_FULL, or ENOSPC in the -shm
        return StoreOpenError(f"The disk holding {path} is full ({cause}): free some space and start cairn again.")
    writable = os.access(folder, os.W_OK) if folder.is_dir() else False
    if isinstance(exc, OSError) and not folder.is_dir():
        return StoreOpenError(
            f"Cannot create the data folder {folder} ({exc.strerror or cause}): set CAIRN_HOME to a writable folder."
        )
    if "readonly" in lower or "read-only" in lower or "unable to open" in lower or isinstance(exc, PermissionError):
        if not writable:
            return StoreOpenError(
                f"The data folder {folder} is read-only, so the session database {path.name} "
                f"cannot be written ({cause}): make it writable, or set CAIRN_HOME to a writable "
                "folder."
            )
        if path.exists() and not os.access(path, os.W_OK):
            return StoreOpenError(
                f"The session database {path} is read-only ({cause}): make it writable "
                "(chmod u+w), or set CAIRN_HOME to another folder."
            )
    return StoreOpenError(f"Cannot open the session database {path} ({cause}).")


def write_error(exc: BaseException, path: Path) -> StoreWriteError:
    """What went wrong writing to `path`, in words, from SQLite's or the OS's error."""
    cause = str(exc).strip() or type(exc).__name__
    lower = cause.lower()
    if "full" in lower or ("disk i/o error" in lower and _disk_full(path.parent)):
        what = f"the disk holding it is full ({cause}): free some space, then send again"
    elif "readonly" in lower or "read-only" in lower:
        what = f"it has become read-only ({cause}): make it writable, then send again"
    elif "locked" in lower or "busy" in lower:
        what = f"another process kept it locked ({cause}): close other cairn windows on it, then send again"
    else:
        what = f"{cause}; see the log for details"
    return StoreWriteError(f"Could not save to the session database {path}: {what}. Nothing already saved was lost.")


def _disk_full(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < 1024 * 1024
    except OSError:
        return False
