"""Import cycles among the Rust modules of each crate (docs/architecture.md, "Layering").

A module is a file (`mod.rs`/`lib.rs` stand for their folder); an arrow goes from a module to
every module of the same crate it names (`crate::a::b`, `super::x`), tests excluded, an
ancestor (which only declares it) never counted. Usage: `python tools/module_cycles.py
crates/*/src` prints each crate's strongly connected components of more than one module.
"""

import pathlib
import re
import sys


def modpath(crate_src, f):
    rel = f.relative_to(crate_src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def graph(crate_src):
    files = [f for f in crate_src.rglob("*.rs") if "bin" not in f.parts]
    mods = {modpath(crate_src, f): f for f in files}
    edges = {m: set() for m in mods}
    for m, f in mods.items():
        text = f.read_text().split("#[cfg(test)]\nmod tests")[0]
        text = re.sub(r"//[^\n]*", "", text)
        refs = set()
        for mt in re.finditer(r"crate::((?:[a-z_0-9]+::)*[a-z_0-9]+)", text):
            refs.add(tuple(mt.group(1).split("::")))
        for mt in re.finditer(r"use crate::\{([^}]*)\}", text):
            for it in mt.group(1).split(","):
                refs.add(tuple(it.strip().split("::")))
        for mt in re.finditer(r"\bsuper::([a-z_0-9]+)", text):
            parent = m[:-1]
            refs.add(parent + (mt.group(1),))
        for r in refs:
            # longest prefix that is a module
            for k in range(len(r), 0, -1):
                if r[:k] in mods and r[:k] != m:
                    # an edge to the parent module of m's own ancestors is skipped (declarations)
                    if m[: len(r[:k])] == r[:k]:
                        break
                    edges[m].add(r[:k])
                    break
    return edges


def cycles(edges):
    out = []
    index = {}
    low = {}
    st = []
    on = set()
    i = [0]

    def sc(v):
        index[v] = low[v] = i[0]
        i[0] += 1
        st.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                sc(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = st.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            sc(v)
    return out


if __name__ == "__main__":
    for c in sys.argv[1:]:
        cy = cycles(graph(pathlib.Path(c)))
        print(c, len(cy))
        for comp in cy:
            print("   ", ["::".join(x) for x in comp])
