"""claimcheck's side of the driver protocol (docs/driver.md): a `Connection` to a driver (over a
harness.driver.transport); `SutScheduler`, the port's World over it (harness.port: `apply`, `attempt`,
`move`, `state`, `hits`), and `Sut`, the port's Server (`--sut CMD`), so replay, lockstep and the walk
drive a server behind a driver exactly as they drive the bundled one.

A driver that dies, does not answer within the timeout, answers something that is not the request's
reply, or answers `ok: false` raises a DriverError whose message names the request: a finding about the
server (or its driver), never a hang or a traceback.
"""

from __future__ import annotations

import json
import shlex

from pydantic import BaseModel, ValidationError

from spec import model as M
from spec import names as N

from harness.port import DivergenceError
from harness.driver import protocol as P
from harness.driver.transport import Process
from harness.traces import trace as T
from harness.traces.inputfile import short, validation_error

TIMEOUT = 30.0  # seconds a driver may take for one request (a server's atomic unit is far shorter)
# seconds a driver may take to start and answer hello, whatever the requests' timeout: its interpreter and
# modules load first, and on a loaded machine that is no measure of the server (a shorter --sut-timeout made
# a slow start look like a broken command)
STARTUP = 30.0


class DriverError(Exception):
    """The driver failed a request: the message names the driver and the request."""


class DriverStartError(DriverError):
    """The driver could not be started or did not answer hello: the command is wrong, not the server."""


class DriverFailed(DriverError):
    """The driver answered `ok: false`."""


class NoSwitch(DriverError):
    """A world asked for defects the server's hello does not declare (`defects`): no request is sent."""


def describe(op: str, fields: dict) -> str:
    """A request as messages name it: `step Renew {"n": "n1"}`, `move runner n1`."""
    if op in ("step", "attempt"):
        return f"{op} {fields['action']} {json.dumps(fields['params'], sort_keys=True)}"
    if op == "attempts":
        return f"attempts ({len(fields['attempts'])}, the first {fields['attempts'][0]['action']})"
    if op == "move":
        return f"move {fields['actor']} {fields['who']}"
    if op in ("save", "restore"):
        return f"{op} {fields['point']}"
    return op


class Connection:
    """Requests and their replies, in order, over a transport; `hello` on opening."""

    def __init__(self, transport, timeout: float = TIMEOUT):
        self.transport, self.timeout = transport, timeout
        self.next_id = 0
        self.dead: str | None = None  # why no further request can be sent
        self.timeout = max(timeout, STARTUP)
        try:
            self.hello = self.request("hello", protocol=P.PROTOCOL, versions=[P.VERSION])
        except DriverError as exc:
            self.close()
            raise DriverStartError(str(exc)) from None
        self.timeout = timeout

    @classmethod
    def spawn(cls, command: str, timeout: float = TIMEOUT) -> "Connection":
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise DriverStartError(f"cannot split the command {short(command)} as a shell would: {exc}") from None
        if not argv:
            raise DriverStartError("an empty command")
        try:
            process = Process(argv)
        except OSError as exc:
            raise DriverStartError(f"driver `{shlex.join(argv)}`: cannot run it: {exc.strerror or exc}") from None
        except ValueError as exc:  # a NUL byte in the command
            raise DriverStartError(f"driver `{shlex.join(argv)}`: cannot run it: {exc}") from None
        return cls(process, timeout)

    def request(self, op: str, **fields) -> BaseModel:
        rid, self.next_id = self.next_id, self.next_id + 1
        where = f"driver `{self.transport.label}`: request {rid} ({describe(op, fields)})"
        if self.dead:
            raise DriverError(f"{where}: not sent: {self.dead}")
        self.transport.send(P.dumps({"id": rid, "op": op, **fields}))
        try:
            line = self.transport.receive(self.timeout)
        except (TimeoutError, EOFError) as exc:
            self.dead = str(exc)
            raise DriverError(f"{where}: {exc}") from None
        return self._reply(where, rid, op, line)

    def _reply(self, where: str, rid: int, op: str, line: str) -> BaseModel:
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            self.dead = "it answered a line that is not JSON"
            raise DriverError(f"{where}: a reply that is not JSON: {short(line.rstrip(), 120)}") from None
        if not isinstance(raw, dict) or raw.get("id") != rid:
            got = f"id {short(raw.get('id'))}" if isinstance(raw, dict) else f"a JSON {type(raw).__name__}"
            self.dead = "its replies are out of step with the requests"
            raise DriverError(f"{where}: a reply with {got}, not id {rid}")
        if raw.get("ok") is False:
            try:
                failed = P.Failed.model_validate(raw)
            except ValidationError as exc:
                raise DriverError(f"{where}: a malformed reply: {validation_error(exc, 'reply')}") from None
            raise DriverFailed(f"{where}: failed: {failed.error}")
        try:
            return P.REPLIES[op].model_validate(raw)
        except ValidationError as exc:
            raise DriverError(f"{where}: a malformed reply: {validation_error(exc, 'reply')}") from None

    def close(self) -> None:
        """`stop` when the driver is still answering, then end its process."""
        if not self.dead:
            try:
                self.timeout = min(self.timeout, 5.0)
                self.request("stop")
            except DriverError:
                pass
            self.dead = "stopped"
        self.transport.close()


class SutScheduler:
    """The port's World over a driver: one world per instance (`start`), observed after every request so
    `hits` holds the step's boundaries when replay reads them. `faults` is the environment's history,
    which only the twin knows (as the bundled server's Scheduler keeps it)."""

    def __init__(self, conn: Connection, cfg: M.Config, mutant=None):
        self.conn, self.cfg = conn, cfg
        self.defects = sorted(cfg.defects if mutant is None else mutant)
        missing = [d for d in self.defects if d not in conn.hello.defects]
        if missing:
            raise NoSwitch(f"driver `{conn.transport.label}`: the server has no switch for {', '.join(missing)} "
                           f"(its hello declares {', '.join(conn.hello.defects) or 'no defect switches'})")
        self.restart()

    def restart(self) -> None:
        """A fresh world (the twin's Init) on the same connection: `start` again."""
        self.faults = frozenset()
        self.hits: list[tuple[str, None]] = []
        self._seen: dict | None = None  # the last observation's state as the driver sent it
        self.conn.request("start", config=T.config_to_trace(self.cfg).model_dump(mode="json", exclude_none=True),
                          defects=self.defects)
        self._observe()

    @property
    def names(self) -> list[str]:
        """The named boundaries passed so far, in order (as the bundled Recorder's `names`)."""
        return [name for name, _ in self.hits]

    def _observe(self) -> None:
        reply = self.conn.request("observe")
        self._observed(reply.state, reply.boundaries, "observe")

    def _observed(self, state: dict, boundaries: list, op: str) -> None:
        self.hits += [(b, None) for b in boundaries]
        if state == self._seen:  # the same JSON as the last observation (a refused probe): the same state
            return
        self._seen = state
        try:
            self._state = T.state_from_json(self.cfg, state, op)
        except T.TraceError as exc:
            raise DriverError(f"driver `{self.conn.transport.label}`: request {self.conn.next_id - 1} ({op}): "
                              f"not a state of this configuration: {exc}") from None

    def _moving(self, op: str, **fields):
        """A request that may move the world, then the world observed: in its reply when the hello declares
        `observes` (one round trip), else by an `observe` request after it."""
        if not self.conn.hello.observes:
            reply = self.conn.request(op, **fields)
            self._observe()
            return reply
        reply = self.conn.request(op, observe=True, **fields)
        if reply.state is None or reply.boundaries is None:
            raise DriverError(f"driver `{self.conn.transport.label}`: request {self.conn.next_id - 1} "
                              f"({describe(op, fields)}): a malformed reply: its hello declares observes, and the "
                              f"reply to `observe: true` carries no {'state' if reply.state is None else 'boundaries'}")
        self._observed(reply.state, reply.boundaries, op)
        return reply

    def apply(self, name: str, params: tuple, twin_next: M.State) -> None:
        reply = self._moving("step", action=name, params=T.params_to_json(name, params))
        if reply.took != name:
            raise DivergenceError(f"the implementation did not take {name}{tuple(params)}: "
                                  f"{reply.detail or f'it took {reply.took}'}")
        self.faults = twin_next.faults

    def attempt(self, name: str, params: tuple) -> bool:
        if name not in N.ATTEMPTS:
            raise KeyError(name)
        reply = self._moving("attempt", action=name, params=T.params_to_json(name, params))
        return reply.answer == "taken"

    def attempt_all(self, probes: list[tuple[str, tuple]]) -> list[tuple[bool, M.State] | DriverError] | None:
        """Every attempt in one `attempts` request when the hello declares it (None: it does not, so the
        caller attempts one by one): per attempt, in order, whether it was taken and the state after it; the
        list ends early with a DriverError at the attempt the driver could not carry out (the first when the
        whole request failed), so the failure names that probe."""
        if not self.conn.hello.attempts:
            return None
        for name, _ in probes:
            if name not in N.ATTEMPTS:
                raise KeyError(name)
        fields = {"attempts": [{"action": name, "params": T.params_to_json(name, params)} for name, params in probes]}
        where = f"driver `{self.conn.transport.label}`: request {self.conn.next_id} ({describe('attempts', fields)})"
        try:
            reply = self.conn.request("attempts", **fields)
        except DriverError as exc:
            return [exc]
        out = []
        for (name, params), got in zip(probes, reply.results):
            if got.error is not None:
                out.append(DriverFailed(f"{where}: {name}{tuple(params)} failed: {got.error}"))
                return out
            if got.answer is None or got.state is None or got.boundaries is None:
                missing = next(f for f in ("answer", "state", "boundaries") if getattr(got, f) is None)
                out.append(DriverError(f"{where}: a malformed reply: the result of {name}{tuple(params)} "
                                       f"carries no {missing}"))
                return out
            self._observed(got.state, got.boundaries, "attempts")
            out.append((got.answer == "taken", self.state()))
        if len(out) < len(probes):
            out.append(DriverError(f"{where}: a malformed reply: {len(reply.results)} results for "
                                   f"{len(probes)} attempts, none with an error"))
        return out

    def move(self, action: str, who: str) -> str | None:
        reply = self._moving("move", actor=N.ACTIONS[action].actor, who=who)
        return reply.took

    def state(self) -> M.State:
        return self._state._replace(faults=self.faults)



class Sut:
    """`--sut CMD`, the port's Server: one driver process for a run of many worlds, started again for the
    next world when it broke (a DriverStartError when it cannot be started: the command is wrong)."""

    def __init__(self, command: str, timeout: float = TIMEOUT, opener=None):
        """`opener`: how a connection is made (default: spawn `command`); tests pass an in-process one."""
        self.command, self.timeout = command, timeout
        self.label = f"sut={command}"
        self.opener = opener or (lambda: Connection.spawn(command, timeout))
        self.conn: Connection | None = None

    def connect(self) -> Connection:
        """The live connection, the driver started (again) when there is none."""
        if self.conn is None or self.conn.dead:
            if self.conn is not None:
                self.conn.close()
            self.conn = self.opener()
        return self.conn

    @property
    def switches(self) -> frozenset:
        """The defects the driver's hello declares it can switch on (harness.port.Switches)."""
        return frozenset(self.connect().hello.defects)

    def fresh(self) -> "Sut":
        """The same server without this one's driver process: what a forked worker starts its own with."""
        return Sut(self.command, self.timeout, self.opener)

    def start(self, cfg: M.Config, mutant=None) -> SutScheduler:
        """A world for `cfg` on a live connection (the driver started again when it broke): what replay,
        lockstep and conform call for each run from Init."""
        return SutScheduler(self.connect(), cfg, mutant)

    def points(self, sched: SutScheduler, graph):
        """The exhaustive walk's save and restore on this driver (harness.driver.points): the driver's own
        when its hello offers them, else each path replayed from Init."""
        from harness.driver.points import DriverPoints
        return DriverPoints(sched, graph, saves=sched.conn.hello.save)

    def check_workers(self, workers: int) -> None:
        """Any number: each forked worker starts a driver process of its own (`fresh`)."""

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
