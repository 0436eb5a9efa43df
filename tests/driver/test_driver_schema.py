"""The driver protocol's JSON Schema (docs/driver.schema.json) is generated from harness/driver/protocol.py:
the committed file is the generated one, a valid 2020-12 schema, and every line the bundled driver and
the client exchange over a whole replay validates against it."""

import json

import jsonschema

from harness.conformance import replay as R
from harness.driver import protocol as P
from harness.driver.client import Connection, Sut
from harness.driver.transport import InProcess
from binding.driver import Driver
from spec import names as N

SCHEMA = json.loads(P.SCHEMA_FILE.read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def test_committed_schema_is_the_generated_one_and_a_valid_schema():
    assert P.SCHEMA_FILE.read_text() == P.schema_text(), "run: python -c 'from harness.driver import protocol as P; " \
                                                         "P.SCHEMA_FILE.write_text(P.schema_text())'"
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["title"] == f"claimcheck-driver protocol, version {P.VERSION}"


def test_the_schema_names_the_registry():
    defs = SCHEMA["$defs"]
    assert defs["Step"]["properties"]["action"]["enum"] == list(N.ACTIONS)
    assert defs["Attempt"]["properties"]["action"]["enum"] == list(N.ATTEMPTS)
    assert defs["Move"]["properties"]["actor"]["enum"] == list(N.STEPPING_ACTORS)
    assert defs["ObserveReply"]["properties"]["boundaries"]["items"]["enum"] == list(N.BOUNDARIES)
    assert set(defs["Request"]["discriminator"]["mapping"]) == set(P.REPLIES)
    assert [b["properties"]["params"] for b in defs["Step"]["oneOf"]] == [
        {"$ref": f"#/$defs/{a}Params"} for a in N.ACTIONS]


class Recording(InProcess):
    def __init__(self):
        super().__init__(Driver())
        self.lines = []

    def send(self, line):
        self.lines.append(line)
        super().send(line)

    def receive(self, timeout):
        line = super().receive(timeout)
        self.lines.append(line)
        return line


def test_every_line_of_a_replay_validates_and_only_requests_and_replies_do():
    transport = Recording()
    conn = Connection(transport)
    sut = Sut("in process", opener=lambda: conn)
    for path in R.committed_traces():
        assert R.replay_file(path, server=sut).ok
    conn.request("save", point="p")
    conn.request("restore", point="p")
    conn.close()
    ops = {json.loads(line).get("op") for line in transport.lines}
    assert {"hello", "start", "step", "attempt", "move", "observe", "save", "restore", "stop"} <= ops
    for line in transport.lines:
        VALIDATOR.validate(json.loads(line))
    for bad in ({"id": 1, "op": "teleport"}, {"id": 1, "ok": True, "answer": "maybe"},
                {"id": 1, "op": "step", "action": "Renew"}, {"id": -1, "op": "observe"},
                {"id": 1, "op": "step", "action": "Renew", "params": {"s": "s1"}},
                {"id": 1, "op": "attempt", "action": "Renew", "params": {"n": "n1"}}):
        assert not VALIDATOR.is_valid(bad), bad
