"""Check a recorded commit history (impl/history.py) against the twin.

Walking the commits in their global order, each commit must be a twin action that is enabled in the
abstract state before it and yields the durable state recorded after it:

- **the abstract state before commit k**: the durable state after commit k-1 (the fold of the recorded
  deltas), read at commit k's clock reading (a lease is live, `ttl = lease_expires_at - now > 0`, or
  expired, `ttl = 0`), plus the committing process's actors' memory as recorded before the step, plus
  every other actor's memory as known (the twin's prediction after its own last commit);
- **the transition**: the recorded action with its parameters is applied to that state with the
  *correct* twin (no defect, every assumption on: the protocol as specified). Enabled: its durable part
  must equal the recorded state after. Not enabled: the commit must have changed nothing (a fenced step
  that failed and committed an empty transaction); anything else is a violation;
- **the actor's memory** between two of its commits must follow the twin too: the memory recorded
  before commit k must be reachable from the twin's prediction after the actor's previous commit by the
  actor's own steps that commit nothing (Dispatch, the listener returns, RunnerStop/Exit, fenced steps
  that failed and rolled back, a finalizer's supervision stop);
- **supervision** (the premise of NoOverlappingEffects, SynchronizedClocks): a finalizer recorded as
  still running must hold its exact, live claim at the committing process's own clock reading;
- **invariants**: every state invariant of spec/invariants.py on the state after every commit and every
  action invariant on the commit's edge (see `UNEVALUATED` for what a commit cannot show);
- **completeness**: the fold of all deltas must equal the final database (a commit without its record,
  or an edited record, shows here or as a failed transition), and seqs are dense from 1.

The state is kept per Session (the twin's invariants and actions are per Session and per assistant:
an action reads and writes its own Session's claim, log and inputs), so the check is linear in the run.
Admission of a prompt is an environment step (not a twin action after Init): it must add exactly one
pending prompt and change nothing else. A crash is the twin's Crash.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from impl import ids
from impl.history import ENVIRONMENT, UNATTRIBUTED, ZERO_MARKS
from spec import invariants as I
from spec import model as M
from spec import names as N
from spec.actions import apply_direct

from harness.traces import trace as T
from harness.conformance.mapping import diff

ADMIT = "Admit"  # the environment's prompt admission: not a twin action (the twin admits at Init)
ENV_STEPS = (ADMIT, "Crash", "CorruptRecoveryRow")
MAX_LOCAL_STEPS = 8

# What a commit history cannot show, and why (printed by the report).
UNEVALUATED = {
    "NoPhysicalReplay": "a provider dispatch commits nothing: checked on the node's effect log instead "
                        "(each dispatch under the live lease its preceding renewal set)",
    "NoOverlappingEffects": "on commits it holds by construction (a takeover needs an expired lease, and a "
                            "finalizer on an expired lease is stopped under SynchronizedClocks); what can "
                            "fail is the premise, checked as supervision on recorded memory, and the "
                            "physical effect intervals per Session in the effect logs",
    "liveness": "SessionsEventuallyAvailable and ExpiredClaimsEventuallyHandled speak of infinite "
                "behaviours; a bounded run shows stranded work as quarantined or in-flight inputs",
}


@dataclass
class Finding:
    seq: int
    kind: str  # transition | memory | supervision | invariant | record | effect | inputs
    names: list[str]  # registry invariants broken (empty for a pure conformance failure)
    session: str | None
    actor: str
    action: str
    message: str

    def line(self) -> str:
        what = f" [{', '.join(self.names)}]" if self.names else ""
        where = f" Session {self.session}" if self.session else ""
        return f"commit {self.seq} {self.actor} {self.action}{where}: {self.kind}{what}: {self.message}"


@dataclass
class Report:
    commits: int = 0
    violations: list[Finding] = field(default_factory=list)
    breaches: list[Finding] = field(default_factory=list)  # environment assumptions broken (pauses)
    counts: Counter = field(default_factory=Counter)  # effective commits per action, stutters, ...
    inputs: dict = field(default_factory=dict)  # fate -> count
    lost: list[str] = field(default_factory=list)
    clock_inversions: int = 0

    @property
    def ok(self) -> bool:
        return not self.violations and not self.lost


# ---------------------------------------------------------------- records -> twin values

def _asst(aid) -> int:
    if aid is None:
        return 0
    try:
        return ids.assistant_execution(aid)
    except (ValueError, AttributeError):
        return -1


def event_of(row) -> M.Event:
    _id, sess, kind, _aid, execution, writer = row
    return M.Event(sess, kind.split(".", 1)[-1], execution, writer)


def input_of(row) -> tuple[str, M.Input]:
    iid, sess, kind, src, state = row[:5]
    return iid, M.Input(sess, "cont" if kind == "continuation" else "prompt", src, state)


def runner_of(v) -> M.Runner:
    return M.Runner(v[0], v[1], v[2], v[3], bool(v[4]), bool(v[5]))


def fin_of(v) -> M.Fin:
    return M.Fin(*v)


def rec_of(v) -> M.Rec:
    return M.Rec(*v)


def config_from_meta(meta: dict, prompts: int = 1) -> M.Config:
    """The twin configuration of a run: its Sessions, nodes, recovery workers, lease (in clock ticks)
    and scan bound; execution ids unbounded; every fault; no defect (the protocol as specified)."""
    return M.Config(sessions=tuple(meta["sessions"]), nodes=tuple(meta["nodes"]),
                    recoverers=tuple(meta["workers"]), prompts=max(1, prompts), max_exec=2 ** 31,
                    lease=int(meta["lease_ticks"]), scan_bound=int(meta.get("scan_bound", 100)),
                    faults=frozenset(N.FAULT_KINDS))


def twin_params(action: str, params: dict) -> tuple:
    """Registry parameters of a recorded step; keys starting with `_` are annotations the twin has no
    parameter for (`_execution`: the execution a routed interrupt names)."""
    return T.params_from_json(action, {k: v for k, v in params.items() if not k.startswith("_")}, "history")


# ---------------------------------------------------------------- the checker

class SessionView:
    """The durable state of one Session, as the fold of the deltas so far."""

    def __init__(self):
        self.log: list[M.Event] = []
        self.by_asst: dict[int, list[int]] = defaultdict(list)  # assistant -> positions in log
        self.inputs: dict[str, M.Input] = {}
        self.live_inputs: dict[str, M.Input] = {}  # pending prompts and every continuation (what any action
        self.cancelled: set[M.RecRow] = set()  # or invariant can read; consumed prompts drop out)

    def log_view(self, assts: Iterable[int]) -> tuple:
        pos = sorted(p for a in set(assts) for p in self.by_asst.get(a, ()))
        return tuple(self.log[p] for p in pos)

    def append(self, ev: M.Event) -> None:
        self.by_asst[ev.asst].append(len(self.log))
        self.log.append(ev)

    def put_input(self, iid: str, i: M.Input) -> None:
        self.inputs[iid] = i
        if i.kind == "cont" or i.state == "pending":
            self.live_inputs[iid] = i
        else:
            self.live_inputs.pop(iid, None)


class Checker:
    def __init__(self, meta: dict, *, max_findings: int = 50):
        self.meta = meta
        self.cfg = config_from_meta(meta)
        self.lease = self.cfg.lease
        self.sessions = {s: SessionView() for s in self.cfg.sessions}
        self.claims: dict[str, list] = {}  # session -> recorded claim row
        self.recovery: set[M.RecRow] = set()
        self.recovery_f: frozenset = frozenset()
        self.exec_mark = 0
        self.marks = dict(ZERO_MARKS)
        self.seq = 0
        self.faults: frozenset = frozenset()
        # actor memory as the twin predicts it (None: unknown, e.g. after a failed transition)
        self.run = {n: M.RUNNER_IDLE for n in self.cfg.nodes}
        self.fin = {n: M.FIN_IDLE for n in self.cfg.nodes}
        self.rec = {r: M.REC_IDLE for r in self.cfg.recoverers}
        self.process_of: dict[str, str] = {}  # actor -> process incarnation it last committed from
        self.max_now: int | None = None
        self.report = Report()
        self.max_findings = max_findings
        self.taken_by: dict[str, int] = {}  # input id -> execution that took it (Acquire/Promote)
        self.first_bad: dict[str, int] = {}  # session -> seq of its first violation
        self.rows_by_session: dict[str, list[dict]] = defaultdict(list)  # for traces
        self.crash_rows: list[dict] = []
        self.prompts: Counter = Counter()
        self.keep_rows = True
        self.last_lease: dict[tuple, int] = {}  # (session, execution, owner) -> the last lease expiry recorded
        self.recovery_intervals: list[tuple] = []  # (session, execution, worker, takeover wall, end wall)
        self._open_recovery: dict[str, tuple] = {}

    # ------------------------------------------------------------------ findings

    def _find(self, row, kind, names, session, message, breach=False):
        f = Finding(row["seq"], kind, list(names), session, row["actor"], row["action"], message)
        bucket = self.report.breaches if breach else self.report.violations
        if len(bucket) < self.max_findings:
            bucket.append(f)
        if not breach:
            self.report.counts["violations"] += 1
            if session is not None:
                self.first_bad.setdefault(session, row["seq"])
        else:
            self.report.counts["breaches"] += 1

    # ------------------------------------------------------------------ abstract state

    def claim_at(self, row, now: int) -> M.Claim:
        if row is None:
            return M.NO_CLAIM
        _s, e, owner, lease_x, phase, asst, err = row
        ttl = lease_x - now
        if ttl < 0:
            ttl = 0
        elif ttl > self.lease and self.max_now is not None and lease_x - self.max_now <= self.lease:
            ttl = self.lease  # set at a later clock reading than this commit's (readings of concurrent steps)
        return M.Claim(e, owner, ttl, phase, _asst(asst), err is not None)

    def claims_at(self, claims: dict, now: int) -> tuple:
        return tuple(self.claim_at(claims.get(s), now) for s in self.cfg.sessions)

    def _memory(self, focus: str | None, override: dict | None = None, restrict: bool = False,
                claims: dict | None = None, now: int | None = None):
        run, fin, rec = dict(self.run), dict(self.fin), dict(self.rec)
        if claims is not None:
            # another process's finalizer whose lease is gone at this reading has stopped (SynchronizedClocks:
            # the twin's Tick stops it when its lease expires); its own next commit shows whether it did
            for n, f in fin.items():
                if f is not None and f.pc != "idle":
                    c = claims.get(f.sess)
                    if c is None or c[1] != f.exec or c[2] != f.owner or c[3] <= now:
                        fin[n] = M.FIN_IDLE
        if override:
            run.update(override.get("run", {}))
            fin.update(override.get("fin", {}))
            rec.update(override.get("rec", {}))
        out = []
        for table, idle, names in ((run, M.RUNNER_IDLE, self.cfg.nodes), (fin, M.FIN_IDLE, self.cfg.nodes),
                                   (rec, M.REC_IDLE, self.cfg.recoverers)):
            vals = []
            for n in names:
                v = table.get(n) or idle
                if restrict and v.sess not in ("", focus):
                    v = idle
                vals.append(v)
            out.append(tuple(vals))
        return out

    def state(self, focus, claims, now, assts, override=None, restrict=False, inputs=None, log=None):
        sv = self.sessions.get(focus)
        run, fin, rec = self._memory(focus, override, restrict, claims, now)
        return M.State(
            claim=self.claims_at(claims, now), nextExec=self.exec_mark + 1,
            log=log if log is not None else (sv.log_view(assts) if sv else ()),
            recovery=self.recovery_f,
            inputs=inputs if inputs is not None else (frozenset(sv.live_inputs.values()) if sv else frozenset()),
            run=run, fin=fin, rec=rec,
            cancelled=frozenset(sv.cancelled) if sv else frozenset(), faults=self.faults)

    # ------------------------------------------------------------------ one commit

    def feed(self, row: dict) -> None:
        rep = self.report
        rep.commits += 1
        seq, actor, action, now = row["seq"], row["actor"], row["action"], row["now"]
        if seq != self.seq + 1:
            self._find(row, "record", [], None, f"commit order has a gap or repeat: seq {seq} after {self.seq}")
        self.seq = seq
        if self.max_now is not None and now < self.max_now:
            rep.clock_inversions += 1
        delta = row["delta"]
        new_claims = {c[0]: c for c in row["claims"]}
        new_events = [event_of(e) for e in delta.get("events", ())]
        new_inputs = [input_of(i) for i in delta.get("inputs", ())]
        new_rows = {M.RecRow(r[1], r[2]) for r in delta.get("recovery", ())}
        new_cancelled = {M.RecRow(h[0], h[1]) for h in delta.get("history", ()) if h[2] == "cancelled"}
        exec_mark = row["marks"].get("execution", self.exec_mark)
        mem = row["memory"] or {}
        override = {"run": {n: runner_of(v) for n, v in mem.get("run", {}).items()},
                    "fin": {n: fin_of(v) for n, v in mem.get("fin", {}).items()},
                    "rec": {r: rec_of(v) for r, v in mem.get("rec", {}).items()}}
        unknown = [a for t in override.values() for a in t if a not in self.cfg.nodes + self.cfg.recoverers]
        try:
            params = twin_params(action, row["params"]) if action in N.ACTIONS else ()
        except T.TraceError as exc:
            params = None
            self._find(row, "record", [], None, f"unreadable parameters: {exc}")
        focus = self._focus(action, params, override, new_inputs)
        if self.keep_rows:
            if focus is not None:
                self.rows_by_session[focus].append(row)
            if action == "Crash":
                self.crash_rows.append(row)
        if actor == UNATTRIBUTED:
            self._find(row, "record", [], focus, "a commit with no step attributed (made outside the recorder's "
                       "step context)")
        elif unknown:
            self._find(row, "record", [], focus, f"actors outside the run's configuration: {unknown}")
        elif action == ADMIT:
            self._admit(row, new_claims, new_events, new_inputs, new_rows, new_cancelled, exec_mark)
        elif params is None:
            pass
        elif action == "Crash":
            self._crash_step(row, params[0], new_claims, new_events, new_inputs, new_rows, new_cancelled, exec_mark)
        elif action not in N.ACTIONS:
            self._find(row, "record", [], focus, f"unknown step {action!r}")
        else:
            self._step(row, action, params, focus, now, override, new_claims, new_events, new_inputs,
                       new_rows, new_cancelled, exec_mark)
        # fold the delta: the durable state after this commit is the implementation's, whatever the twin said
        self.claims = new_claims
        for c in row["claims"]:
            self.last_lease[(c[0], c[1], c[2])] = c[3]
        for ev in new_events:
            self._view(ev.sess).append(ev)
        for iid, i in new_inputs:
            self._view(i.sess).put_input(iid, i)
            if i.kind == "prompt":
                self.prompts[i.sess] = max(self.prompts[i.sess], i.src)
        if new_rows:
            self.recovery |= new_rows
            self.recovery_f = frozenset(self.recovery)
        for x in new_cancelled:
            self._view(x.sess).cancelled.add(x)
        if action in ("Acquire", "PromoteContinuation") and params and exec_mark > self.exec_mark:
            iid = ids.prompt_id(params[1].sess, params[1].src) if params[1].kind == "prompt" else \
                ids.continuation_id(params[1].sess, params[1].src)
            self.taken_by[iid] = exec_mark
        self.exec_mark = exec_mark
        self.marks = row["marks"]
        self.max_now = now if self.max_now is None else max(self.max_now, now)
        if row["changed"]:
            rep.counts[action] += 1
        else:
            rep.counts["stutter"] += 1
        self._intervals(row, action, params)

    def _intervals(self, row, action, params) -> None:
        """Recovery's physical interval per takeover: from its commit to the conversion or quarantine that
        ends it (or the worker's crash)."""
        if not params:
            return
        who = params[0]
        if action == "RecoveryTakeover" and row["changed"]:
            c = next((c for c in row["claims"] if c[0] == params[1]), None)
            self._open_recovery[who] = (params[1], c[1] if c else 0, row["wall"])
        elif action in ("RecoveryConvert", "RecoveryQuarantine", "Crash") and who in self._open_recovery:
            if action == "RecoveryConvert" and not row["changed"]:
                return  # a failed conversion: quarantine follows
            s, e, t0 = self._open_recovery.pop(who)
            self.recovery_intervals.append((s, e, who, t0, row["wall"]))

    def _view(self, s: str) -> SessionView:
        if s not in self.sessions:  # a row naming a Session outside the run: keep it, the twin state cannot
            self.sessions[s] = SessionView()
        return self.sessions[s]

    def _focus(self, action, params, override, new_inputs) -> str | None:
        if action == ADMIT:
            return new_inputs[0][1].sess if new_inputs else None
        if not params and action not in N.ACTIONS:
            return None
        if action in ("Acquire", "PromoteContinuation"):
            return params[1].sess
        if action in ("CancelRequest", "Heartbeat", "RecoveryTakeover"):
            return params[1]
        if action == "CorruptRecoveryRow":
            return params[0]
        if action in ("FinalizerSettle", "FinalizerClear"):
            f = override["fin"].get(params[0]) or self.fin.get(params[0])
            return f.sess or None if f else None
        if action in ("RecoveryConvert", "RecoveryQuarantine"):
            w = override["rec"].get(params[0]) or self.rec.get(params[0])
            return w.sess or None if w else None
        if action == "Crash" or not params:
            return None
        r = override["run"].get(params[0]) or self.run.get(params[0])
        return r.sess or None if r else None

    def _admit(self, row, new_claims, new_events, new_inputs, new_rows, new_cancelled, exec_mark):
        ok = (len(new_inputs) == 1 and new_inputs[0][1].kind == "prompt" and new_inputs[0][1].state == "pending"
              and new_inputs[0][0] not in self._view(new_inputs[0][1].sess).inputs
              and new_claims == self.claims and not new_events and not new_rows and not new_cancelled
              and exec_mark == self.exec_mark)
        if not ok:
            self._find(row, "transition", [], new_inputs[0][1].sess if new_inputs else None,
                       "an admission must add exactly one pending prompt and change nothing else")

    def _step(self, row, action, params, focus, now, override, new_claims, new_events, new_inputs, new_rows,
              new_cancelled, exec_mark):
        cfg = self.cfg
        proc = row["process"]
        actors = [("run", n) for n in override["run"]] + [("fin", n) for n in override["fin"]] + \
                 [("rec", r) for r in override["rec"]]
        # assistants this commit can read or write: the Session's claim, the actor's memory, the new events
        assts = set()
        old = self.claims.get(focus)
        if old is not None:
            assts |= {old[1], _asst(old[5])}
        newc = new_claims.get(focus)
        if newc is not None:
            assts |= {newc[1], _asst(newc[5])}
        for table in override.values():
            for v in table.values():
                assts.add(v.exec)
        for table in (self.run, self.fin, self.rec):  # every actor's memory on this Session (invariants read it)
            for v in table.values():
                if v is not None and v.sess == focus:
                    assts.add(v.exec)
                    assts.add(getattr(v, "mem", 0))
        assts |= {e.asst for e in new_events}
        assts.discard(0)
        # 1. memory continuity and supervision for the committing process's actors
        for kind, name in actors:
            last = self.process_of.get(name)
            if last is not None and last != proc:
                self._find(row, "memory", [], focus, f"{name} committed from a new process ({proc}) with no "
                           f"crash of {last} recorded")
            self.process_of[name] = proc
        self._continuity(row, focus, now, override, assts)
        self._supervision(row, focus, now, override)
        # 2. the transition
        pre = self.state(focus, self.claims, now, assts, override)
        twin_next = apply_direct(cfg, pre, action, params)
        named = row["params"].get("_execution")
        if action == "CancelRequest" and named is not None and pre.claim[M.si(cfg, focus)].exec != named:
            twin_next = None  # an interrupt of an execution that no longer holds the claim is not a CancelRequest
        sv = self.sessions.get(focus) if focus else None
        post_inputs = dict(sv.live_inputs) if sv else {}
        outside = []
        for iid, i in new_inputs:
            if i.sess != focus:
                outside.append(f"input {iid} of {i.sess}")
            elif i.kind == "cont" or i.state == "pending":
                post_inputs[iid] = i
            else:
                post_inputs.pop(iid, None)
        outside += [f"{e.kind} event of {e.sess}" for e in new_events if e.sess != focus]
        outside += [f"cancelled execution {x.exec} of {x.sess}" for x in new_cancelled if x.sess != focus]
        changed_claims = [s for s in set(self.claims) | set(new_claims)
                          if s != focus and self.claims.get(s) != new_claims.get(s)]
        outside += [f"the claim of {s}" for s in changed_claims]
        post = self.state(focus, new_claims, now, assts, override, inputs=frozenset(post_inputs.values()),
                          log=pre.log + tuple(e for e in new_events if e.sess == focus))
        post = post._replace(nextExec=exec_mark + 1, recovery=frozenset(self.recovery | new_rows),
                             cancelled=post.cancelled | frozenset(x for x in new_cancelled if x.sess == focus))
        durable_same = (post.claim == pre.claim and post.nextExec == pre.nextExec and post.log == pre.log
                        and post.recovery == pre.recovery and post.inputs == pre.inputs
                        and post.cancelled == pre.cancelled and not outside)
        predicted = None
        if outside:
            self._find(row, "transition", [], focus, f"{action} wrote outside its Session {focus}: "
                       + ", ".join(outside[:4]))
        if twin_next is None:
            if not durable_same:
                self._find(row, "transition", [], focus, f"{action}{_fmt(params)} is not enabled in the twin, "
                           f"yet the commit changed {_changed_vars(pre, post)}")
            else:  # a stutter: the implementation's guard refused and committed nothing; memory is unchanged
                predicted = {"run": {}, "fin": {}, "rec": {}}
                for kind, name in actors:
                    predicted[kind][name] = override[kind][name]
        else:
            twin_view = twin_next._replace(inputs=frozenset(i for i in twin_next.inputs
                                                            if i.kind == "cont" or i.state == "pending"))
            # the durable variables only (claim, nextExec, log, recovery, inputs, cancelled), one line per field
            bad = diff(twin_view._replace(run=post.run, fin=post.fin, rec=post.rec, faults=post.faults), post, cfg)
            if bad:
                self._find(row, "transition", [], focus, f"{action}{_fmt(params)} yields a different state: "
                           + "; ".join(str(d) for d in bad[:8]) + (f"; … {len(bad) - 8} more" if len(bad) > 8 else ""))
                predicted = None
            else:
                predicted = {"run": {}, "fin": {}, "rec": {}}
                for kind, name in actors:
                    idx = (cfg.nodes if kind != "rec" else cfg.recoverers).index(name)
                    predicted[kind][name] = getattr(twin_next, kind)[idx]
                post = post._replace(run=twin_next.run, fin=twin_next.fin, rec=twin_next.rec)
            self.faults = twin_next.faults
        # 3. invariants on the state after and on the edge, restricted to the focus Session
        if focus is not None and focus in self.cfg.sessions:
            restrict_pre = self._restrict(pre, focus)
            restrict_post = self._restrict(post, focus)
            delta = I.changed(restrict_pre, restrict_post) | _ALWAYS
            broken = I.check_state(cfg, restrict_post, delta) + I.check_edge(cfg, restrict_pre, restrict_post)
            if broken:
                self._find(row, "invariant", broken, focus, f"after {action}{_fmt(params)}: "
                           + ", ".join(broken))
        # 4. remember the actors' memory
        for kind, name in actors:
            getattr(self, kind)[name] = predicted[kind][name] if predicted else None

    def _crash_step(self, row, who, new_claims, new_events, new_inputs, new_rows, new_cancelled, exec_mark):
        """The twin's Crash: the process's memory is gone; nothing durable changes."""
        if (new_claims != self.claims or new_events or new_inputs or new_rows or new_cancelled
                or exec_mark != self.exec_mark):
            self._find(row, "transition", [], None, f"a crash of {who} must change nothing durable")
        self._crash(who)

    def _crash(self, who: str) -> None:
        if who in self.run:
            self.run[who], self.fin[who] = M.RUNNER_IDLE, M.FIN_IDLE
        if who in self.rec:
            self.rec[who] = M.REC_IDLE
        self.process_of.pop(who, None)
        self.faults = self.faults | {"crash"}

    def _restrict(self, st: M.State, focus: str) -> M.State:
        def keep(v, idle):
            return v if v.sess in ("", focus) else idle
        return st._replace(run=tuple(keep(r, M.RUNNER_IDLE) for r in st.run),
                           fin=tuple(keep(f, M.FIN_IDLE) for f in st.fin),
                           rec=tuple(keep(w, M.REC_IDLE) for w in st.rec))

    # ------------------------------------------------------------------ memory between commits

    def _continuity(self, row, focus, now, override, assts) -> None:
        names = [(k, n) for k in ("run", "fin", "rec") for n in override[k]]
        predicted = {(k, n): getattr(self, k).get(n) for k, n in names}
        if any(v is None for v in predicted.values()):
            return  # unknown after a failed transition: resynchronise on the recorded memory
        target = tuple(override[k][n] for k, n in names)
        if tuple(predicted[x] for x in names) == target:
            return
        start = {"run": {}, "fin": {}, "rec": {}}
        for (k, n), v in predicted.items():
            start[k][n] = v
        st = self.state(focus, self.claims, now, assts | {v.exec for v in target}, start)
        key = lambda s: tuple(getattr(s, k)[(self.cfg.nodes if k != "rec" else self.cfg.recoverers).index(n)]
                              for k, n in names)
        frontier, seen = [st], {key(st)}
        for _ in range(MAX_LOCAL_STEPS):
            nxt_frontier = []
            for s in frontier:
                for s2 in self._local_steps(s, names):
                    k2 = key(s2)
                    if k2 == target:
                        return
                    if k2 not in seen:
                        seen.add(k2)
                        nxt_frontier.append(s2)
            frontier = nxt_frontier
            if not frontier:
                break
        got = ", ".join(f"{n}.{k}={_short(override[k][n])}" for k, n in names if override[k][n] != predicted[(k, n)])
        want = ", ".join(f"{n}.{k}={_short(predicted[(k, n)])}" for k, n in names
                         if override[k][n] != predicted[(k, n)])
        self._find(row, "memory", [], focus, f"recorded memory before the step ({got}) is not reachable by "
                   f"local steps from the twin's prediction after the actor's last commit ({want})")

    def _local_steps(self, st: M.State, names):
        """Steps of the given actors that change only their memory (no commit)."""
        cfg = self.cfg
        for kind, n in names:
            if kind == "run":
                k = cfg.nodes.index(n)
                for name, fn in M.RUNNER_STEPS:
                    nx = fn(cfg, st, k)
                    if nx is not None and nx != st and _durable_eq(st, nx):
                        yield nx
            elif kind == "fin":
                k = cfg.nodes.index(n)
                f = st.fin[k]
                for fn in (M.FinalizerSettle, M.FinalizerClear):
                    nx = fn(cfg, st, k)
                    if nx is not None and nx != st and _durable_eq(st, nx):
                        yield nx
                if f.pc != "idle" and not M.fenced(st, M.si(cfg, f.sess), f.exec, f.owner):
                    yield st._replace(fin=M._put(st.fin, k, M.FIN_IDLE))  # supervision: its lease is gone
            else:
                k = cfg.recoverers.index(n)
                for fn in (M.RecoveryConvert, M.RecoveryQuarantine):
                    nx = fn(cfg, st, k)
                    if nx is not None and nx != st and _durable_eq(st, nx):
                        yield nx

    def _supervision(self, row, focus, now, override) -> None:
        """A finalizer still running must not have outlived the lease it held, at its own process's clock
        reading (SynchronizedClocks: a supervised finalizer stops no later than its lease expires). The
        lease is the last one recorded for its exact claim: a takeover may commit between the node's
        supervision read and its own commit (the node read the clock first), so the claim as it stands
        at this commit can already be another owner's while the finalizer rightly ran."""
        for n, f in override["fin"].items():
            if f.pc == "idle":
                continue
            held = self.last_lease.get((f.sess, f.exec, f.owner))
            if held is not None and now < held:
                continue
            c = self.claims.get(f.sess)
            seen = "no claim" if c is None else f"claim (execution {c[1]}, owner {c[2]}, lease until {c[3]})"
            lease = "a claim never recorded" if held is None else f"its lease, which expired at {held}"
            self._find(row, "supervision", ["NoOverlappingEffects"], f.sess,
                       f"finalizer of {n} still running ({f.pc}, execution {f.exec}) at clock {now}, past {lease}; "
                       f"now {seen}: supervision should have stopped it")

    # ------------------------------------------------------------------ the end

    def finish(self, final) -> None:
        """Compare the fold of the deltas with the final database (`final`: impl.snapshot.Snapshot plus
        the execution sequence value), and account for every admitted input."""
        fake = {"seq": self.seq, "actor": ENVIRONMENT, "action": "end", "process": "-"}
        got_claims = {s: c for s, c in self.claims.items()}
        db_claims = {s: [s, c.execution, c.owner, c.lease_expires_at, c.phase, c.assistant, c.recovery_error]
                     for s, c in final.snapshot.claims.items()}
        problems = []
        if got_claims != db_claims:
            problems.append("claims")
        folded_events = sum(len(v.log) for v in self.sessions.values())
        if folded_events != len(final.snapshot.events):
            problems.append(f"events ({folded_events} recorded, {len(final.snapshot.events)} in the database)")
        else:
            by_s = defaultdict(list)
            for e in final.snapshot.events:
                by_s[e.session].append(M.Event(e.session, e.kind, e.execution, e.writer))
            if any(by_s.get(s, []) != v.log for s, v in self.sessions.items()):
                problems.append("event log")
        db_inputs = {i.id: M.Input(i.session, i.kind, i.src, i.state) for i in final.snapshot.inputs}
        folded_inputs = {iid: i for v in self.sessions.values() for iid, i in v.inputs.items()}
        if db_inputs != folded_inputs:
            problems.append("inputs")
        if {M.RecRow(e, s) for e, s in final.snapshot.recovery} != self.recovery:
            problems.append("session_recovery rows")
        folded_cancelled = {x for v in self.sessions.values() for x in v.cancelled}
        if {M.RecRow(e, s) for e, s in final.snapshot.cancelled} != folded_cancelled:
            problems.append("cancelled executions")
        if final.execution_seq != self.exec_mark:
            problems.append(f"execution sequence ({self.exec_mark} recorded, {final.execution_seq} in the database)")
        if problems:
            self._find(fake, "record", [], None, "the fold of the recorded commits differs from the final database "
                       "in " + ", ".join(problems) + ": a commit without its record, or an edited record")
        self._account(final)

    def _account(self, final) -> None:
        """Every admitted prompt: answered, cancelled, pending (recoverable), in flight (recoverable),
        quarantined (held for an operator), or lost."""
        rep = self.report
        snap = final.snapshot
        inputs = {i.id: i for i in snap.inputs}
        outcome = dict(final.outcomes)  # execution -> cleared | cancelled | recovered
        kinds = defaultdict(set)
        for e in snap.events:
            kinds[e.execution].add(e.kind)
        claim_of_exec = {c.execution: (s, c) for s, c in snap.claims.items()}
        fates = Counter()

        def fate_exec(e: int, s: str, depth=0) -> str:
            if depth > 10_000:
                return "lost"
            out = outcome.get(e)
            if out == "cleared":
                if "Ended" in kinds[e]:
                    return "answered"
                return "answered (failed)" if "Failed" in kinds[e] else "lost"
            if out == "cancelled":
                return "cancelled"
            if out == "recovered":
                cid = ids.continuation_id(s, e)
                c = inputs.get(cid)
                if c is None or (e, s) not in snap.recovery:
                    return "lost"
                if c.state == "pending":
                    return "pending continuation"
                e2 = self.taken_by.get(cid)
                return "lost" if e2 is None else fate_exec(e2, s, depth + 1)
            if e in claim_of_exec:
                _, c = claim_of_exec[e]
                if c.recovery_error is not None:
                    return "quarantined (cancelled)" if c.phase in ("cancelling", "cancelled") else "quarantined"
                return "in flight"
            return "lost"

        for i in snap.inputs:
            if i.kind != "prompt":
                continue
            if i.state == "pending":
                f = "pending"
            else:
                e = self.taken_by.get(i.id)
                f = "lost" if e is None else fate_exec(e, i.session)
            fates[f] += 1
            if f == "lost" and len(rep.lost) < 20:
                rep.lost.append(f"{i.id} ({i.session}, prompt {i.src}, taken by execution "
                                f"{self.taken_by.get(i.id)})")
        rep.inputs = {"admitted": sum(fates.values()), **dict(fates)}


_ALWAYS = frozenset(M.State._fields.index(v) for v in ("claim", "run", "fin", "rec"))


def _durable_eq(a: M.State, b: M.State) -> bool:
    return (a.claim == b.claim and a.log == b.log and a.recovery == b.recovery and a.inputs == b.inputs
            and a.cancelled == b.cancelled and a.nextExec == b.nextExec)


def _changed_vars(a: M.State, b: M.State) -> str:
    return ", ".join(v for v in ("claim", "nextExec", "log", "recovery", "inputs", "cancelled")
                     if getattr(a, v) != getattr(b, v)) or "nothing"


def _fmt(params) -> str:
    from harness.conformance.replay import fmt_params
    return f"({fmt_params(params)})" if params is not None else "(?)"


def _short(v, limit: int = 160) -> str:
    text = repr(v)
    return text if len(text) <= limit else text[:limit] + "…"


# ---------------------------------------------------------------- reading a database's history

@dataclass
class Final:
    snapshot: object  # impl.snapshot.Snapshot
    execution_seq: int
    outcomes: dict  # execution -> cleared | cancelled | recovered


def read_final(db) -> Final:
    import sqlalchemy as sa

    from impl.schema import history_t, sequence_t
    from impl.snapshot import read as read_snapshot
    with db.read() as conn:
        snap = read_snapshot(conn, assistants=False)
        seq = conn.execute(sa.select(sequence_t.c.value).where(sequence_t.c.name == "execution")).scalar_one()
        outcomes = {r[0]: r[1] for r in conn.execute(sa.select(history_t.c.execution_id, history_t.c.outcome))}
    return Final(snap, seq, outcomes)


def check_db(db, meta: dict | None = None, *, chunk: int = 5000, progress=None, keep_rows: bool = True) -> Checker:
    """Check the whole history of `db`; returns the Checker (its `.report`)."""
    from impl.history import read_meta, read_rows
    meta = meta or read_meta(db)
    checker = Checker(meta)
    checker.keep_rows = keep_rows
    after = 0
    while True:
        rows = read_rows(db, after, chunk)
        if not rows:
            break
        for row in rows:
            checker.feed(row)
        after = rows[-1]["seq"]
        if progress:
            progress(checker)
    checker.finish(read_final(db))
    return checker


def meta_for(cfg: M.Config, **extra) -> dict:
    return {"sessions": list(cfg.sessions), "nodes": list(cfg.nodes), "workers": list(cfg.recoverers),
            "lease_ticks": cfg.lease, "scan_bound": cfg.scan_bound, "defects": sorted(cfg.defects), **extra}


# ---------------------------------------------------------------- recording in-process (deterministic)

class RecordingScheduler:
    """harness.conformance.scheduler.Scheduler with the recorder on: the twin (with the configuration's defects)
    chooses, the implementation follows one atomic unit at a time, every commit is recorded with its
    actor, action, clock reading and the actor's memory before the step. Each node and each recovery
    worker is a process of its own here (a Crash(k) resets exactly what the twin's Crash(k) resets)."""

    def __init__(self, cfg: M.Config, db=None):
        from impl.db import Database
        from impl.history import HistoryRecorder, Step

        from harness.conformance.scheduler import Scheduler
        self.cfg = cfg
        self.db = db or Database.memory()
        self.recorder = HistoryRecorder.install(self.db, "scheduler", meta=meta_for(cfg, source="scheduler"))
        self.recorder.current = Step(ENVIRONMENT, ADMIT, {}, {}, 0)  # the World admits the prompts
        self.sched = Scheduler(cfg, db=self.db)
        self.recorder.current = None
        self.twin = M.init(cfg)

    @property
    def world(self):
        return self.sched.world

    def _memory(self, who: str) -> dict:
        from impl.history import memory_of
        w = self.world
        return memory_of(nodes=[w.node(who)]) if who in w.nodes else memory_of(workers=[w.worker(who)])

    def apply(self, name: str, params: tuple, twin_next: M.State | None = None) -> None:
        w = self.world
        now = w.clock.now()
        twin_next = twin_next if twin_next is not None else M.apply(self.cfg, self.twin, name, params)
        if twin_next is None:
            raise ValueError(f"{name}{params} is not enabled in the twin")
        pj = T.params_to_json(name, params)
        if name == "Tick":
            self.sched.apply(name, params, twin_next)
        elif name == "Crash":
            self.sched.apply(name, params, twin_next)
            self.recorder.process = f"crash:{params[0]}"
            with self.recorder.step(ENVIRONMENT, name, pj, {}, now):
                with self.db.transaction():
                    pass
        elif name == "CorruptRecoveryRow":
            with self.recorder.step(ENVIRONMENT, name, pj, {}, now):
                self.sched.apply(name, params, twin_next)
        else:
            who = params[0]
            self.recorder.process = who
            with self.recorder.step(who, name, pj, self._memory(who), now):
                self.sched.apply(name, params, twin_next)
        self.twin = twin_next

    def run(self, steps) -> "RecordingScheduler":
        for name, params in steps:
            self.apply(name, params)
        return self


def record_trace(path, defects=None, db=None) -> RecordingScheduler:
    """Record a trace file's schedule (its defects, or `defects`) with the recorder on."""
    tr = T.load(path)
    cfg = T.trace_to_config(tr.config, defects)
    rs = RecordingScheduler(cfg, db)
    for k, step in enumerate(tr.steps):
        params = T.params_from_json(step.action, step.params, f"steps[{k}]")
        nxt = M.apply(cfg, rs.twin, step.action, params)
        if nxt is None:
            break  # with other switches the schedule can leave the twin (as replay stops there too)
        rs.apply(step.action, params, nxt)
    return rs


def record_walk(cfg: M.Config, seed: int, steps: int, db=None, choose=None) -> RecordingScheduler:
    """A random twin walk (seeded, deterministic), recorded."""
    import random
    rng = random.Random(seed)
    rs = RecordingScheduler(cfg, db)
    for _ in range(steps):
        options = list(M.successors(cfg, rs.twin))
        if not options:
            break
        name, params, nxt = (choose or rng.choice)(options)
        rs.apply(name, params, nxt)
    return rs


# ---------------------------------------------------------------- a violation as a replayable trace

def session_trace(checker: Checker, session: str, defects=(), *, title: str | None = None,
                  source: str = "stress", max_depth: int = 8) -> tuple[T.Trace, str | None]:
    """The offending Session's twin actions from Init, on a configuration embedded in the trace (trace
    format v1, unchanged): that Session (plus any Session an adversary's corrupt recovery row for one of
    its executions names), the run's nodes and workers, its prompts, its executions renumbered 1..m in
    order, lease 1 (a lease is live or expired, as the history check abstracts it) and the run's defects.
    Between two recorded commits the steps that commit nothing (Dispatch, listener returns, Tick, failed
    fenced steps) are found by a bounded breadth-first search, so the trace is a behaviour of the twin
    whose claim and log follow the recorded ones. The Session's history before its last quiescent point
    (no claim, no actor on it, no pending continuation) is left out when the rest reproduces alone.
    Returns (trace, None), or (the prefix built, why it stopped)."""
    bad = checker.first_bad.get(session)
    rows = sorted(checker.rows_by_session.get(session, []) + checker.crash_rows, key=lambda r: r["seq"])
    if bad is not None:
        rows = [r for r in rows if r["seq"] <= bad]
    first_seq = None
    cfg, steps, why, quiet = _walk(checker, session, rows, defects, max_depth)
    if quiet is not None and why is None:
        cut = [r for r in rows if r["seq"] > quiet]
        cfg2, steps2, why2, _ = _walk(checker, session, cut, defects, max_depth)
        if why2 is None and steps2 and steps2[-1][0] == steps[-1][0]:
            cfg, steps, first_seq = cfg2, steps2, quiet
    body = [T.TraceStep(action=name, params=T.params_to_json(name, p), state=T.state_to_json(cfg, nx), note=note)
            for name, p, nx, note in steps]
    found = [f for f in checker.report.violations if f.session == session]
    names = sorted({n for f in found for n in f.names if n in N.INVARIANTS})
    if found and all(f.kind == "supervision" for f in found):
        why = why or ("a supervision finding needs a stalled node, which the deterministic scheduler never has "
                      "(its Tick supervises every node at the instant of expiry): the trace shows the schedule")
    reported = "; ".join(f.line() for f in found)
    if first_seq is not None:
        reported = f"commits after {first_seq} (the Session was quiescent there); " + reported
    tr = T.Trace(meta=T.Meta(title=title or f"history violation in Session {session}",
                             defect=(sorted(cfg.defects) or [None])[0], invariants=names, source=source,
                             reported=reported[:2000] or None),
                 config=T.config_to_trace(cfg), steps=body)
    return tr, why


def _walk(checker: Checker, session: str, rows: list[dict], defects, max_depth: int):
    """(cfg, steps, why, seq of the last quiescent point) for the Session's rows, as session_trace says."""
    bad = checker.first_bad.get(session)
    execs = set()
    for r in rows:
        c = next((c for c in r["claims"] if c[0] == session), None)
        if c:
            execs.add(c[1])
        for e in r["delta"].get("events", ()):
            if e[1] == session:
                execs.add(e[4])
        if r["action"] == "PromoteContinuation" and r["params"]["i"]["sess"] == session:
            execs.add(r["params"]["i"]["src"])
    corrupt = [r for s2, rs in checker.rows_by_session.items() if s2 != session for r in rs
               if r["action"] == "CorruptRecoveryRow" and r["params"].get("e") in execs
               and (bad is None or r["seq"] <= bad) and r["seq"] >= (rows[0]["seq"] if rows else 0)]
    rows = sorted(rows + corrupt, key=lambda r: r["seq"])
    emap = {e: k for k, e in enumerate(sorted(execs), start=1)}
    meta = checker.meta
    sessions = tuple(s for s in meta["sessions"] if s == session or any(r["params"]["s"] == s for r in corrupt))
    prompts = max(1, max(checker.prompts.get(s, 1) for s in sessions))
    cfg = M.Config(sessions=sessions, nodes=tuple(meta["nodes"]), recoverers=tuple(meta["workers"]),
                   prompts=prompts, max_exec=max(1, len(emap)), lease=1, scan_bound=1,
                   faults=frozenset(N.FAULT_KINDS), defects=frozenset(N.check_defects(defects)))
    red = _Reducer(cfg, session, emap)
    st = M.init(cfg)
    steps: list[tuple[str, tuple, M.State, str | None]] = []
    prev_claim = None
    why = None
    quiet = None
    k_s = red.si

    def quiescent(s: M.State) -> bool:
        return (s.claim[k_s] == M.NO_CLAIM and all(r.pc == "idle" for r in s.run)
                and all(f.pc == "idle" for f in s.fin) and all(w.pc == "idle" for w in s.rec)
                and not any(i.kind == "cont" and i.state == "pending" for i in s.inputs))

    for r in rows:
        action = r["action"]
        if action == ADMIT:
            continue
        if action == "Crash":
            who = r["params"]["n"]
            k = (cfg.nodes + cfg.recoverers).index(who) if who in cfg.nodes + cfg.recoverers else None
            nx = M.Crash(cfg, st, k) if k is not None else None
            if nx is not None and nx != st:
                steps.append(("Crash", (who,), nx, f"commit {r['seq']}: crash of {who}"))
                st = nx
            continue
        claim_after = next((c for c in r["claims"] if c[0] == session), None)
        try:
            params = red.params(action, twin_params(action, r["params"]))
        except (T.TraceError, KeyError) as exc:
            why = f"commit {r['seq']}: cannot translate its parameters ({exc})"
            break
        target_mem = red.memory(r["memory"] or {})
        live_before = prev_claim is not None and prev_claim[3] > r["now"]
        red.follow(r)
        want = (red.claim(claim_after, r["now"]), tuple(red.log))
        if action == "Heartbeat" and live_before and want[0].ttl > 0 and r["seq"] != bad:
            prev_claim = claim_after
            continue  # a live lease stays live: invisible at lease 1
        named = r["params"].get("_execution")
        if action == "CancelRequest" and named is not None and (prev_claim is None or prev_claim[1] != named):
            prev_claim = claim_after
            continue  # a stale interrupt: not a CancelRequest
        path = _search(cfg, st, action, params, target_mem, live_before, want, red, max_depth)
        prev_claim = claim_after
        if path is None:
            if not r["changed"]:
                continue  # a stutter the reduced twin cannot take either: nothing to show
            if r["seq"] == bad:
                # the twin takes this step differently: include it, so replay shows the divergence
                tail = _search(cfg, st, action, params, target_mem, live_before, None, red, max_depth)
                if tail is not None:
                    for k, (name, p, nx) in enumerate(tail):
                        steps.append((name, p, nx, f"commit {r['seq']}: the implementation's result differs"
                                      if k == len(tail) - 1 else None))
                    break
                pre_path = _search(cfg, st, None, None, target_mem, live_before, None, red, max_depth)
                for name, p, nx in pre_path or ():
                    steps.append((name, p, nx, None))
                why = (f"commit {r['seq']} ({action}) is not a step of the twin with defects "
                       f"{sorted(cfg.defects) or 'none'}: the trace ends just before it")
            else:
                why = (f"commit {r['seq']} ({action}) could not be matched by the reduced twin "
                       f"(within {max_depth} steps that commit nothing); the trace stops there")
            break
        for k, (name, p, nx) in enumerate(path):
            note = f"commit {r['seq']} by {r['actor']} at clock {r['now']}" if k == len(path) - 1 else None
            steps.append((name, p, nx, note))
        if path:
            st = path[-1][2]
        if r["seq"] != bad and quiescent(st):
            quiet = r["seq"]
    return cfg, steps, why, quiet


class _Reducer:
    """Translate recorded values into the reduced configuration (executions renumbered)."""

    def __init__(self, cfg, session, emap):
        self.cfg, self.session, self.emap = cfg, session, emap
        self.si = cfg.sessions.index(session)
        self.log: list[M.Event] = []

    def e(self, x: int) -> int:
        return 0 if x == 0 else self.emap[x]

    def follow(self, row) -> None:
        for ev in row["delta"].get("events", ()):
            if ev[1] == self.session:
                e = event_of(ev)
                self.log.append(e._replace(asst=self.e(e.asst)))

    def params(self, action, p: tuple) -> tuple:
        if action in ("Acquire", "PromoteContinuation"):
            i = p[1]
            if i.sess != self.session:
                raise KeyError(f"input of {i.sess}")
            return (p[0], i._replace(src=self.e(i.src)) if i.kind == "cont" else i)
        if action == "CorruptRecoveryRow":
            return (p[0], self.e(p[1]))
        return p

    def memory(self, mem: dict) -> dict:
        out = {}
        for n, v in mem.get("run", {}).items():
            r = runner_of(v)
            out[("run", n)] = M.RUNNER_IDLE if r.sess != self.session else \
                r._replace(exec=self.e(r.exec), mem=self.e(r.mem))
        for n, v in mem.get("fin", {}).items():
            f = fin_of(v)
            out[("fin", n)] = M.FIN_IDLE if f.sess != self.session else f._replace(exec=self.e(f.exec))
        for n, v in mem.get("rec", {}).items():
            w = rec_of(v)
            out[("rec", n)] = M.REC_IDLE if w.sess != self.session else w._replace(exec=self.e(w.exec))
        return out

    def claim(self, c, now):
        if c is None:
            return M.NO_CLAIM
        return M.Claim(self.e(c[1]), c[2], 1 if c[3] > now else 0, c[4], self.e(_asst(c[5])), c[6] is not None)


def _actor_val(cfg, st, kind, n):
    if kind == "rec":
        return st.rec[cfg.recoverers.index(n)]
    return getattr(st, kind)[cfg.nodes.index(n)]


def _search(cfg, st, action, params, target_mem, live_before, want, red, max_depth):
    """Breadth-first over steps that commit nothing (and Tick) to a state with the recorded memory and
    lease liveness from which the recorded action yields the recorded claim and log; returns the path."""
    k = red.si

    def ready(s):
        if any(_actor_val(cfg, s, kind, n) != v for (kind, n), v in target_mem.items()):
            return False
        return s.claim[k] == M.NO_CLAIM or (s.claim[k].ttl > 0) == live_before

    def finish(s):
        if action is None:
            return []
        nx = apply_direct(cfg, s, action, params)
        if nx is None or (want is not None and (nx.claim[k], tuple(e for e in nx.log if e.sess == red.session))
                          != want):
            return None
        return [(action, params, nx)]

    frontier = [(st, [])]
    seen = {st}
    for depth in range(max_depth + 1):
        nxt = []
        for s, path in frontier:
            if ready(s):
                tail = finish(s)
                if tail is not None:
                    return path + tail
            if depth == max_depth:
                continue
            for label, p, s2 in M.successors(cfg, s):
                if label != "Tick" and not (_durable_eq(s, s2) and label not in ("Crash", "CancelRequest")):
                    continue
                if s2 not in seen:
                    seen.add(s2)
                    nxt.append((s2, path + [(label, p, s2)]))
        frontier = nxt
    return None


# ---------------------------------------------------------------- the report

def render(checker: Checker, *, limit: int = 10) -> str:
    rep = checker.report
    c = rep.counts
    lines = [f"history check: {rep.commits:,} commits walked in order against the twin "
             f"({sum(v for k, v in c.items() if k in N.ACTIONS or k in ENV_STEPS):,} changed the state, "
             f"{c['stutter']:,} were empty fenced steps)",
             f"  violations: {c['violations']}" + ("" if not rep.violations else ":")]
    lines += [f"    - {f.line()}" for f in rep.violations[:limit]]
    if c["breaches"]:
        lines.append(f"  environment assumption breaches (pauses): {c['breaches']}")
        lines += [f"    - {f.line()}" for f in rep.breaches[:3]]
    if rep.clock_inversions:
        lines.append(f"  clock readings below an earlier commit's (concurrent steps): {rep.clock_inversions:,}")
    if rep.inputs:
        order = ["answered", "answered (failed)", "cancelled", "pending", "pending continuation", "in flight",
                 "quarantined (cancelled)", "quarantined", "lost"]
        parts = [f"{k} {rep.inputs.get(k, 0)}" for k in order if rep.inputs.get(k) or k == "lost"]
        lines.append(f"  inputs: {rep.inputs.get('admitted', 0)} prompts admitted: " + ", ".join(parts))
        lines += [f"    - lost: {x}" for x in rep.lost[:limit]]
    lines.append("  not evaluable on commits (see harness/README.md, Stress): " + ", ".join(UNEVALUATED))
    return "\n".join(lines)
