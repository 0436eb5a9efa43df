"""The history converter: the bundled implementation's commit history (impl/history.py: the
`commit_history` table that `claimcheck stress` and tests/stress/stresskit.py's RecordingScheduler record)
as history-format lines (harness/validation/history.py), so `claimcheck validate` reads it like any other
implementation's log (`read_database`, which harness.cli hands the validate command).

Each `commit_history` row becomes one line: its actor, action and parameters as recorded; `now` (none
for a step that reads no lease, `CLOCK_FREE`, by a process that records no actor's memory: its clock is not
the nodes'; else the committing process's own reading, with `process` naming it: docs/history.md, "Real time"); the claim rows that differ from the previous row's claim table (each read at the row's own clock reading:
`ttl = lease_expires_at - now`); the delta's events, session_recovery rows, inputs and cancelled
executions in the twin's vocabulary (harness/stress/records.py reads them, with binding.stress.vocabulary);
the wake-row table when it
changed (the ordinary queue's row of rank w is the twin's row w); the execution sequence as `nextExec`;
the recorded memory as named fields. Rows the twin has no action for are left out and counted:

- the prompts admitted before the first action (the World's admission at start, recorded as
  `AdmitRequested` by the environment): the twin admits them at Init (`prompts` per Session);
- a later `AdmitRequested` (the stress supervisor's admission of a prompt, pending, one transaction)
  becomes the twin's Admit then Resume while the Session holds no other prompt (`admission_lines`);
  otherwise it is not a twin action, so a history with one cannot validate (`skipped` says how many);
- an interrupt the stress callers aimed at an execution that no longer holds the claim (`_execution`):
  the implementation refuses it and commits nothing, and it is no twin CancelRequest (which targets the
  Session's claim, whichever execution holds it).
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa

from impl.db import Database
from impl.history import PER_SESSION, read_meta, read_rows
from impl.history_sessions import commit_order, settled_seq
from impl.wakes import ORDINARY
from spec import model as M
from spec import names as N

from harness import registry as R
from harness.stress.records import ADMIT, asst_of, config_from_meta, event_of, input_of
from harness.traces import trace as T
from harness.validation import history as H

from binding.flaws import with_flaw
from binding.history_sessions import Unordered, whole_rows
from binding.mapping import why_of
from binding.stress.vocabulary import VOCABULARY

# the steps whose twin action reads no lease: their lines carry no clock reading (a caller's or the
# supervisor's process reads its own clock, which is not the one the nodes' lease decisions used)
CLOCK_FREE = frozenset({R.ADMIT, R.EXACT_RETRY, R.RESUME, R.WAKE_ARRIVE, R.WAKE_SCAN, R.WAKE_READ, R.WAKE_RESERVE,
                        R.WAKE_SERVE, R.WAKE_LOST, R.WAKE_SCAN_QUEUE,
                        R.CRASH, R.CORRUPT_RECOVERY_ROW, R.FORGE_CONTINUATION})
_MEMORY_FIELDS = {"run": ("pc", "sess", "exec", "mem", "active", "intr", "ordinal", "tool"),
                  "fin": ("pc", "sess", "exec", "owner"), "rec": ("pc", "sess", "exec", "seen", "why")}


def claim_row(cfg: M.Config, row, now: int) -> H.ClaimRow | None:
    if row is None:
        return None
    _s, e, owner, lease_x, phase, asst, err, *attempts = row
    return H.ClaimRow(exec=e, owner=owner, ttl=max(lease_x - now, -cfg.eff_grace), phase=phase,
                      asst=max(asst_of(asst, cfg.max_steps, VOCABULARY), 0), quar=err is not None,
                      tries=min(attempts[0] if attempts else 0, cfg.max_tries), why=why_of(err))


def memory(recorded: dict) -> H.Memory | None:
    if not recorded:
        return None
    out = {}
    for kind, fields in _MEMORY_FIELDS.items():
        out[kind] = {who: dict(zip(fields, v)) for who, v in recorded.get(kind, {}).items()}
    out["wake"] = {k: [{"row": r, "tries": t, "slot": slot} for r, t, slot in plan]  # a racing waker's plan
                   for k, plan in recorded.get("wake", {}).items()}
    return H.Memory.model_validate(out)


def wakes(cfg: M.Config, rows: list) -> list[H.WakeRow]:
    """The twin's wake rows: the ordinary queue's row of rank w is row w; with tied rows (WakesTied) row 1 is
    the one Session's ordinary wake and row 2 its recovery wake."""
    out = [H.WakeRow(work=False, tries=0, woken="") for _ in range(cfg.wake_rows)]
    for kind, item, rank, attempts, reserved, *turned in rows:  # turned: recorded since issue 31 item 3
        w = (1 if kind == ORDINARY else 2) if cfg.wakes_tied and item == cfg.sessions[0] else \
            rank if kind == ORDINARY and not cfg.wakes_tied else 0
        if 1 <= w <= cfg.wake_rows:
            out[w - 1] = H.WakeRow(work=True, tries=attempts, woken=reserved or "", turned=bool(turned and turned[0]))
    return out


def commit_of(cfg: M.Config, row: dict, prev_claims: dict, prev_exec: int = 0) -> H.Commit:
    now = row["now"]
    claims = {c[0]: c for c in row["claims"]}
    written = {s: claim_row(cfg, claims.get(s), now) for s in sorted(set(claims) | set(prev_claims))
               if claims.get(s) != prev_claims.get(s)}
    delta = row["delta"]
    steps = cfg.max_steps
    log = [H.EventRow(**event_of(e, steps, VOCABULARY)._asdict()) for e in delta.get("events", ())]
    inputs = [H.InputRow(**input_of(with_flaw(i), VOCABULARY)[1]._asdict()) for i in delta.get("inputs", ())]
    writes = H.Writes(
        claim=written, log=log, inputs=inputs,
        recovery=[H.RecoveryRow(exec=r[1], sess=r[2]) for r in delta.get("recovery", ())],
        cancelled=[H.RecoveryRow(exec=h[0], sess=h[1]) for h in delta.get("history", ()) if h[2] == "cancelled"],
        wakes=None if delta.get("wakes") is None else wakes(cfg, delta["wakes"]),
        nextExec=None if row["marks"].get("execution", prev_exec) == prev_exec else row["marks"]["execution"] + 1)
    params = {k: v for k, v in row["params"].items() if not k.startswith("_")}
    return H.Commit(seq=row["seq"], actor=row["actor"], action=row["action"], params=params, now=now,
                    writes=writes, memory=memory(row["memory"]))


class Converted:
    def __init__(self, cfg: M.Config, header: H.Header, commits: list[H.Commit], skipped: dict):
        self.cfg = cfg
        self.header = header
        self.commits = commits
        self.skipped = skipped  # reason -> rows left out

    def text(self) -> str:
        return "".join(H.dumps(x) + "\n" for x in [self.header, *self.commits])


def twin_config(meta: dict, rows: list[dict]) -> M.Config:
    """The run's twin configuration (harness/stress/records.py), with the execution bound the run needs
    (the recorder's is unbounded; the twin enumerates execution ids) and the prompts admitted at start."""
    from dataclasses import replace
    cfg = config_from_meta(meta, VOCABULARY)
    prompts = {}
    for r in rows:
        for i in r["delta"].get("inputs", ()):
            if i[2] == "prompt":
                prompts[i[1]] = max(prompts.get(i[1], 0), i[3])
    top = max((r["marks"].get("execution", 0) for r in rows), default=0)
    if top + 1 > T.MAX_EXEC or max(prompts.values(), default=0) > T.MAX_PROMPTS:
        raise H.HistoryError(f"the run minted {top} executions and admitted up to {max(prompts.values(), default=0)} "
                             f"prompts per Session: beyond a twin configuration's bounds ({T.MAX_EXEC - 1} "
                             f"executions, {T.MAX_PROMPTS} prompts); validate a shorter run")
    admission = meta.get("source") != "scheduler"
    cfg = replace(cfg, max_exec=min(max(top + 1, 1), T.MAX_EXEC), prompts=max(prompts.values(), default=0) or cfg.prompts,
                  admission=admission and cfg.admission, steering=admission and cfg.steering)
    if meta.get("source") == "scheduler":
        cfg = replace(cfg, faults=frozenset(meta.get("faults", cfg.faults)), admission=bool(meta.get("admission")),
                      steering=bool(meta.get("steering")), grace=int(meta.get("grace_ticks", cfg.grace)),
                      supervision_lag=int(meta.get("supervision_lag", cfg.supervision_lag)),
                      defects=frozenset())
    return cfg


def admission_lines(cfg: M.Config, row: dict, now: int | None, held: dict) -> list[H.Commit] | None:
    """The stress supervisor's admission (`AdmitRequested`: a prompt admitted pending, one transaction, no
    event) as the twin's two actions in a row: Admit(s), then Resume of the Session (its held prompts
    pending; the node Resume names is the first, which it does not read). Exact only while the Session
    holds no other prompt (None otherwise, or when the row is not one prompt's admission); `held`:
    Session -> its held prompts so far (from the deltas)."""
    delta = row["delta"]
    inputs = delta.get("inputs", ())
    if len(inputs) != 1 or delta.get("events"):
        return None
    _iid, i = input_of(inputs[0], VOCABULARY)
    if i.kind != "prompt" or i.state != "pending" or held.get(i.sess):
        return None
    pending = H.InputRow(sess=i.sess, kind="prompt", src=i.src, state="pending")
    return [H.Commit(actor=row["actor"], action=R.ADMIT, params={"s": i.sess}, now=now,
                     writes=H.Writes(inputs=[pending.model_copy(update={"state": "held"})])),
            H.Commit(seq=row["seq"], actor=row["actor"], action=R.RESUME, params={"n": cfg.nodes[0], "s": i.sess},
                     now=now, writes=H.Writes(inputs=[pending]))]


class PerSessionHistory(H.HistoryError):
    """A per-Session history (PostgreSQL's concurrent writers, impl/history_sessions.py) that its `seq`
    order cannot walk: an execution named before its begin, or begun twice."""


def convert_rows(meta: dict, rows: list[dict], cfg: M.Config | None = None) -> Converted:
    """The lines of a recorded history. A step that reads no lease (CLOCK_FREE) gets no clock reading when
    its process records no actor's memory (a caller's, the supervisor's: their clocks are not the nodes');
    the others keep their process's own reading (which may be older than the commits ordered before it)
    and name the process; each claim's ttl is read at that reading. A node process's Resume or wake step
    keeps it: the memory it records holds its actors' silent steps (a supervisor's stop of a runner whose
    lease ran out), decided at that process's clock."""
    if meta.get("history") == PER_SESSION:  # executions renumbered (binding/history_sessions.py)
        try:
            rows = whole_rows(rows, int(meta.get("max_steps", 1)))
        except Unordered as exc:
            raise PerSessionHistory(f"a per-Session history no serial order explains: {exc}") from None
    cfg = cfg or twin_config(meta, rows)
    commits, skipped = [], {}
    prev: dict = {}
    prev_exec = 0
    started = False
    held: dict = {}
    for row in rows:
        before = {k: set(v) for k, v in held.items()}
        for _id, sess, kind, src, state, *_ in row["delta"].get("inputs", ()):
            if kind == "prompt":
                (held.setdefault(sess, set()).add if state == "held" else held.setdefault(sess, set()).discard)(src)
        action = row["action"]
        named = row["params"].get("_execution")
        if action in N.ACTIONS and named is not None and not row["changed"] \
                and (prev.get(row["params"].get("s")) or [None, None])[1] != named:
            why = "an interrupt of an execution that no longer holds the claim (it commits nothing)"
            skipped[why] = skipped.get(why, 0) + 1
        elif action in N.ACTIONS:
            started = True
            c = commit_of(cfg, row, prev, prev_exec)
            if action in CLOCK_FREE and not row["memory"]:  # a caller's or the supervisor's reading: left out
                c = c.model_copy(update={"now": None})
            else:  # its own process's reading, which may be older than the commits ordered before it
                c = c.model_copy(update={"process": row.get("process")})
            commits.append(c)
        elif action == ADMIT and cfg.admission and admission_lines(cfg, row, None, before) is not None:
            commits += admission_lines(cfg, row, None, before)
        else:
            why = ("a prompt admitted at the start (the twin's Init)" if action == ADMIT and not started
                   else f"{action}: not a twin action")
            skipped[why] = skipped.get(why, 0) + 1
        prev = {c[0]: c for c in row["claims"]}
        prev_exec = row["marks"].get("execution", prev_exec)
    header = H.Header(format=H.FORMAT, version=H.VERSION, config=T.config_to_trace(cfg),
                      source=f"impl/history.py ({meta.get('source', 'stress')})")
    return Converted(cfg, header, commits, skipped)


def convert_db(db, cfg: M.Config | None = None, limit: int | None = None) -> Converted:
    """A per-Session history is read up to its settled seq (a commit still in flight may yet appear below
    the newest seq: a growing history, judged while a stress run goes), in the order its commits became
    visible when the server tracks commit timestamps (impl/history_sessions.commit_order), else in seq order."""
    meta, rows = read_meta(db), read_rows(db, limit=limit)
    if meta.get("history") == PER_SESSION and rows:
        settled = min(settled_seq(db), rows[-1]["seq"])
        rows = [r for r in rows if r["seq"] <= settled]
        order = commit_order(db, settled)
        if order is not None:  # the order the commits became visible in, not the order they drew seqs in
            by_seq = {r["seq"]: r for r in rows}
            rows = [by_seq[s] for s in order if s in by_seq]
    return convert_rows(meta, rows, cfg)


def read_database(history: str, cfg: M.Config | None = None, limit: int | None = None) -> Converted:
    """A history database (a sqlite file, or a database URL) as lines; HistoryError (bad input, exit 2)
    when it is no database claimcheck can open or holds no commit history. `limit`: its first commits only
    (a prefix of a history is a history; its configuration's bounds are the prefix's)."""
    try:
        db = Database(history if "://" in history else f"sqlite:///{Path(history).absolute()}")
    except (ValueError, ImportError, sa.exc.ArgumentError) as exc:  # not a database claimcheck can open
        raise H.HistoryError(f"{history}: {str(exc).splitlines()[0]}") from None
    try:
        return convert_db(db, cfg, limit)
    except (sa.exc.SQLAlchemyError, KeyError) as exc:  # no history tables, or no run metadata: bad input
        raise H.HistoryError(f"{history}: not a history database ({type(exc).__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
