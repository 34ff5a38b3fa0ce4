"""The scripts and styles a page inlines: plotly.js from the PyPI ``plotly`` package (its
``package_data/plotly.min.js``, MIT licence, pinned by the project's dependency range), and the
page's own ``static/view.js`` and ``static/view.css``. Nothing is fetched when the page opens.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import metadata, resources


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """plotly.min.js as shipped in the installed ``plotly`` package."""
    try:
        files = resources.files("plotly") / "package_data" / "plotly.min.js"
        return files.read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise RuntimeError(
            "xcc view needs the `plotly` package (pip install 'plotly>=6,<8'): "
            f"its plotly.min.js is inlined into the page ({exc})"
        ) from None


@lru_cache(maxsize=1)
def plotly_licence() -> str:
    """The plotly package's licence text (plotly.js is under the same MIT licence)."""
    dist = metadata.distribution("plotly")
    for f in dist.files or []:
        if f.name.upper().startswith("LICENSE"):
            return f"plotly {dist.version}\n\n" + f.read_text(encoding="utf-8")
    return f"plotly {dist.version}: MIT licence (https://github.com/plotly/plotly.py)"


def own(name: str) -> str:
    """A file of this package's ``static/`` folder."""
    return (resources.files(__package__) / "static" / name).read_text(encoding="utf-8")
