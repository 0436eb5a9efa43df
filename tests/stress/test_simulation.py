"""`claimcheck stress --simulate` (harness/stress/simulation.py): the bundled server's node loops in one process
on simulated time. The same seed records the same history; the correct server's run passes every check
of a stress run; a defect the run meets is caught; options that need real processes are refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from binding.stress import BUNDLED
from harness.stress.options import StressOptions
from harness.stress.simulation import simulate as run_simulation


def simulate(tmp_path: Path, **options):
    return run_simulation(StressOptions(out=str(tmp_path), keep=True, **options), BUNDLED)


def history_rows(res):
    """The recorded commits, less the recording process's name (it carries the operating system's pid)."""
    with sqlite3.connect(res.run_dir / "stress.db") as conn:
        return conn.execute("SELECT seq, actor, action, params, now, memory, claims, delta, changed FROM commit_history "
                            "ORDER BY seq").fetchall()


def test_a_seed_repeats_its_run_and_the_correct_server_passes(tmp_path):
    code, first = simulate(tmp_path / "a", seconds=1.5, seed="3", crash_every=0.3)
    again_code, again = simulate(tmp_path / "b", seconds=1.5, seed="3", crash_every=0.3)
    assert code == again_code == 0, first.validation
    rows = history_rows(first)
    assert rows == history_rows(again) and len(rows) > 300
    assert first.crashes >= 2 and first.executions > 20
    assert history_rows(simulate(tmp_path / "c", seconds=1.5, seed="4", crash_every=0.3)[1]) != rows


def test_a_reservation_its_crashed_waker_held_is_released_by_a_later_scan(tmp_path, monkeypatch):
    """Half the reserved batches are redriven in the waker's next turn, so a crash in between leaves rows
    reserved, and a later scan's lapsed release (impl/wakes.py WakeQueue.lapsed) finds them (the oracle's
    simulated run: before, no reservation ever lapsed there). Stubbed to find nothing, the rows stay reserved
    and bounded liveness names them (harness/README.md, "Inputs and wakes"; its unit test in
    test_stress_faults.py)."""
    from impl.wakes import WakeQueue
    found, lapsed = [], WakeQueue.lapsed
    monkeypatch.setattr(WakeQueue, "lapsed", lambda self, conn, *a: found.append(lapsed(self, conn, *a)) or found[-1])
    code, res = simulate(tmp_path, seconds=2, seed="1", crash_every=0.15)
    assert code == 0, res.validation
    assert any(found), f"{len(found)} lapsed reads, none found a reservation"


def test_a_defect_the_run_meets_is_caught(tmp_path):
    """Ordinary acquisition overwriting an expired claim: the history check names the commit and the
    invariants it breaks; a run that meets no such claim would say NOT DETECTED (exit 4), never OK."""
    # a seed whose schedule meets an expired claim (seed 2 did until the merges of 2026-12-06 night changed the
    # schedule: run_once on a share of the scans, tied wake rows)
    code, res = simulate(tmp_path, seconds=10, seed="1", crash_every=0.2, defects=("acquire-overwrites-expired",))
    assert code == 1
    names = {n for f in res.checker.report.violations for n in f.names}
    assert {"AcquireNeverOverwrites", "FencedMutation"} <= names


def test_a_server_exception_is_the_nodes_unexpected_exit_not_an_internal_error(tmp_path, monkeypatch):
    """The server runs in this process: its exception is a node dying by itself (as a real process's traceback
    and exit code), recorded and failing the run, and the run goes on with the node restarted."""
    from binding.stress import node as stress_node
    turns = {"n": 0}
    real_turn = stress_node.NodeProcess.turn

    def turn(self):
        turns["n"] += 1
        if turns["n"] == 40:
            raise RuntimeError("the server's own bug")
        return real_turn(self)
    monkeypatch.setattr(stress_node.NodeProcess, "turn", turn)
    code, res = simulate(tmp_path, seconds=1, seed="3", crash_every=0)
    assert code == 1 and turns["n"] > 40
    assert len(res.unexpected_exits) == 1 and "RuntimeError: the server's own bug" in res.unexpected_exits[0]


@pytest.mark.parametrize("flag", [["--pause-every", "1"], ["--skew", "5"], ["--busy-storm"],
                                  ["--pause-before-dispatch", "0.5"]])
def test_options_that_need_real_processes_are_refused(flag, tmp_path, capsys):
    from harness.cli import main
    assert main(["stress", "--simulate", "--seconds", "1", "--out", str(tmp_path), *flag]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--simulate" in err[0] and "real processes" in err[0]


def _reservations(res) -> tuple[int, int]:
    """(rows planned, rows lost to another waker) over the run's reservations (WakeReserve): a planned row is
    won when the reservation's wake table has it reserved in the planned slot with its counter moved."""
    import json
    planned = lost = 0
    for _seq, _actor, action, _params, _now, memory, _claims, delta, _changed in history_rows(res):
        if action != "WakeReserve":
            continue
        [plan] = json.loads(memory)["wake"].values()
        rows = {r[2]: r for r in json.loads(delta).get("wakes", ())}
        planned += len(plan)
        lost += sum(1 for rank, tries, slot in plan
                    if not (rank in rows and rows[rank][4] == slot and rows[rank][3] != tries))
    return planned, lost


def test_racing_wakers_lose_rows_to_each_other_and_the_reservation_without_cas_is_caught(tmp_path):
    """Four nodes, four racing wakers (each its read and its reservation in two turns): some planned rows are
    lost to another waker, and the run holds (history check and validate); with the reservation's
    compare-and-set gone (wake-reserve-without-cas) a reservation over another's is caught by name."""
    code, res = simulate(tmp_path / "ok", seconds=3, seed="3", nodes=4, wake_rate=0.5, crash_every=0.5)
    assert code == 0, res.validation
    planned, lost = _reservations(res)
    assert planned > 20 and lost >= 1, (planned, lost)
    code, res = simulate(tmp_path / "bad", seconds=5, seed="3", nodes=4, wake_rate=0.5,
                         defects=("wake-reserve-without-cas",))
    assert code == 1
    assert "ReservationsExclusive" in {n for f in res.checker.report.violations for n in f.names}
