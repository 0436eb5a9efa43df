"""Save and restore for the exhaustive walk (harness.conformance.conform) on a server behind a driver.

A driver that answers hello with `save: true` keeps whole worlds under names (`save`, `restore`); one that
does not is put back by replaying the spanning tree's path from Init (`start`, then every step to the
state): slower, the same checks. The walk needs a saved point only while its state's frame is on the
depth-first stack, so a point is named after that depth (`d3`): a driver keeps at most the walk's depth of
worlds, however large the graph.
"""

from __future__ import annotations

from harness.traces.paths import Graph, tree_ids


class DriverPoints:
    """The port's Savepoints (harness.port) over a SutScheduler: `save_at(state, depth)`, `restore(point)`."""

    def __init__(self, sched, graph: Graph, saves: bool):
        self.sched, self.graph, self.saves = sched, graph, saves
        self.kind = "driver save/restore" if saves else "replayed from Init (the driver does not save)"
        self.replayed = 0  # steps replayed from Init to restore (without save)

    def save_at(self, j: int, depth: int):
        if not self.saves:
            return j, self.sched.faults
        point = f"d{depth}"
        self.sched.conn.request("save", point=point)
        return point, self.sched.faults

    def restore(self, point) -> None:
        where, faults = point
        if self.saves:
            self.sched.conn.request("restore", point=where)
            self.sched.faults = faults
            return
        self.sched.restart()
        for j in tree_ids(self.graph, where)[1:]:
            name, params = self.graph.via[j]
            self.sched.apply(name, params, self.graph.states[j])
            self.replayed += 1

    def mark(self) -> None:
        """None: which rows a probe wrote is the server's own business, so every probe is observed whole."""
        return None

    def unchanged(self, mark, st):
        return None
