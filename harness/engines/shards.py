"""The explorer on N worker processes, safety only: states remembered as 64-bit fingerprints, sharded by them.

Why: the one-process explorer (harness.engines.explore) keeps every state whole (`deep`: 5.2 million
states, 3.9 GiB) and uses one core. Here a state is remembered by its fingerprint, Python's 64-bit hash
of the immutable State (the same in every worker, since the workers are forked from one process), in
the set of the worker that owns it (fingerprint mod N; a flat array, harness.engines.fingerprints); the
path back to Init is two arrays per worker (parent id, action label), and only one BFS level's states
are held, each sharing its variables' values with the equal ones of its level. The search is
level-synchronous, so depths, counts and the shortest counterexample's length are exact:

1. each worker expands its frontier: the action invariants on every edge; a successor it owns is
   looked up in its own set at once, one another worker owns is queued for that owner (once per level);
2. the queued fingerprints go to their owners in one batch per peer; each owner answers which are new,
   in a fixed order (its own first, then its peers' in worker order), so a run is deterministic;
3. a new state stays with the worker that generated it (only fingerprints cross between processes),
   which checks the state invariants on it; the coordinator then moves whole states from the workers
   above the mean frontier to those below, so that the next level is shared evenly.

A counterexample is rebuilt from the parent arrays by replaying its labels from Init. With symmetry
(spec.symmetry) the fingerprint is the least over the state's orbit. Two states with
one fingerprint would be counted once (TLC's fingerprints are 64-bit too): with n states the odds are
about n^2 / 2^65, under 1e-6 for `deep`; the bench compares the count with TLC's.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import pickle
import resource
import threading
import time
import traceback
from array import array

from spec import invariants as I
from spec import model as M
from spec import symmetry as S

from harness.engines.explore import Result
from harness.engines.fingerprints import FingerprintSet
from harness.traces.paths import Step, Violation


def answer(seen: FingerprintSet, fps: array) -> bytes:
    """An owner's answer to a peer's batch of fingerprints: 1 for each new one (now seen), else 0.
    A module function so that a test can swap in a worker that drops a shard's states."""
    return bytes(map(seen.add, fps))


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _Queue:
    """The successors a worker found for one peer's shard in this level, until the peer answers which are
    new: their fingerprints (each once), and side by side each one's state, parent id, label and delta."""

    def __init__(self, n: int):
        self.keys = FingerprintSet(n)
        self.fps = array("q")
        self.states: list[M.State] = []
        self.gids = array("q")
        self.labels = array("I")
        self.deltas: list[frozenset[int]] = []


class _Shard:
    """One worker's part: its fingerprints, its frontier, its parent arrays, its peers' connections.

    Memory is what bounds a run (issue 17: under 2 GiB on `deep`), so a state held until the next level
    shares its variables' values with every equal one of that level (`_compact`), a frontier is a list
    of states beside an array of their ids, and labels and deltas are numbered or shared too."""

    def __init__(self, k: int, n: int, cfg: M.Config, successors, only, peers: dict, symmetry: str | None):
        self.k, self.n, self.cfg, self.only, self.peers = k, n, cfg, only, peers
        group = S.perms(cfg, symmetry) if symmetry else None
        self.fingerprint = (lambda st: S.fingerprint(st, group)) if group else hash
        self.next_states = successors or M.successors
        self.seen = FingerprintSet(n)
        self.parent = array("q")
        self.label = array("I")
        self.labels: dict[tuple, int] = {None: 0}
        self.frontier: list[M.State] = []
        self.gids = array("q")  # the frontier's state ids, index for index
        self.shared: list[dict] = [{} for _ in M.State._fields]  # one level's values, per variable
        self.deltas: dict[frozenset[int], frozenset[int]] = {}
        self.generated = 0
        self.found: tuple | None = None  # (invariants, state id, last edge's label or None)
        init = M.init(cfg)
        if self.fingerprint(init) % n == k:
            self.seen.add(self.fingerprint(init))
        if k == 0:
            self.frontier.append(init)
            self.gids.append(self._record(-1, 0))

    def _record(self, parent: int, label: int) -> int:
        gid = len(self.parent) * self.n + self.k
        self.parent.append(parent)
        self.label.append(label)
        return gid

    def _compact(self, st: M.State) -> M.State:
        """`st` with each variable's value replaced by an equal one this level already holds, if any: a
        level's states then hold one copy of each distinct value, instead of 3.5 KB of their own each."""
        return M.State._make(map(dict.setdefault, self.shared, st, st))

    def _bad(self, names: list[str]) -> list[str]:
        return names if self.only is None else [b for b in names if b in self.only]

    def _admit(self, nxt: list, gids: array, nx: M.State, gid: int, label: int, delta) -> None:
        new = self._record(gid, label)
        nxt.append(nx)
        gids.append(new)
        bad = self._bad(I.check_state(self.cfg, nx, delta))
        if bad and self.found is None:
            self.found = (bad, new, None)

    def level(self) -> int:
        """Expand the frontier, settle the successors with their owners; the new frontier's size."""
        cfg, k, n, seen, fingerprint, labels = self.cfg, self.k, self.n, self.seen, self.fingerprint, self.labels
        for values in self.shared:
            values.clear()
        queued = [_Queue(n) for _ in range(n)]
        nxt: list = []
        nxt_gids = array("q")
        frontier, gids = self.frontier, self.gids
        while frontier:  # popped as expanded, so that a level's states are freed while the next one grows
            st, gid = frontier.pop(), gids.pop()
            for name, params, nx in self.next_states(cfg, st):
                self.generated += 1
                delta = I.changed(st, nx)
                bad = self._bad(I.check_edge(cfg, st, nx, delta))
                if bad and self.found is None:
                    self.found = (bad, gid, (name, params))
                fp = fingerprint(nx)
                owner = fp % n
                if owner == k:
                    if seen.add(fp):
                        label = labels.setdefault((name, params), len(labels))
                        self._admit(nxt, nxt_gids, self._compact(nx), gid, label, delta)
                elif (q := queued[owner]).keys.add(fp):
                    q.fps.append(fp)
                    q.states.append(self._compact(nx))
                    q.gids.append(gid)
                    q.labels.append(labels.setdefault((name, params), len(labels)))
                    q.deltas.append(self.deltas.setdefault(delta, delta))
        asked = self._all_to_all({j: q.fps.tobytes() for j, q in enumerate(queued) if j != k})
        replies = {}
        for j in sorted(asked):
            fps = array("q")
            fps.frombytes(asked[j])
            replies[j] = answer(seen, fps)
        for j, ok in sorted(self._all_to_all(replies).items()):
            q = queued[j]
            for i, flag in enumerate(ok):
                if flag:
                    self._admit(nxt, nxt_gids, q.states[i], q.gids[i], q.labels[i], q.deltas[i])
            queued[j] = None
        self.frontier, self.gids = nxt, nxt_gids
        return len(nxt)

    def generate(self) -> int:
        """Only generate the frontier's successors (a depth bound's last level): TLC generates them too,
        and drops each one outside its state constraint, uncounted and unchecked."""
        for st in self.frontier:
            self.generated += sum(1 for _ in self.next_states(self.cfg, st))
        return self.generated

    def balance(self, plan: list[tuple[int, int, int]]) -> None:
        """Move states as the coordinator planned: (from, to, how many)."""
        out = {}
        for src, dst, count in plan:
            if src == self.k:
                out[dst] = pickle.dumps((self.frontier[-count:], self.gids[-count:]), protocol=pickle.HIGHEST_PROTOCOL)
                del self.frontier[-count:]
                del self.gids[-count:]
        senders = {src for src, dst, _c in plan if dst == self.k}
        for _src, data in sorted(self._exchange(out, senders).items()):
            states, ids = pickle.loads(data)
            self.frontier.extend(states)
            self.gids.extend(ids)

    def _all_to_all(self, out: dict[int, bytes]) -> dict[int, bytes]:
        return self._exchange(out, set(self.peers))

    def _exchange(self, out: dict[int, bytes], sources: set[int]) -> dict[int, bytes]:
        """Send each peer its message (in a thread, so that two workers sending to each other cannot
        both block on a full pipe) while receiving one from each of `sources`, in worker order."""
        sender = threading.Thread(target=lambda: [self.peers[j].send_bytes(out[j]) for j in sorted(out)])
        sender.start()
        got = {j: self.peers[j].recv_bytes() for j in sorted(sources)}
        sender.join()
        return got

    def tables(self):
        labels = [None] * len(self.labels)
        for label, i in self.labels.items():
            labels[i] = label
        return self.parent.tobytes(), self.label.tobytes(), labels


def _serve(k: int, n: int, cfg, successors, only, peers: dict, control, symmetry) -> None:
    """A worker's loop: the coordinator's orders in, reports out, until `stop`. The cyclic garbage
    collector is off: states are tuples of immutable values, freed by reference counting, and millions of
    them held at once would make its full collections walk them all again and again."""
    gc.disable()
    try:
        shard = _Shard(k, n, cfg, successors, only, peers, symmetry)
        while True:
            order, arg = control.recv()
            if order == "level":
                size = shard.level()
                control.send(("ok", (size, shard.generated, shard.found)))
            elif order == "generate":
                control.send(("ok", shard.generate()))
            elif order == "balance":
                shard.balance(arg)
                control.send(("ok", None))
            elif order == "tables":
                control.send(("ok", shard.tables()))
            else:
                control.send(("ok", (len(shard.seen), peak_rss_mib(), time.process_time())))
                return
    except BaseException:  # the coordinator re-raises it with the worker's traceback
        control.send(("error", traceback.format_exc()))


def plan_balance(sizes: list[int]) -> list[tuple[int, int, int]]:
    """Transfers (from, to, count) that bring every frontier to within one state of the mean; none when
    the largest is within a tenth (and 64 states) of the mean: moving states costs more than it saves."""
    n, total = len(sizes), sum(sizes)
    if max(sizes) <= total / n * 1.1 + 64:
        return []
    want = [total // n + (1 if k < total % n else 0) for k in range(n)]
    give = [[k, s - w] for k, (s, w) in enumerate(zip(sizes, want)) if s > w]
    take = [[k, w - s] for k, (s, w) in enumerate(zip(sizes, want)) if s < w]
    plan = []
    while give and take:
        count = min(give[0][1], take[0][1])
        plan.append((give[0][0], take[0][0], count))
        give[0][1] -= count
        take[0][1] -= count
        give = [g for g in give if g[1]]
        take = [t for t in take if t[1]]
    return plan


class _Workers:
    """The coordinator's side: N forked workers, their control pipes, orders to all and their reports."""

    def __init__(self, n: int, cfg, successors, only, symmetry):
        ctx = mp.get_context("fork")
        ends: list[dict] = [{} for _ in range(n)]
        for i in range(n):
            for j in range(i + 1, n):
                ends[i][j], ends[j][i] = ctx.Pipe()
        pipes = [ctx.Pipe() for _ in range(n)]
        self.control = [p[0] for p in pipes]
        self.procs = [ctx.Process(target=_serve, args=(k, n, cfg, successors, only, ends[k], pipes[k][1], symmetry),
                                  name=f"claimcheck-shard-{k}", daemon=True) for k in range(n)]
        for p in self.procs:
            p.start()
        for k in range(n):  # the children hold their own copies
            pipes[k][1].close()
            for conn in ends[k].values():
                conn.close()

    def ask(self, orders) -> list:
        for c, order in zip(self.control, orders):
            c.send(order)
        out = []
        for k, c in enumerate(self.control):
            try:
                tag, value = c.recv()
            except EOFError:
                raise RuntimeError(f"explorer worker {k} died (exit code {self.procs[k].exitcode})") from None
            if tag == "error":
                raise RuntimeError(f"explorer worker {k} failed:\n{value}")
            out.append(value)
        return out

    def close(self) -> None:
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()


def path_to(cfg: M.Config, next_states, tables: list, n: int, gid: int) -> list[Step]:
    """The path from Init to state `gid`, replayed from its labels."""
    labels = []
    while True:
        parent, label, names = tables[gid % n]
        i = gid // n
        if parent[i] < 0:
            break
        labels.append(names[label[i]])
        gid = parent[i]
    steps = [Step(None, (), M.init(cfg))]
    for name, params in reversed(labels):
        nx = next(s for a, p, s in next_states(cfg, steps[-1].state) if a == name and p == params)
        steps.append(Step(name, params, nx))
    return steps


def explore_sharded(cfg: M.Config, *, workers: int = 2, successors=None, only=None, max_states: int | None = None,
                    max_depth: int | None = None, progress=None, symmetry: str | None = None) -> Result:
    """Safety (every state and action invariant, or those in `only`) on `workers` processes; stops at the
    first level with a violation, whose counterexample is a shortest one (`max_depth`: or after the
    states that many steps from Init, `complete` then False, the last level's successors generated but
    not counted, as TLC does under a state constraint). `progress(distinct=,
    generated=, depth=)` after each level. `res.peak_rss_mib`: the coordinator's peak RSS plus each
    worker's (an upper bound on the whole run's: pages shared after the fork are counted in each).
    `symmetry` (a scope of spec.symmetry): states are told apart by their orbit's fingerprint, as TLC's
    SYMMETRY does; `distinct` counts orbits, while the states expanded and the paths stay real ones."""
    t0 = time.perf_counter()
    res = Result(cfg)
    next_states = successors or M.successors
    init = M.init(cfg)
    bad = I.check_state(cfg, init)
    bad = bad if only is None else [b for b in bad if b in only]
    res.distinct = 1
    if bad:
        res.violation = Violation(bad, [Step(None, (), init)])
        res.seconds = time.perf_counter() - t0
        return res
    pool = _Workers(workers, cfg, successors, only, symmetry)
    try:
        while True:
            reports = pool.ask([("level", None)] * workers)
            new = sum(r[0] for r in reports)
            res.generated = sum(r[1] for r in reports)
            res.distinct += new
            res.depth += 1 if new else 0
            if progress:
                progress(distinct=res.distinct, generated=res.generated, depth=res.depth)
            found = next((r[2] for r in reports if r[2] is not None), None)
            if found is not None or not new:
                break
            if max_states and res.distinct >= max_states:
                res.complete = False
                break
            if max_depth is not None and res.depth >= max_depth:
                res.complete = False
                res.generated = sum(pool.ask([("generate", None)] * workers))
                break
            plan = plan_balance([r[0] for r in reports])
            if plan:
                pool.ask([("balance", plan)] * workers)
        if found is not None:
            names, gid, last = found
            tables = [(_frombytes("q", p), _frombytes("I", lab), labels)
                      for p, lab, labels in pool.ask([("tables", None)] * workers)]
            steps = path_to(cfg, next_states, tables, workers, gid)
            if last is not None:
                nx = next(s for a, p, s in next_states(cfg, steps[-1].state) if (a, p) == last)
                steps.append(Step(last[0], last[1], nx))
            res.violation = Violation(names, steps)
        ends = pool.ask([("stop", None)] * workers)
    finally:
        pool.close()
    seen = sum(e[0] for e in ends)
    if seen != res.distinct:  # every admitted state is in exactly one owner's set
        raise RuntimeError(f"explorer workers disagree: {seen} fingerprints for {res.distinct} states")
    res.peak_rss_mib = peak_rss_mib() + sum(e[1] for e in ends)
    res.worker_cpu = [e[2] for e in ends]
    res.seconds = time.perf_counter() - t0
    return res


def _frombytes(code: str, data: bytes) -> array:
    a = array(code)
    a.frombytes(data)
    return a
