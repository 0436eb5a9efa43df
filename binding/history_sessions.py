"""A per-Session history (PostgreSQL's concurrent writers, impl/history_sessions.py) read as one order.

Such a history records each Session's commits in commit order and, by its `seq` (a sequence drawn under
the Session locks the commit holds, and the wake lock for the one cross-Session table), an order in which
two commits sharing a Session, a process or the wake rows come as they committed. Commits that share
none touch disjoint rows (the claim, events, inputs and recovery rows of their own Sessions) and commute in
the database. The walk takes the order the commits became visible in (the server's commit timestamps,
binding/history.py's `convert_db`; `seq` order when the server does not track them): `seq` is drawn before
COMMIT, and a process paused between the two commits after higher seqs, while another process's read of
its Sessions' rows (a recovery scan) saw the state before it. Either order is a serial order, with one
exception: an execution id is drawn
from a PostgreSQL sequence when its begin's transaction runs, not when it commits, so two begins of
different Sessions can commit in the other order than they drew their ids (and ids have gaps where a
drawing transaction died). The twin numbers executions densely in the order they begin (`nextExec`).

So the walk renumbers executions, in `seq` order of their begins, 1, 2, 3, ..., in every place a row
names one (claims, the ids derived from them, events, recovery rows, continuations, parameters,
memory), and gives each row the whole claim table (the row records only the Sessions it locked) and the
execution mark a global history records. Why this hides no bug class: a renumbering is a bijection fixed
by the begins' commit order, so two rows naming one execution still name one, and an execution begun
twice (a reused or colliding id) is refused here; the twin reads execution ids for their identity, their
freshness and, in the scan window, their age: a window ordered by id could rank two concurrently begun
executions in the other order than the server did, which can only matter when the window is smaller
than the expired claims (the stress runs' ScanBound 100 is not).
"""

from __future__ import annotations

from impl import ids

from binding.flaws import with_flaw


class Unordered(ValueError):
    """The rows name an execution in a way no renumbering explains (named before its begin, begun twice)."""


class Renumbering:
    def __init__(self):
        self.dense: dict[int, int] = {}

    def begin(self, real: int) -> int:
        if real in self.dense:
            raise Unordered(f"execution {real} begun twice")
        self.dense[real] = len(self.dense) + 1
        return self.dense[real]

    def of(self, real, where: str):
        if real is None or real == 0:
            return real
        if real not in self.dense:
            raise Unordered(f"{where} names execution {real} before it begins")
        return self.dense[real]

    def asst(self, aid):
        if not isinstance(aid, str) or not aid.startswith("asst-"):
            return aid
        parts = aid.split("-")
        parts[1] = str(self.of(int(parts[1]), "an assistant id"))
        return "-".join(parts)

    def number(self, n: int, steps: int) -> int:
        """A twin assistant number (Step k of execution e: (e - 1) * steps + k) renumbered."""
        if not n:
            return n
        e, k = divmod(n - 1, steps)
        return (self.of(e + 1, "a runner's memory") - 1) * steps + k + 1

    def cont(self, iid: str, s: str, real: int) -> str:
        old, new = ids.continuation_id(s, real), ids.continuation_id(s, self.of(real, "a continuation"))
        return new + iid[len(old):] if iid.startswith(old) else iid


def whole_rows(rows: list[dict], steps: int) -> list[dict]:
    """The rows, in the order given, with whole claim tables, dense execution ids and the execution mark."""
    r = Renumbering()
    claims: dict[str, list] = {}  # Session -> its claim row, renumbered
    real: dict[str, int] = {}  # Session -> its claim's execution id as the database drew it
    out = []
    for row in rows:
        row = {**row, "marks": dict(row["marks"]), "delta": dict(row["delta"]), "params": dict(row["params"])}
        for c in row["claims"]:
            if real.get(c[0]) != c[1]:  # a claim of a new execution: its begin
                r.begin(c[1])
        for s in row["marks"].get("sessions", ()):
            claims.pop(s, None)
            real.pop(s, None)
        for c in row["claims"]:
            real[c[0]] = c[1]
            claims[c[0]] = [c[0], r.of(c[1], "a claim"), c[2], c[3], c[4], r.asst(c[5]), *c[6:]]
        row["claims"] = [claims[s] for s in sorted(claims)]
        d = row["delta"]
        if "events" in d:
            d["events"] = [[e[0], e[1], e[2], r.asst(e[3]), r.of(e[4], "an event"), *e[5:]] for e in d["events"]]
        if "inputs" in d:  # a continuation's flaw read from its envelope first, at the database's ids
            d["inputs"] = [[r.cont(i[0], i[1], i[3]), i[1], i[2], r.of(i[3], "a continuation"), *i[4:]]
                           if i[2] == "continuation" else i for i in map(with_flaw, d["inputs"])]
        if "recovery" in d:
            d["recovery"] = [[x[0], r.of(x[1], "a recovery row"), x[2], r.cont(x[3], x[2], x[1]), *x[4:]]
                             for x in d["recovery"]]
        if "history" in d:
            d["history"] = [[r.of(h[0], "an execution's record"), *h[1:]] for h in d["history"]]
        p = row["params"]
        if isinstance(p.get("i"), dict) and p["i"].get("kind") in ("cont", "continuation"):
            p["i"] = {**p["i"], "src": r.of(p["i"]["src"], "a parameter")}
        for k in ("_execution", "e"):
            if isinstance(p.get(k), int):
                p[k] = r.of(p[k], "a parameter")
        row["memory"] = _memory(row["memory"], r, steps)
        row["marks"]["execution"] = len(r.dense)
        out.append(row)
    return out


def _memory(mem: dict, r: Renumbering, steps: int) -> dict:
    if not mem:
        return mem
    out = dict(mem)
    if "run" in mem:
        out["run"] = {n: [v[0], v[1], r.of(v[2], "a runner's memory"), r.number(v[3], steps), *v[4:]]
                      for n, v in mem["run"].items()}
    for kind in ("fin", "rec"):
        if kind in mem:
            out[kind] = {a: [v[0], v[1], r.of(v[2], f"a {kind} memory"), *v[3:]] for a, v in mem[kind].items()}
    return out
