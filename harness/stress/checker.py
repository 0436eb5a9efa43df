"""Check a recorded commit history (the port's recorded side, harness.port.history: the bundled server's
recorder, impl/history.py) against the twin.

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
  action invariant on the commit's edge (see `findings.UNEVALUATED` for what a commit cannot show);
- **completeness**: the fold of all deltas must equal the final database (a commit without its record,
  or an edited record, shows here or as a failed transition), and seqs are dense from 1
  (harness/stress/accounting.py, with every admitted input's fate).

The state is kept per Session (the twin's invariants and actions are per Session and per assistant:
an action reads and writes its own Session's claim, log and inputs), so the check is linear in the run.
Admission of a prompt is an environment step (not a twin action after Init): it must add exactly one
pending prompt and change nothing else. A crash is the twin's Crash.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from spec import invariants as I
from spec import model as M
from spec import names as N
from spec.actions import apply_direct

from harness import registry as R
from harness.port.history import History, Vocabulary
from harness.conformance.diff import diff
from harness.stress import accounting
from harness.stress import inputs as INPUTS
from harness.stress import memory as MEM
from harness.stress import wakes as WAKES
from harness.stress.findings import Finding, Report
from harness.stress.records import ADMIT, Commit, SessionView, asst_of, changed_vars, config_from_meta, fmt, \
    read_commit

_ALWAYS = frozenset(M.State._fields.index(v) for v in ("claim", "run", "fin", "rec"))
_COMPARED = ("claim", "nextExec", "log", "recovery", "inputs", "cancelled")
_TAKES_INPUT = (R.ACQUIRE, R.PROMOTE_CONTINUATION)
_NAMES_SESSION = (R.CANCEL_REQUEST, R.HEARTBEAT, R.RESUME)  # (actor, Session) parameters
_ADMISSIONS = {ADMIT: "pending", R.ADMIT: "held"}  # the environment's admission, the twin's Admit


class Checker:
    """Proves, for one recorded run, that its commit history is a behaviour of the correct twin.

    Fed the commits in their global order (`feed`), then the final database (`finish`), it establishes
    for every commit: it is the twin action it names, enabled in the abstract state before it (the
    folded durable state at the commit's own clock reading, with the recorded memory of the committing
    actors), and it yields the recorded durable state after it, or it is a refused step that committed
    nothing; the committing actors' memory is reachable from the twin's prediction after their previous
    commits by steps that commit nothing; a finalizer still running holds its live claim (supervision);
    every state invariant holds after it and every action invariant on its edge (per Session). At the
    end: the fold of all commits equals the final database and every admitted prompt has a fate other
    than lost. Anything else is a `Finding` in `report.violations`; `first_bad` names each violating
    Session's first bad commit, and `rows_by_session`/`crash_rows` keep the rows a counterexample is
    rebuilt from (harness/stress/counterexample.py). It does not show the physical properties of effects
    that commit nothing, nor liveness (`findings.UNEVALUATED`)."""

    def __init__(self, meta: dict, words: Vocabulary, *, max_findings: int = 50):
        """`words`: how the recording server names what the twin numbers (the History's vocabulary)."""
        self.meta = meta
        self.words = words
        self.cfg = config_from_meta(meta, words)
        self.lease = self.cfg.lease
        self.sessions = {s: SessionView() for s in self.cfg.sessions}
        self.claims: dict[str, list] = {}  # session -> recorded claim row
        self.recovery: set[M.RecRow] = set()
        self.recovery_f: frozenset = frozenset()
        self.exec_mark = 0
        self.marks = dict(words.zero_marks)
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
        self.first_lease: dict[tuple, int] = {}  # ... and the first
        self.recovery_intervals: list[tuple] = []  # (session, execution, worker, takeover wall, end wall)
        self._open_recovery: dict[str, tuple] = {}
        self.wakes = WAKES.WakeCheck(self)
        # a per-Session history (PostgreSQL's concurrent writers, impl/history_sessions.py): seqs with gaps,
        # each commit's claims only of the Sessions it locked, execution ids unique but not dense
        self.per_session = meta.get("history") == words.per_session
        self.executions: set[int] = set()  # execution ids begun so far (per-Session histories)

    # ------------------------------------------------------------------ findings

    def find(self, row, kind, names, session, message, breach=False):
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
        _s, e, owner, lease_x, phase, asst, err, *attempts = row
        ttl = lease_x - now
        if ttl < -self.cfg.eff_grace:
            ttl = -self.cfg.eff_grace  # the twin's lease runs on down to -Grace
        elif ttl > self.lease and self.max_now is not None and lease_x - self.max_now <= self.lease:
            ttl = self.lease  # set at a later clock reading than this commit's (readings of concurrent steps)
        tries = min(attempts[0] if attempts else 0, self.cfg.max_tries)
        return M.Claim(e, owner, ttl, phase, asst_of(asst, self.cfg.max_steps, self.words), err is not None, tries,
                       self.words.quarantine_reason(err))

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

    def state(self, focus, claims, now, assts, override=None, restrict=False, inputs=None, log=None, prompts=()):
        sv = self.sessions.get(focus)
        run, fin, rec = self._memory(focus, override, restrict, claims, now)
        return M.State(
            claim=self.claims_at(claims, now), nextExec=self.exec_mark + 1,
            log=log if log is not None else (sv.log_view(assts, prompts) if sv else ()),
            recovery=self.recovery_f,
            inputs=inputs if inputs is not None else (frozenset(sv.live_inputs.values()) if sv else frozenset()),
            run=run, fin=fin, rec=rec,
            cancelled=frozenset(sv.cancelled) if sv else frozenset(), faults=self.faults)

    # ------------------------------------------------------------------ one commit

    def feed(self, row: dict) -> None:
        """Check one commit (the next in seq order), then fold its delta into the durable state."""
        rep = self.report
        rep.commits += 1
        seq, action, now = row["seq"], row["action"], row["now"]
        if seq != self.seq + 1 and not (self.per_session and seq > self.seq):
            self.find(row, "record", [], None, f"commit order has a gap or repeat: seq {seq} after {self.seq}")
        self.seq = seq
        if self.max_now is not None and now < self.max_now:
            rep.clock_inversions += 1
        c, unreadable = read_commit(row, self.exec_mark, self.cfg.max_steps, self.words)
        if unreadable:
            self.find(row, "record", [], None, unreadable)
        if self.per_session:
            accounting.per_session(self, c)
        c.focus = self._focus(c)
        if self.keep_rows:
            if c.focus is not None:
                self.rows_by_session[c.focus].append(row)
            if action == R.CRASH:
                self.crash_rows.append(row)
        self._check(c)
        self.wakes.check(c)
        self._fold(c)
        if row["changed"]:
            rep.counts[action] += 1
        else:
            rep.counts["stutter"] += 1
        self._intervals(c)

    def _check(self, c: Commit) -> None:
        """The check that fits the commit: a record problem, an admission, a crash or a twin action."""
        known = self.cfg.nodes + self.cfg.recoverers
        unknown = [a for t in c.memory.values() for a in t if a not in known]
        if c.actor == self.words.unattributed:
            self.find(c.row, "record", [], c.focus, "a commit with no step attributed (made outside the "
                       "recorder's step context)")
        elif unknown:
            self.find(c.row, "record", [], c.focus, f"actors outside the run's configuration: {unknown}")
        elif c.action in _ADMISSIONS:
            self._admit(c, _ADMISSIONS[c.action])
        elif c.params is None or c.action in WAKES.ACTIONS:
            pass  # unreadable (a finding already), or the wake rows' (self.wakes)
        elif c.action == R.CRASH:
            self._crash_step(c, c.params[0])
        elif c.action not in N.ACTIONS:
            self.find(c.row, "record", [], c.focus, f"unknown step {c.action!r}")
        else:
            self._step(c)

    def _fold(self, c: Commit) -> None:
        """The durable state after this commit is the implementation's, whatever the twin said."""
        row = c.row
        self.claims = c.claims
        for cl in row["claims"]:
            self.last_lease[(cl[0], cl[1], cl[2])] = cl[3]
            self.first_lease.setdefault((cl[0], cl[1], cl[2]), cl[3])
        for ev in c.events:
            self._view(ev.sess).append(ev)
        for iid, i in c.inputs:
            self._view(i.sess).put_input(iid, i)
            if i.kind == "prompt":
                self.prompts[i.sess] = max(self.prompts[i.sess], i.src)
        if c.recovery:
            self.recovery |= c.recovery
            self.recovery_f = frozenset(self.recovery)
        for x in c.cancelled:
            self._view(x.sess).cancelled.add(x)
        self.taken_by.update(INPUTS.takers(c, self.exec_mark))
        self.exec_mark = c.exec_mark
        self.marks = row["marks"]
        self.max_now = c.now if self.max_now is None else max(self.max_now, c.now)

    def _intervals(self, c: Commit) -> None:
        """Recovery's physical interval per takeover: from its commit to the conversion or quarantine that
        ends it (or the worker's crash)."""
        row, action, params = c.row, c.action, c.params
        if not params:
            return
        who = params[0]
        if action == R.RECOVERY_TAKEOVER and row["changed"] and c.focus is not None:
            cl = next((cl for cl in row["claims"] if cl[0] == c.focus), None)
            self._open_recovery[who] = (c.focus, cl[1] if cl else 0, row["wall"])
        elif action in (R.RECOVERY_CONVERT, R.RECOVERY_CONVERT_ACK_LOST, R.RECOVERY_QUARANTINE, R.CRASH) \
                and who in self._open_recovery:
            if action == R.RECOVERY_CONVERT and not row["changed"]:
                return  # a failed conversion: quarantine follows
            s, e, t0 = self._open_recovery.pop(who)
            self.recovery_intervals.append((s, e, who, t0, row["wall"]))

    def _view(self, s: str) -> SessionView:
        if s not in self.sessions:  # a row naming a Session outside the run: keep it, the twin state cannot
            self.sessions[s] = SessionView()
        return self.sessions[s]

    def _focus(self, c: Commit) -> str | None:
        action, params, override = c.action, c.params, c.memory
        if action == ADMIT:
            return c.inputs[0][1].sess if c.inputs else None
        if (not params and action not in N.ACTIONS) or action in WAKES.ACTIONS:
            return None
        if action == R.ADMIT:
            return params[0] if params else None
        if action == R.EXACT_RETRY:
            return params[0]
        if action in _TAKES_INPUT or action == R.STEER:
            return params[1].sess
        if action in _NAMES_SESSION:
            return params[1]
        if action in (R.CORRUPT_RECOVERY_ROW, R.FORGE_CONTINUATION):
            return params[0]
        if action in (R.FINALIZER_SETTLE, R.FINALIZER_CLEAR):
            f = override["fin"].get(params[0]) or self.fin.get(params[0])
            return f.sess or None if f else None
        if action in (R.RECOVERY_TAKEOVER, R.RECOVERY_CONVERT, R.RECOVERY_QUARANTINE, R.RECOVERY_CONVERT_ACK_LOST,
                      R.RECOVERY_RECONVERT):
            w = override["rec"].get(params[0]) or self.rec.get(params[0])
            return w.sess or None if w else None
        if action == R.CRASH or not params:
            return None
        r = override["run"].get(params[0]) or self.run.get(params[0])
        return r.sess or None if r else None

    def _admit(self, c: Commit, state: str) -> None:
        if not INPUTS.admission_ok(self, c, state):
            self.find(c.row, "transition", [], c.inputs[0][1].sess if c.inputs else None,
                      f"an admission must add exactly the Session's next prompt, {state}, and change nothing else")

    # ------------------------------------------------------------------ a twin action

    def _step(self, c: Commit) -> None:
        """A twin action: the committing actors' memory, the transition, the invariants, the prediction."""
        actors = c.actors()
        assts = self._assistants(c)
        # 1. memory continuity and supervision for the committing process's actors
        for _kind, name in actors:
            last = self.process_of.get(name)
            if last is not None and last != c.row["process"]:
                self.find(c.row, "memory", [], c.focus, f"{name} committed from a new process "
                           f"({c.row['process']}) with no crash of {last} recorded")
            self.process_of[name] = c.row["process"]
        MEM.continuity(self, c, assts)
        MEM.supervision(self, c)
        # 2. the transition
        seen = INPUTS.seen_before(self.sessions.get(c.focus) if c.focus else None, c, self.words)
        pre = self.state(c.focus, self.claims, c.now, assts, c.memory, inputs=frozenset(seen.values()),
                         prompts=INPUTS.prompts_named(c))
        twin_next = apply_direct(self.cfg, pre, c.action, c.params)
        named = c.row["params"].get("_execution")
        if c.action == R.CANCEL_REQUEST and named is not None and pre.claim[M.si(self.cfg, c.focus)].exec != named:
            twin_next = None  # an interrupt of an execution that no longer holds the claim is not a CancelRequest
        post, outside = self._post_state(c, pre, assts, seen)
        post, predicted = self._transition(c, pre, post, twin_next, outside)
        # 3. invariants on the state after and on the edge, restricted to the focus Session
        self._invariants(c, pre, post)
        # 4. remember the actors' memory
        for kind, name in actors:
            getattr(self, kind)[name] = predicted[kind][name] if predicted else None

    def _assistants(self, c: Commit) -> set[int]:
        """Assistants this commit can read or write: the Session's claim, the actors' memory, the new events."""
        steps = self.cfg.max_steps
        execs, assts = set(), set()
        old = self.claims.get(c.focus)
        if old is not None:
            execs.add(old[1])
            assts.add(asst_of(old[5], steps, self.words))
        newc = c.claims.get(c.focus)
        if newc is not None:
            execs.add(newc[1])
            assts.add(asst_of(newc[5], steps, self.words))
        for table in c.memory.values():
            for v in table.values():
                execs.add(v.exec)
        for table in (self.run, self.fin, self.rec):  # every actor's memory on this Session (invariants read it)
            for v in table.values():
                if v is not None and v.sess == c.focus:
                    execs.add(v.exec)
                    assts.add(getattr(v, "mem", 0))
        assts |= {M.asst(self.cfg, e, k) for e in execs if e for k in range(1, steps + 1)}  # each Step's
        assts |= {e.asst for e in c.events if e.kind != N.REQUEST_KIND}  # an input event names a prompt
        assts.discard(0)
        return assts

    def _post_state(self, c: Commit, pre: M.State, assts: set, seen: dict) -> tuple[M.State, list[str]]:
        """The recorded state after the commit (the focus Session's view: the inputs `seen` before it, as the
        commit left them) and what it wrote outside it."""
        focus = c.focus
        post_inputs = dict(seen)
        outside = []
        for iid, i in c.inputs:
            if i.sess != focus:
                outside.append(f"input {iid} of {i.sess}")
            else:
                post_inputs[iid] = i
        outside += [f"{e.kind} event of {e.sess}" for e in c.events if e.sess != focus]
        outside += [f"cancelled execution {x.exec} of {x.sess}" for x in c.cancelled if x.sess != focus]
        changed_claims = [s for s in set(self.claims) | set(c.claims)
                          if s != focus and self.claims.get(s) != c.claims.get(s)]
        outside += [f"the claim of {s}" for s in changed_claims]
        post = self.state(focus, c.claims, c.now, assts, c.memory, inputs=frozenset(post_inputs.values()),
                          log=pre.log + tuple(e for e in c.events if e.sess == focus))
        post = post._replace(nextExec=c.exec_mark + 1, recovery=frozenset(self.recovery | c.recovery),
                             cancelled=post.cancelled | frozenset(x for x in c.cancelled if x.sess == focus))
        return post, outside

    def _transition(self, c: Commit, pre: M.State, post: M.State, twin_next: M.State | None,
                    outside: list[str]) -> tuple[M.State, dict | None]:
        """Compare the recorded transition with the twin's; returns the state after (with the twin's memory
        when they agree) and the committing actors' predicted memory (None: unknown)."""
        action, params, focus = c.action, c.params, c.focus
        durable_same = all(getattr(post, v) == getattr(pre, v) for v in _COMPARED) and not outside
        predicted = None
        if outside:
            self.find(c.row, "transition", [], focus, f"{action} wrote outside its Session {focus}: "
                       + ", ".join(outside[:4]))
        if twin_next is None:
            if not durable_same:
                self.find(c.row, "transition", [], focus, f"{action}{fmt(params)} is not enabled in the twin, "
                           f"yet the commit changed {changed_vars(pre, post)}")
            else:  # a stutter: the implementation's guard refused and committed nothing; memory is unchanged
                predicted = {"run": {}, "fin": {}, "rec": {}}
                for kind, name in c.actors():
                    predicted[kind][name] = c.memory[kind][name]
            return post, predicted
        twin_view = twin_next._replace(inputs=INPUTS.compared(twin_next.inputs, post.inputs))
        # the durable variables only (_COMPARED), one line per differing field
        # (effects: the outside world's record, not a commit's: the history check does not read them)
        bad = diff(twin_view._replace(run=post.run, fin=post.fin, rec=post.rec, faults=post.faults,
                                      effects=post.effects), post, self.cfg)
        if bad:
            self.find(c.row, "transition", [], focus, f"{action}{fmt(params)} yields a different state: "
                      + "; ".join(str(d) for d in bad[:8]) + (f"; … {len(bad) - 8} more" if len(bad) > 8 else ""))
        else:
            predicted = {"run": {}, "fin": {}, "rec": {}}
            for kind, name in c.actors():
                idx = (self.cfg.nodes if kind != "rec" else self.cfg.recoverers).index(name)
                predicted[kind][name] = getattr(twin_next, kind)[idx]
            post = post._replace(run=twin_next.run, fin=twin_next.fin, rec=twin_next.rec)
        self.faults = twin_next.faults
        return post, predicted

    def _invariants(self, c: Commit, pre: M.State, post: M.State) -> None:
        focus = c.focus
        if focus is None or focus not in self.cfg.sessions:
            return
        restrict_pre = self._restrict(pre, focus)
        restrict_post = self._restrict(post, focus)
        delta = I.changed(restrict_pre, restrict_post) | _ALWAYS
        broken = I.check_state(self.cfg, restrict_post, delta) + I.check_edge(self.cfg, restrict_pre, restrict_post)
        if broken:
            self.find(c.row, "invariant", broken, focus, f"after {c.action}{fmt(c.params)}: " + ", ".join(broken))

    def _crash_step(self, c: Commit, who: str) -> None:
        """The twin's Crash: the process's memory is gone; nothing durable changes."""
        if (c.claims != self.claims or c.events or c.inputs or c.recovery or c.cancelled
                or c.exec_mark != self.exec_mark):
            self.find(c.row, "transition", [], None, f"a crash of {who} must change nothing durable")
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

    # ------------------------------------------------------------------ the end

    def finish(self, final) -> None:
        """Compare the fold of the deltas with the final database (`final`: records.Final, the snapshot plus
        the execution sequence value and outcomes), and account for every admitted input."""
        problems = accounting.fold_differences(self, final)
        if problems:
            fake = {"seq": self.seq, "actor": self.words.environment, "action": "end", "process": "-"}
            self.find(fake, "record", [], None, "the fold of the recorded commits differs from the final database "
                       "in " + ", ".join(problems) + ": a commit without its record, or an edited record")
        self.report.inputs, lost = accounting.account_inputs(final, self.taken_by, self.words)
        self.report.lost.extend(lost)


def check_db(history: History, meta: dict | None = None, *, chunk: int = 5000, progress=None,
             keep_rows: bool = True) -> Checker:
    """Check the whole of a recorded `history` (harness.port.history; the bundled server's:
    binding.stress.run); returns the Checker (its `.report`)."""
    meta = meta or history.meta()
    checker = Checker(meta, history.vocabulary)
    checker.keep_rows = keep_rows
    after = 0
    while True:
        rows = history.rows(after, chunk)
        if not rows:
            break
        for row in rows:
            checker.feed(row)
        after = rows[-1]["seq"]
        if progress:
            progress(checker)
    checker.finish(history.final())
    return checker

