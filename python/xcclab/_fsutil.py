"""Atomic output directories and files.

Every directory xcclab writes (a run, a reproduction report) is first built in a hidden
temporary sibling of the target (same parent, hence same filesystem) and renamed into place
only once everything was written. A failed or interrupted run therefore never leaves a
half-written output directory, and an existing target is replaced only after success.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

# Temporary directories being built now (any thread), with the parent directories made for
# them, so that a command stopped by a signal can delete them before it exits (see
# :func:`discard_pending`).
_PENDING: dict[Path, list[Path]] = {}
_PENDING_LOCK = threading.Lock()


def discard_pending() -> list[Path]:
    """Delete every temporary output directory still being built, and the parents made for it
    if they are empty; return the temporary directories. For a process about to exit on a
    signal while a worker thread writes."""
    with _PENDING_LOCK:
        pending = list(_PENDING.items())
        _PENDING.clear()
    for tmp, made in pending:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_empty(made)
    return [tmp for tmp, _ in pending]


def _remove_empty(dirs: list[Path]) -> None:
    for d in dirs:  # deepest first
        try:
            d.rmdir()
        except OSError:
            return


@contextlib.contextmanager
def atomic_dir(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a fresh temporary directory that becomes ``target`` when the block succeeds.

    If the block raises, the temporary directory is removed and ``target`` (if it existed) is
    left untouched. If ``target`` exists and the block succeeds, the old directory is moved
    aside, the new one renamed into place, and the old one deleted.
    """
    target = Path(target)
    parent = target.parent
    # The parents this makes, deepest first: removed again when nothing is written.
    made = [p for p in (parent, *parent.parents) if not p.exists()]
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=parent))
    with _PENDING_LOCK:
        _PENDING[tmp] = made
    try:
        yield tmp
        with _PENDING_LOCK:
            _PENDING.pop(tmp, None)
        _replace_dir(tmp, target)
    except BaseException:
        # Cleaned before it is unregistered: a signal's clean-up in the main thread
        # (discard_pending, then exit) either still sees it or finds it already gone, never
        # unregistered with its empty parents left.
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_empty(made)
        with _PENDING_LOCK:
            _PENDING.pop(tmp, None)
        raise


def _replace_dir(src: Path, target: Path) -> None:
    """Rename ``src`` to ``target``, replacing an existing ``target`` directory or file."""
    # Directories are created 0700 by mkdtemp; give the result ordinary permissions.
    os.chmod(src, 0o777 & ~_umask())
    if not target.exists() and not target.is_symlink():
        os.replace(src, target)
        return
    if target.is_dir() and not target.is_symlink():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        old.rmdir()
        os.replace(target, old)
        try:
            os.replace(src, target)
        except BaseException:
            os.replace(old, target)  # put the previous result back
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(src, target)  # a file or a symlink: rename over it


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same directory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
