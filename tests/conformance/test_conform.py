"""Exhaustive conformance: the walk covers the whole graph, catches code-only mutants with a replayable
trace, and every one of its checks (comparison, state and action invariants, refusal probes, restore)
can fail."""

from functools import lru_cache

import pytest

from spec import configs
from spec import invariants as I

from binding import savepoints as S
from binding.server import Bundled
from serverkit import BUNDLED
from harness.cli import main
from harness.conformance import conform as C
from harness.conformance import exhaustive as X
from harness.conformance import parts as P
from harness.conformance.replay import replay
from harness.traces import trace as T


@lru_cache(maxsize=None)
def _graph(name):
    return C.graph_of(configs.get(name))


def _walk(name, **kw):
    return C.walk(configs.get(name), server=BUNDLED, graph=_graph(name), **kw)


@lru_cache(maxsize=None)
def _correct(name):
    return _walk(name)


def test_the_walk_covers_every_state_edge_and_probe_of_rows():
    rep = _correct("rows")
    assert rep.failure is None and rep.complete
    assert (rep.states, rep.edges) == (rep.states_total, rep.edges_total) == (3089, 7052)
    assert rep.probes > rep.states  # refusals at every state, not only some
    assert sum(rep.actions.values()) == rep.edges and rep.savepoint == "serialize"


def test_parts_cover_each_state_and_edge_exactly_once():
    g = _graph("rows")
    top, roots = P.cut(g, 8)
    assert top and len(roots) >= 8 and not top & set(roots)
    assert max(P.subtree_work(g)[r] for r in roots) * 8 <= sum(map(len, g.succ))  # no part above 1/8
    one, two = _correct("rows"), _walk("rows", workers=2)
    assert two.complete and (two.states, two.edges, two.probes) == (one.states, one.edges, one.probes)
    assert two.actions == one.actions


def test_the_rows_savepoint_also_restores_a_sqlite_file(tmp_path):
    from harness.conformance.exhaustive import resolve
    cfg, _ = resolve("tools/max_exec=1")
    server = Bundled(f"sqlite:///{tmp_path / 'c.db'}")
    rep = C.walk(cfg, server=server)
    server.close()
    assert rep.complete and rep.savepoint == "rows" and rep.edges == 1_037


# ---------------------------------------------------------------- mutants, traces, replays

CAUGHT = {  # a code-only mutant, the configuration, what catches it: (kind, invariants, a probe?)
    "memory-before-publish": ("rows", ("divergence", [], False)),
    "unfenced-step-publication": ("rows", ("safety", ["FencedMutation"], False)),
    "heartbeat-extends-lease": ("heartbeat", ("safety", ["TypeOK"], False)),
    "renew-after-expiry": ("rows", ("divergence", [], True)),
}


def _caught(defect):
    name, _ = CAUGHT[defect]
    f = _walk(name, mutant=[defect]).failure
    return None if f is None else (f.kind, f.invariants, f.probe is not None)


@pytest.mark.parametrize("defect", sorted(CAUGHT))
def test_a_code_only_mutant_is_caught(defect):
    assert _caught(defect) == CAUGHT[defect][1]


def test_a_mutant_leaves_a_shortest_trace_whose_replay_fails_the_same_way(tmp_path):
    defect = "cross-session-recovery-collision"
    rep = _walk("rows", mutant=[defect])
    f = rep.failure
    assert f.kind == "safety" and f.invariants == ["RecoveryRowsIsolated"] and not rep.complete
    g = _graph("rows")
    assert len(f.steps) - 1 == g.depth[g.states.index(f.steps[-2].state)] + 1  # the tree path: shortest
    path = X.write_trace(rep, "rows", tmp_path)
    tr = T.load(path)
    assert tr.mutant == [defect] and tr.meta.source == "conform"
    res = replay(tr, server=BUNDLED)
    assert not res.ok and "RecoveryRowsIsolated" in res.violated
    tr.mutant = []  # the same path on the correct implementation passes
    assert replay(tr, server=BUNDLED).ok


def test_a_probe_failure_ends_the_trace_with_a_refused_step(tmp_path):
    rep = _walk("rows", mutant=["renew-after-expiry"])
    path = X.write_trace(rep, "rows", tmp_path)
    tr = T.load(path)
    assert tr.steps[-1].refused and tr.steps[-1].action == "Heartbeat"
    res = replay(tr, server=BUNDLED)
    assert not res.ok and any("although the twin does not enable it" in p for p in res.problems)


# ---------------------------------------------------------------- every check can fail

def test_without_the_state_comparison_a_divergence_goes_unseen(monkeypatch):
    monkeypatch.setattr(C, "diff", lambda *a, **k: [])
    assert _caught("memory-before-publish") != CAUGHT["memory-before-publish"][1]


def test_without_action_invariants_an_unfenced_publication_is_only_a_divergence(monkeypatch):
    monkeypatch.setattr(I, "check_edge", lambda *a, **k: [])
    assert _caught("unfenced-step-publication") != CAUGHT["unfenced-step-publication"][1]


def test_without_state_invariants_an_extended_lease_is_only_a_divergence(monkeypatch):
    monkeypatch.setattr(I, "check_state", lambda *a, **k: [])
    assert _caught("heartbeat-extends-lease") != CAUGHT["heartbeat-extends-lease"][1]


def test_without_refusal_probes_a_renewal_after_expiry_is_not_caught_by_a_probe(monkeypatch):
    monkeypatch.setattr(C, "every_refusal", lambda *a, **k: [])
    assert _caught("renew-after-expiry") != CAUGHT["renew-after-expiry"][1]


def test_without_restoring_the_actors_memory_the_correct_implementation_diverges(monkeypatch):
    monkeypatch.setattr(S.Memory, "restore", staticmethod(lambda saved: None))
    f = _walk("rows").failure
    assert f is not None and f.kind in ("divergence", "error")


# ---------------------------------------------------------------- the command

def test_conform_command_exit_codes(tmp_path, capsys):
    assert main(["conform", "--config", "rows", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "states 3,089 of 3,089, edges 7,052 of 7,052, probes" in out and "edges/s" in out
    assert main(["conform", "--config", "rows", "--mutant", "cross-session-recovery-collision",
                 "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "FAILED (safety: RecoveryRowsIsolated" in out and "claimcheck replay" in out
    assert list(tmp_path.glob("conform-rows-*.json"))
    assert main(["conform", "--config", "nope"]) == 2
    assert main(["conform", "--mutant", "nope"]) == 2
    assert main(["conform", "--config", "rows", "--profile", "ci"]) == 2
    assert "not both" in capsys.readouterr().err


def test_the_gate_stage_walks_every_action_and_boundary(tmp_path):
    """The ci profile's small configurations together take every registry action and pass every named
    boundary, on the correct implementation, whole."""
    from harness.reports import gate
    from spec import names as N
    r = gate.stage_conformance(gate.Gate(tmp_path, server=BUNDLED))
    assert r.status == gate.PASS, r.detail
    assert f"{len(N.ACTIONS)}/{len(N.ACTIONS)} actions, {len(N.BOUNDARIES)}/{len(N.BOUNDARIES)} boundaries" in r.detail
    assert len(r.checks) == len(X.PROFILES["ci"]) and all("of" in c.detail for c in r.checks)


def test_the_kill_matrix_conform_column_names_the_catching_edge():
    from harness.conformance import killmatrix as K
    table = K.conform_rows(["cross-session-recovery-collision", "heartbeat-extends-lease"], server=BUNDLED)
    assert [r.caught for r in table] == [True, True]
    assert table[0].edge == "RecoveryConvert(r1)" and table[0].invariants == ["RecoveryRowsIsolated"]
    assert table[1].edge.startswith("Heartbeat(") and table[1].config == "heartbeat"
    text = K.render_conform(table)
    assert "KILLED" in text and "SURVIVES" not in text and "depth" in text


def test_the_walk_covers_a_small_configuration_on_postgresql(pg_databases):
    """PostgreSQL: the rows savepoint (every table emptied and refilled in one transaction)."""
    from harness.conformance.exhaustive import resolve
    cfg, _ = resolve("inputs/prompts=1")
    db = pg_databases.new()
    url = db.engine.url.render_as_string(hide_password=False)
    db.dispose()
    server = Bundled(url)
    rep = C.walk(cfg, server=server)
    assert rep.complete and rep.savepoint == "rows" and rep.edges == rep.edges_total == 193
    assert C.walk(cfg, server=server, mutant=["resume-drains-without-request"]).failure is not None
    server.close()


def test_several_workers_need_an_in_memory_database(tmp_path, capsys):
    assert main(["conform", "--config", "rows", "--workers", "2", "--db", f"sqlite:///{tmp_path / 'x.db'}"]) == 2
    assert "needs --db sqlite://" in capsys.readouterr().err


def test_conform_kill_matrix_command(capsys):
    assert main(["conform", "--kill-matrix", "--mutant", "memory-before-publish"]) == 0
    out = capsys.readouterr().out
    assert "memory-before-publish" in out and "KILLED  divergence at PublishStepStarted(n1)" in out
    assert main(["conform", "--kill-matrix", "--config", "rows"]) == 2


def test_a_mutant_is_caught_with_several_workers_too():
    rep = _walk("rows", mutant=["cross-session-recovery-collision"], workers=2)
    assert rep.failure is not None and rep.failure.invariants == ["RecoveryRowsIsolated"] and not rep.complete
    assert rep.failure.steps[0].action is None and rep.failure.steps[-1].action == "RecoveryConvert"


def test_a_mutant_no_edge_of_the_configuration_reaches_exits_4(tmp_path, capsys):
    """A tool defect on `rows` (no tools there): every edge passes, and that is no OK."""
    assert main(["conform", "--config", "rows", "--mutant", "recovery-reruns-unknown-tool", "--out", str(tmp_path)]) == 4
    assert "NOT DETECTED" in capsys.readouterr().out


def test_a_boundary_fired_in_another_actions_unit_fails_the_walk(monkeypatch, tmp_path):
    """An edge may fire only the boundaries that follow its action (harness/conformance/boundaries.py): the
    bundled stand-in and the TypeScript mutant fire tool.publish_failed after StepEndedFails; without the rule the
    walk passes them."""
    from harness.conformance import boundaries
    from serverkit import fires_tool_publish_failed_after_every_failed_publication, typescript_mutant
    cfg, _ = X.resolve("tools/max_exec=1")
    fires_tool_publish_failed_after_every_failed_publication(monkeypatch)
    f = C.walk(cfg, server=BUNDLED, graph=C.graph_of(cfg)).failure
    assert f is not None and f.kind == "divergence" and "fired tool.publish_failed (which follows ToolSuccessFails)" \
        in f.message, f
    monkeypatch.setattr(boundaries, "problem", lambda action, fired: None)
    assert C.walk(cfg, server=BUNDLED, graph=C.graph_of(cfg)).failure is None
    driver = typescript_mutant(tmp_path, "runner.js", 'if (pc === "tool_failed") this.failpoints.fire(',
                               "if (true) this.failpoints.fire(")
    done = _conform_through(driver, tmp_path)
    assert done.returncode == 1 and "fired tool.publish_failed" in done.stdout, done.stdout + done.stderr


def test_a_publication_fault_the_server_never_spends_fails(tmp_path, monkeypatch):
    """The environment's publication fault is the server's to spend: a runner whose failed publication leaves
    it set fails the walk on both servers (the bundled stand-in re-arms it; the TypeScript mutant keeps
    publishOk's flag). The example's adapter used to clear the flag after the move, and the mutant passed
    every check at 100%, as the bundled stand-in did (its binding now asks the same)."""
    from impl.runner import Runner
    from serverkit import typescript_mutant
    cfg, _ = X.resolve("tools/max_exec=1")
    original = Runner._publication_fails

    def never_spent(self):
        injected = original(self)
        self.fail_publication = self.fail_publication or injected
        return injected

    monkeypatch.setattr(Runner, "_publication_fails", never_spent)
    f = C.walk(cfg, server=BUNDLED, graph=C.graph_of(cfg)).failure
    assert f is not None and "left the publication fault set" in f.message, f
    driver = typescript_mutant(tmp_path, "runner.js",
                               'this.publisher.failNext = false;\n      throw new PublicationFailed("the transaction failed");',
                               'throw new PublicationFailed("the transaction failed");')
    done = _conform_through(driver, tmp_path)
    assert done.returncode == 1 and "left the publication fault set" in done.stdout, done.stdout + done.stderr


def test_a_recovery_worker_renewing_another_workers_claim_fails(tmp_path, monkeypatch):
    """Every owner's heartbeat is a refusal probe: a recovery worker, still converting a claim the other worker
    took over from it, that renews the other's lease fails the `ci` profile's two-worker configuration on both
    servers (the bundled stand-in drops its heartbeat's own-claim test; the TypeScript mutant the owner test),
    which passed every check while recovery workers' heartbeats were left out of the probes."""
    from impl.actor import CONVERTING, RECONCILED
    from impl.recovery import RecoveryWorker
    from impl.results import NotEnabled
    from serverkit import typescript_mutant
    label = "takeovers/max_tries=1/lease=2"
    cfg, _ = X.resolve(label)

    def renews_any_claim(self, session_id):
        if self.pc not in (CONVERTING, RECONCILED):
            return NotEnabled("worker is not converting")
        now = self.ctx.now()

        def body(conn):
            claim = self.claims.get(conn, session_id)
            if claim is None or claim.lease_expires_at - now >= self.ctx.lease_ticks:
                return NotEnabled("no claim, or its lease is full")
            return self.claims.heartbeat(conn, claim, now)
        return self.ctx.db.atomic(body, sessions=[session_id])

    monkeypatch.setattr(RecoveryWorker, "heartbeat", renews_any_claim)
    f = C.walk(cfg, server=BUNDLED, graph=C.graph_of(cfg)).failure
    assert f is not None and f.kind == "divergence" and f.message.startswith("probe:") and "Heartbeat('r" in f.message, f
    driver = typescript_mutant(tmp_path, "recovery.js", "if (!c || c.owner_id !== this.id || ", "if (!c || ")
    done = _conform_through(driver, tmp_path, label)
    assert done.returncode == 1 and "the implementation took Heartbeat('r" in done.stdout, done.stdout + done.stderr


def _conform_through(driver, tmp_path, config="tools/max_exec=1"):
    """`claimcheck conform --config CONFIG` through a driver, as a user runs it."""
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "harness.cli", "conform", "--config", config, "--sut",
                           str(driver), "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=300)


def test_which_boundaries_an_edge_may_fire():
    """Each boundary follows its action, and an acquisition's or a reservation's other forms (the registry's
    `also`); no other."""
    from harness.conformance.boundaries import stray
    assert stray("PromoteContinuation", ["acquire.committed"]) == []
    assert stray("WakeScanQueue", ["wake.reserved"]) == []
    assert stray("StepEndedFails", ["tool.publish_failed"]) == ["tool.publish_failed"]
    assert stray("Renew", ["renew.committed", "provider.dispatched"]) == ["provider.dispatched"]
