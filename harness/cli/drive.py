"""The commands that drive an implementation: replay, fuzz and conform, against the bundled implementation or
the server behind a driver (`--sut CMD`, docs/driver.md). Which server a command drives is chosen here,
the one place besides the pytest plugin that imports `binding` (the bundled server behind the port): every
harness function below takes the server (harness.port.Server) it is given."""

from __future__ import annotations

import time
from pathlib import Path

from spec import names as N

from harness.cli.arguments import NOT_DETECTED, OK, USAGE, VIOLATION, UsageError, say, witness_config
from harness.traces.inputfile import InputError


def open_server(args, command: str, db_url: str | None = None):
    """The server a command drives: the one behind `--sut CMD` (open_sut), else the bundled server in
    this process on `db_url` (binding.server.Bundled: by default a database in memory per world, and a
    sqlite file per lockstep campaign)."""
    sut = open_sut(args, command)
    if sut is not None:
        return sut
    from binding.server import Bundled
    return Bundled(db_url)


def open_sut(args, command: str):
    """`--sut CMD`: the driver started and greeted before any work, its name printed (whose run this is);
    None without --sut. A command that is no driver is bad usage (exit 2)."""
    if getattr(args, "sut", None) is None:
        return None
    from harness.driver.client import DriverStartError, Sut
    sut = Sut(args.sut, args.sut_timeout)
    try:
        hello = sut.connect().hello
    except DriverStartError as exc:
        raise UsageError(f"claimcheck {command}: --sut: {exc}") from None
    print(f"{command} against {hello.driver} (driver `{args.sut}`, {hello.protocol} v{hello.version}"
          f"{', save and restore' if hello.save else ', no save: each path replayed from Init'})")
    return sut


def check_switches(server, command: str, defects) -> None:
    """Defects asked of a server behind --sut that its hello does not declare (no switch for them): bad
    usage, one line, before any run (the bundled server has every one)."""
    from harness.port import switches
    have = switches(server)
    missing = [d for d in dict.fromkeys(defects or ()) if d not in have]
    if missing and server.command:
        raise UsageError(f"claimcheck {command}: the server behind --sut has no switch for {', '.join(missing)} "
                         f"(its hello declares {len(have) or 'no'} defect switches; docs/driver.md, Capabilities)")


def cmd_replay(args) -> int:
    from harness.conformance.replay import TRACES, committed_traces, render, replay_file
    from harness.driver.client import DriverError, DriverStartError
    code = OK
    paths = []
    for arg in args.traces or [str(TRACES)]:
        found = committed_traces(arg) if Path(arg).is_dir() else [arg]
        if not found:
            say(f"claimcheck replay: {arg}: no trace files (*.json) in this folder")
            code = USAGE
        paths += found
    from harness.cli import sharded
    plan, paths = sharded.replay_plan(args, paths)  # --shard K/N: this shard's traces
    results = []
    server = open_server(args, "replay")  # started before any trace: a command that is no driver fails first
    passed = failed = bad = 0
    try:
        check_switches(server, "replay", args.defect)
        for path in paths:
            t0 = time.perf_counter()
            try:
                res = replay_file(path, args.defect, server=server)
            except DriverStartError as exc:
                raise UsageError(f"claimcheck replay: --sut: {exc}") from None
            except InputError as exc:
                say(f"claimcheck replay: {exc}")
                code, bad = USAGE, bad + 1
                results.append(sharded.replay_result(path, error=str(exc)))
                continue
            except DriverError as exc:  # the driver broke outside a step: this trace fails
                print(f"replay {path}: FAIL: {exc}")
                failed, code = failed + 1, VIOLATION if code == OK else code
                results.append(sharded.replay_result(path, error=str(exc), seconds=time.perf_counter() - t0))
                continue
            results.append(sharded.replay_result(path, res, time.perf_counter() - t0))
            print(render(res))
            passed, failed = passed + res.ok, failed + (not res.ok)
            if not res.ok and code == OK:
                code = VIOLATION
    finally:
        server.close()
    if len(paths) > 1 or not args.traces or any(Path(a).is_dir() for a in args.traces):
        print(f"replay: {passed} passed, {failed} failed" + (f", {bad} not readable" if bad else "")
              + (f" (shard {args.shard}: {len(paths)} of {len(plan.units)} traces)" if args.shard else ""))
    sharded.write(args, "replay", plan, results)
    return code


def cmd_fuzz(args) -> int:
    from harness.conformance.fuzz import fuzz
    from harness.progress import Reporter
    if args.config is not None:  # a registered configuration that cannot show the defect is refused
        for d in (args.defect or []) + (args.mutant or []):
            witness_config(args.config, [d])
    if args.sut is not None and args.db is not None:
        raise UsageError("claimcheck fuzz: give --sut or --db, not both (the driver keeps its own database)")
    server = open_server(args, "fuzz", args.db)
    try:
        check_switches(server, "fuzz", (args.defect or []) + (args.mutant or []))
        with Reporter() as progress:
            return fuzz(server=server, profile=args.profile, config=args.config, defects=args.defect,
                        out_dir=args.out, mutant=args.mutant, seed=args.seed, max_examples=args.max_examples,
                        progress_for=progress.factory("lockstep ", unit="steps", key="steps"))
    finally:
        server.close()


def cmd_conform(args) -> int:
    from harness.conformance.exhaustive import conform
    from harness.progress import Reporter
    if args.config and args.profile:
        raise UsageError("claimcheck conform: give --config or --profile, not both")
    from binding.server import in_memory
    if args.sut is not None and args.db != "sqlite://":
        raise UsageError("claimcheck conform: give --sut or --db, not both (the driver keeps its own database)")
    if args.sut is None and args.workers > 1 and not in_memory(args.db):
        raise UsageError(f"claimcheck conform: --workers {args.workers} needs --db sqlite:// (each worker walks "
                         "its own in-memory database; a file or PostgreSQL database would be shared)")
    if args.kill_matrix and (args.config or args.profile):
        raise UsageError("claimcheck conform: --kill-matrix walks each defect's own configuration; "
                         "name defects with --mutant, not --config or --profile")
    from harness.cli import sharded
    sharded.check_conform(args)
    # the kill matrix walks on sqlite in memory, whatever --db says (as it always has)
    server = open_server(args, "conform", "sqlite://" if args.kill_matrix else args.db)
    try:
        check_switches(server, "conform", (args.mutant or list(N.DEFECTS)) if args.kill_matrix else args.mutant)
        if args.kill_matrix:
            from harness.conformance import killmatrix as K
            with Reporter() as progress, progress.task("conform kill matrix", unit="defects", key="done",
                                                       total=len(args.mutant or N.DEFECTS)) as task:
                table = K.conform_rows(args.mutant or None, workers=args.workers, progress=task, server=server)
            print(K.render_conform(table))
            return OK if all(r.caught for r in table) else NOT_DETECTED
        record: dict = {}
        with Reporter() as progress:
            code = conform(server=server, config=args.config or (), profile=args.profile, mutant=args.mutant or (),
                           workers=args.workers, out_dir=args.out,
                           progress_for=progress.factory("conform ", unit="edges", key="edges"),
                           shard=args.shard, record=record)
        sharded.conform_results(args, record)
        return code
    finally:
        server.close()
