"""The bundled server's driver: the driver protocol (docs/driver.md) served on stdin/stdout.

`python -m binding.driver` is what `claimcheck replay --sut "python -m binding.driver"` runs: the same
World and Scheduler the in-process port drives (binding.world, binding.server), reached only through
protocol requests, so the protocol is exercised by a server that passes everything. `Driver.handle_line`
is the whole request handling; the client's in-process transport calls it without a process.
"""

from __future__ import annotations

import json
import sys

from pydantic import TypeAdapter, ValidationError

from spec import names as N

from harness.driver import protocol as P
from harness.traces import trace as T
from harness.traces.inputfile import one_line, validation_error

from binding.actions import MOVE
from binding.savepoints import Savepoints
from binding.world import Scheduler

NAME = "claimcheck bundled implementation (impl/, sqlite in memory)"
_REQUEST = TypeAdapter(P.Request)


class Refused(Exception):
    """A request this driver cannot carry out: the reply is `ok: false` with this message."""


class Driver:
    """One world at a time (`start` replaces it); every request answered by one reply."""

    def __init__(self, save: bool = True, switches: bool = True, observes: bool = True):
        """`save`: whether hello offers save and restore (`--no-save` makes a driver without them, for the
        walk that replays each path from Init); `switches`: whether hello declares impl/'s defect switches
        (`--no-defects` makes a server as a third party ships it, without any: its gate skips the kill
        matrix as not applicable); `observes`: whether step, attempt and move replies carry the observation
        when asked, and `attempts` carries out many attempts in one request (`--no-observes`: a driver that
        answers every observation by `observe` alone, every attempt by `attempt`)."""
        self.save, self.switches, self.observes = save, switches, observes
        self.sched: Scheduler | None = None
        self.points: dict = {}
        self.savepoints: Savepoints | None = None
        self.mark = 0  # the recorder's hits reported by observe so far
        self.stopped = False

    def handle_line(self, line: str) -> str:
        """One request line in, one reply line out (no newline)."""
        rid = None
        try:
            raw = json.loads(line)
            if isinstance(raw, dict) and isinstance(raw.get("id"), int) and not isinstance(raw.get("id"), bool):
                rid = raw["id"]
            try:
                req = _REQUEST.validate_python(raw)
            except ValidationError as exc:
                raise Refused(str(validation_error(exc, "request"))) from None
            reply = getattr(self, f"_{req.op}")(req)
            if getattr(req, "observe", False):
                if not self.observes:
                    raise Refused("request.observe: this driver does not observe in its replies (--no-observes)")
                reply.update(self._observe(req))
            return P.dumps({"id": req.id, "ok": True, **reply})
        except json.JSONDecodeError as exc:
            error = f"not JSON: {exc}"
        except Refused as exc:
            error = str(exc)
        except T.TraceError as exc:  # parameters that do not parse, or name nothing in the configuration
            error = str(exc)
        except Exception as exc:  # noqa: BLE001 - the implementation's failure, reported to the caller
            error = f"the implementation raised {type(exc).__name__}: {exc}"
        return P.dumps({"id": rid, "ok": False, "error": one_line(error)})

    def _world(self) -> Scheduler:
        if self.sched is None:
            raise Refused("no world: send start first")
        return self.sched

    def _hello(self, req: P.Hello) -> dict:
        if P.VERSION not in req.versions:
            raise Refused(f"this driver speaks {P.PROTOCOL} version {P.VERSION} only")
        name = NAME if self.switches else f"{NAME}, no defect switches"
        return {"protocol": P.PROTOCOL, "version": P.VERSION, "driver": name,
                "save": self.save, "defects": list(N.DEFECTS) if self.switches else [], "observes": self.observes,
                "attempts": self.observes}

    def _start(self, req: P.Start) -> dict:
        if req.defects and not self.switches:
            raise Refused(f"request.defects: this server has no defect switches (--no-defects): {', '.join(req.defects)}")
        cfg = T.trace_to_config(req.config)
        self.sched = Scheduler(cfg, mutant=frozenset(req.defects))
        self.savepoints, self.points, self.mark = None, {}, 0
        return {}

    def _params(self, action: str, params: dict) -> tuple:
        out = T.params_from_json(action, params, "request")
        T.check_param_names(self._world().cfg, action, out, "request")
        return out

    def _step(self, req: P.Step) -> dict:
        took, got = self._world().take(req.action, self._params(req.action, req.params))
        return {"took": took} if took == req.action else {"took": took, "detail": one_line(repr(got))}

    def _attempt(self, req: P.Attempt) -> dict:
        got = self._world().attempt(req.action, self._params(req.action, req.params))
        return {"answer": "taken" if got else "refused", "detail": one_line(repr(got))}

    def _attempts(self, req: P.Attempts) -> dict:
        if not self.observes:
            raise Refused("this driver does not carry out attempts in one request (--no-observes)")
        results = []
        for probe in req.attempts:
            try:
                got = self._attempt(probe)
            except Exception as exc:  # noqa: BLE001 - as handle_line words it, and the request ends here
                results.append({"error": one_line(str(exc) if isinstance(exc, (Refused, T.TraceError))
                                                  else f"the implementation raised {type(exc).__name__}: {exc}")})
                break
            results.append({**got, **self._observe(probe)})
        return {"results": results}

    def _move(self, req: P.Move) -> dict:
        sched = self._world()
        if req.who not in (sched.cfg.recoverers if req.actor == "recovery" else sched.cfg.nodes):
            raise Refused(f"request.who: no {req.actor} named {req.who!r} in the configuration")
        return {"took": MOVE[req.actor](sched.world, req.who)}

    def _observe(self, req: P.Observe) -> dict:
        sched = self._world()
        hits = sched.hits
        fired, self.mark = [name for name, _ in hits[self.mark:]], len(hits)
        return {"state": T.state_to_json(sched.cfg, sched.state()), "boundaries": fired}

    def _save(self, req: P.Save) -> dict:
        if not self.save:
            raise Refused("this driver does not save (--no-save)")
        sched = self._world()
        self.savepoints = self.savepoints or Savepoints(sched)
        self.points[req.point] = self.savepoints.save()
        return {}

    def _restore(self, req: P.Restore) -> dict:
        if not self.save:
            raise Refused("this driver does not save (--no-save)")
        self._world()
        if req.point not in self.points:
            raise Refused(f"request.point: no saved point {req.point!r}")
        self.savepoints.restore(self.points[req.point])
        self.mark = len(self.sched.hits)
        return {}

    def _stop(self, req: P.Stop) -> dict:
        self.stopped = True
        return {}


def serve(stdin, stdout, save: bool = True, switches: bool = True, observes: bool = True) -> None:
    """Answer request lines until stop or the end of input."""
    driver = Driver(save, switches, observes)
    for line in stdin:
        if not line.strip():
            continue
        stdout.write(driver.handle_line(line) + "\n")
        stdout.flush()
        if driver.stopped:
            return


def main() -> None:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m binding.driver", description="the bundled server's driver "
                                 "(docs/driver.md): requests on stdin, replies on stdout")
    ap.add_argument("--no-save", action="store_true", help="offer no save and restore (hello's save: false)")
    ap.add_argument("--no-observes", action="store_true", help="answer step, attempt and move without the "
                    "observation (hello's observes: false): every observation by an observe request")
    ap.add_argument("--no-defects", action="store_true", help="declare no defect switches (hello's defects: []), "
                    "as a third party's server ships: its gate skips the kill matrix as not applicable")
    args = ap.parse_args()
    out, sys.stdout = sys.stdout, sys.stderr  # a stray print must not corrupt the protocol's lines
    serve(sys.stdin, out, save=not args.no_save, switches=not args.no_defects, observes=not args.no_observes)


if __name__ == "__main__":
    main()
