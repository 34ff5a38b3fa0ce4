"""One self-contained HTML file: the page's data as JSON, plotly.js and the page's own script
and style inlined. A Content-Security-Policy forbids every load from elsewhere, so a page that
would fetch anything fails loudly in the browser instead of quietly needing the network."""

from __future__ import annotations

import html
import json
from typing import Any

from .. import __version__
from .assets import own, plotly_js, plotly_licence

CSP = (
    "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; "
    "style-src 'unsafe-inline'; img-src data: blob:; font-src data:; worker-src blob:"
)


def render(kind: str, data: dict[str, Any]) -> str:
    """The page of ``kind`` ("run", "compare", "sweep", "index") showing ``data``."""
    title = html.escape(str(data.get("title", kind)))
    payload = json.dumps({"kind": kind, "version": __version__, **data}, allow_nan=False)
    payload = payload.replace("</", "<\\/")  # no "</script>" inside the JSON
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{own("view.css")}</style>
</head><body>
<header><h1 id="title">{title}</h1><span class="by">xcc view · xcclab {__version__}</span></header>
<main id="app"></main>
<footer><details><summary>Licences of the inlined libraries</summary>
<pre>{html.escape(plotly_licence())}</pre></details></footer>
<script type="application/json" id="xcc-data">{payload}</script>
<script>{plotly_js()}</script>
<script>{own("view.js")}</script>
</body></html>
"""
