"""The network drawn on a run's page: nodes, link directions, positions, and the summary of
large networks.

Every link direction of ``links.parquet`` is drawn as its own line (the two directions of a
link side by side), so each can be coloured by its own utilisation and queue. Beyond stated
sizes the drawing is summarised, and the page says so:

- more than :data:`GROUP_HOSTS_ABOVE` nodes: the hosts hanging off one router (hosts with that
  router as their only neighbour) are drawn as one group node ("100 hosts"), and their links as
  one group link per direction, coloured by the busiest member;
- more than :data:`MAX_DRAWN_NODES` nodes after that: only the busiest links (by peak
  utilisation, then drops) are drawn, added in that order while the nodes they touch stay
  within the limit; every link stays in the page's link table.

Positions come from networkx's spring layout (Fruchterman-Reingold) with a fixed seed, so the
same run gives the same page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Collapse each router's leaf hosts into one group node above this many nodes.
GROUP_HOSTS_ABOVE = 40
#: Draw at most this many nodes (the busiest links' ends beyond it).
MAX_DRAWN_NODES = 300


@dataclass
class DrawnLink:
    """One line of the drawing: a link direction, or a group of directions."""

    src: str
    dst: str
    members: list[int]  # link_id of each direction it stands for
    name: str


@dataclass
class Topology:
    nodes: dict[str, dict[str, Any]]  # name -> {kind, label, x, y, members}
    links: list[DrawnLink]
    notes: list[str] = field(default_factory=list)


def build(links: Any, hosts: set[str], peaks: dict[int, tuple[float, float]]) -> Topology:
    """The drawing of ``links`` (the links table: link_id, name, src, dst), ``hosts`` being
    the host names (every other node is a router). ``peaks``: link_id -> (peak utilisation,
    drops), to pick the busiest links of a network too large to draw whole."""
    rows = links.select("link_id", "name", "src", "dst").rows()
    names = {n for _, _, s, d in rows for n in (s, d)}
    notes = []
    group_of: dict[str, str] = {}
    if len(names) > GROUP_HOSTS_ABOVE:
        group_of = _leaf_groups(rows, hosts)
        if group_of:
            n_groups = len(set(group_of.values()))
            notes.append(
                f"{len(group_of)} hosts drawn as {n_groups} group node(s), one per router "
                f"(more than {GROUP_HOSTS_ABOVE} nodes); a group link is coloured by its "
                "busiest member"
            )
    drawn: dict[tuple[str, str], DrawnLink] = {}
    for lid, name, s, d in rows:
        gs, gd = group_of.get(s, s), group_of.get(d, d)
        key = (gs, gd)
        if key not in drawn:
            label = name if (gs, gd) == (s, d) else f"{gs}->{gd}"
            drawn[key] = DrawnLink(gs, gd, [], label)
        drawn[key].members.append(lid)
    chosen = list(drawn.values())
    nodes_of = {n for dl in chosen for n in (dl.src, dl.dst)}
    if len(nodes_of) > MAX_DRAWN_NODES:
        chosen = _busiest(chosen, peaks)
        notes.append(
            f"{len({n for dl in chosen for n in (dl.src, dl.dst)})} of {len(nodes_of)} nodes "
            f"drawn (at most {MAX_DRAWN_NODES}): the links with the highest peak utilisation, "
            "then drops; every link is in the table below"
        )
    nodes = {}
    for dl in chosen:
        for n in (dl.src, dl.dst):
            if n in nodes:
                continue
            members = sorted(h for h, g in group_of.items() if g == n)
            kind = "group" if members else ("host" if n in hosts else "router")
            label = f"{len(members)} hosts at {n.split(':', 1)[1]}" if members else n
            nodes[n] = {"kind": kind, "label": label, "members": len(members)}
    _place(nodes, chosen)
    return Topology(nodes, chosen, notes)


def _leaf_groups(rows: list[tuple[int, str, str, str]], hosts: set[str]) -> dict[str, str]:
    """host -> group node name, for hosts whose only neighbour is one router that has at
    least two such hosts."""
    neighbours: dict[str, set[str]] = {}
    for _, _, s, d in rows:
        neighbours.setdefault(s, set()).add(d)
        neighbours.setdefault(d, set()).add(s)
    by_router: dict[str, list[str]] = {}
    for h in hosts:
        nb = neighbours.get(h, set())
        if len(nb) == 1:
            (router,) = nb
            if router not in hosts:
                by_router.setdefault(router, []).append(h)
    return {h: f"hosts:{r}" for r, hs in by_router.items() if len(hs) >= 2 for h in hs}


def _busiest(links: list[DrawnLink], peaks: dict[int, tuple[float, float]]) -> list[DrawnLink]:
    def load(dl: DrawnLink) -> tuple[float, float, str]:
        util = max((peaks.get(m, (0.0, 0.0))[0] for m in dl.members), default=0.0)
        drops = sum(peaks.get(m, (0.0, 0.0))[1] for m in dl.members)
        return (-(util or 0.0), -(drops or 0.0), dl.name)

    chosen, nodes = [], set()
    for dl in sorted(links, key=load):
        new = {dl.src, dl.dst} - nodes
        if len(nodes) + len(new) > MAX_DRAWN_NODES:
            continue
        nodes |= new
        chosen.append(dl)
    return chosen


def _place(nodes: dict[str, dict[str, Any]], links: list[DrawnLink]) -> None:
    """Positions in [0, 1] x [0, 1]: a spring layout, fixed seed, deterministic."""
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(sorted(nodes))
    g.add_edges_from((dl.src, dl.dst) for dl in links)
    if len(g) == 1:
        pos = {n: (0.5, 0.5) for n in g}
    elif len(g) == 2:
        a, b = sorted(g)
        pos = {a: (0.0, 0.5), b: (1.0, 0.5)}
    else:
        pos = nx.spring_layout(g, seed=1, iterations=100)
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    span_x = (max(xs) - min(xs)) or 1.0
    span_y = (max(ys) - min(ys)) or 1.0
    for n, (x, y) in pos.items():
        nodes[n]["x"] = round((x - min(xs)) / span_x, 4)
        nodes[n]["y"] = round((y - min(ys)) / span_y, 4)
