"""A driver that misbehaves on purpose (tests/driver/test_driver_client.py): it answers `hello`, then
answers every later request as its one argument says: die, hang, garbage, wrong-id, refuse, malformed."""

import json
import sys

MODE = sys.argv[1]

for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "hello":
        reply = {"id": req["id"], "ok": True, "protocol": "claimcheck-driver", "version": 1, "driver": f"fake {MODE}"}
        print(json.dumps(reply), flush=True)
    elif MODE == "die":
        print("fake driver: giving up", file=sys.stderr, flush=True)
        sys.exit(3)
    elif MODE == "hang":
        continue  # reads on, never answers
    elif MODE == "garbage":
        print("this is not json", flush=True)
    elif MODE == "wrong-id":
        print(json.dumps({"id": req["id"] + 7, "ok": True}), flush=True)
    elif MODE == "refuse":
        print(json.dumps({"id": req["id"], "ok": False, "error": "no world here"}), flush=True)
    elif MODE == "malformed":
        print(json.dumps({"id": req["id"], "ok": True, "tookk": "Renew"}), flush=True)
