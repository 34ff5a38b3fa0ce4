"""Opening the written page, only where a browser can be shown."""

from __future__ import annotations

import os
import sys
import webbrowser
from pathlib import Path


def can_open() -> bool:
    """A browser is registered and, on Linux, there is a display to show it on."""
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        return False
    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return True


def open_page(path: Path) -> bool:
    """Open ``path`` in the browser if one can be shown; whether it was."""
    if not can_open():
        return False
    return webbrowser.open(path.resolve().as_uri())
