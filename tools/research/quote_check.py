"""Issue 31's second reading, the mechanical part: is every claim's quote in its seed paper?

For each experiment of docs/reproduction, every claim's quote is looked up in
/work/shared/seeds/<seed>_*.txt (or SEEDS_DIR) after normalising case, whitespace, hyphens
and the ligatures of the text extraction; a quote with "[...]" is checked piece by piece; a
table-cell quote ("J = 0.9893") is checked as its number appearing in the seed. Prints one
line per claim: experiment, claim id, found / number found / NOT FOUND.
"""

import glob
import json
import os
import re
import sys
from pathlib import Path

SEEDS_DIR = Path(os.environ.get("SEEDS_DIR", "/work/shared/seeds"))
SNAPSHOT = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/reproduction")


def norm(text: str) -> str:
    text = text.lower().replace("ﬁ", "fi").replace("ﬂ", "fl").replace("’", "'")
    text = re.sub(r"[-‐–—]\s*\n?\s*", "", text)
    return re.sub(r"[^a-z0-9%.,]+", " ", text).strip()


def seed_text(where: str) -> str:
    m = re.match(r"seed (\d{3})", where)
    path = glob.glob(str(SEEDS_DIR / f"{m.group(1)}_*.txt"))[0]
    return norm(Path(path).read_text(encoding="utf-8"))


def check(quote: str, where: str) -> str:
    text = seed_text(where)
    cell = re.fullmatch(r"[\w ./\-]+ = (-?[\d.e+]+)", quote.strip())
    if cell:
        num = cell.group(1)
        variants = {num, num.rstrip("0").rstrip("."), f"{float(num):.4f}", f"{float(num):.2f}"}
        return "number found" if any(v in text for v in variants) else "NOT FOUND"
    pieces = [p for p in re.split(r"\[\.\.\.\]", quote) if p.strip()]
    return "found" if all(norm(p) in text for p in pieces) else "NOT FOUND"


if __name__ == "__main__":
    for f in sorted(SNAPSHOT.glob("*/metrics.json")):
        claims = json.loads(f.read_text()).get("claims")
        if not isinstance(claims, list):
            continue
        seen = set()
        for c in claims:
            if (c["quote"], c["where"]) in seen:
                continue
            seen.add((c["quote"], c["where"]))
            print(f"{f.parent.name}\t{c['id']}\t{check(c['quote'], c['where'])}")
