"""How the stress fixtures here were brought to the wake rows' `turned` column (issue 31 item 3): they were
recorded before it, by the server whose wake scan planned retried rows oldest first (the plan the registry
now names the defect `wake-retry-oldest-first`). `python tests/validation/fill_turned.py --oldest-first F...`
sets each header's twin to that plan (the server that recorded it) and fills `turned` from the recorded rows
alone, by spec/wakes.py's WakeScan: a row a scan reserves (woken '' -> fresh/retry) is turned; a row that
arrives or is served is unturned; any other keeps its turn (with rounds on, a scan that starts a new round
first clears the waiting retried rows' turns). Nothing is taken from the twin: a row the old plan chose
that the twin would not still fails. With rounds on, the 2-node fixture fails at line 531 (the old plan
woke row 6, the rounds row 8)."""
import json, sys

def retried(x):
    return x["work"] and x["woken"] == "" and x["tries"] > 0

def upgrade(lines, oldest_first=False):
    prev = None
    out = []
    for raw in lines:
        row = json.loads(raw)
        w = row.get("writes", {}).get("wakes") if isinstance(row.get("writes"), dict) else None
        if w is not None:
            if prev is None:
                prev = [dict(work=False, tries=0, woken="", turned=False) for _ in w]
            new = []
            scan = row.get("action") == "WakeScan"
            fresh_round = scan and not oldest_first and all(p["turned"] for p in prev if retried(p))
            for p, x in zip(prev, w):
                t = p["turned"]
                if scan and fresh_round and retried(p):
                    t = False
                if not x["work"] or (x["work"] and not p["work"]):
                    t = False
                elif scan and p["woken"] == "" and x["woken"] != "":
                    t = True
                x = dict(x)
                if t:
                    x["turned"] = True
                else:
                    x.pop("turned", None)
                new.append(x)
                x["turned_"] = t
            prev = [dict(work=x["work"], tries=x["tries"], woken=x["woken"], turned=x.pop("turned_")) for x in new]
            row["writes"]["wakes"] = new
            raw = json.dumps(row, separators=(",", ":"))
        out.append(raw)
    return out

if __name__ == "__main__":
    oldest = "--oldest-first" in sys.argv
    for path in [a for a in sys.argv[1:] if not a.startswith("--")]:
        lines = open(path).read().splitlines()
        if oldest:
            head = json.loads(lines[0])
            head["config"]["defects"] = ["wake-retry-oldest-first"]
            lines[0] = json.dumps(head, separators=(",", ":"))
        new = upgrade(lines, oldest)
        changed = sum(a != b for a, b in zip(lines, new))
        open(path, "w").write("\n".join(new) + "\n")
        print(path, "lines changed", changed)
