"""TLC's cache by content (harness/engines/tlccache.py): the same inputs' graph is written once, and an edited
.tla module, another cfg, jar pin or option misses, so a stale graph is never served. TLC is replaced by a
stand-in that writes the text it read into its "graph" and counts its runs."""

import fcntl
import sys

import pytest

from harness.engines import tlc, tlccache, tlcgraph
from spec import configs

STANDIN = """import pathlib, sys
work, count = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
read = [(work / "MC.cfg").read_text()] + [pathlib.Path(m).read_text() for m in sys.argv[3:]]
(work / "graph").write_text("\\n".join(read))
with count.open("a") as f:
    f.write("run\\n")
"""


@pytest.fixture
def standin(tmp_path, monkeypatch):
    """tlc.start_state_graph with TLC replaced: returns (dump(cfg) -> the dump's text, runs() -> count)."""
    modules = []
    for m in tlc.MODULES:
        copy = tmp_path / "spec" / m.name
        copy.parent.mkdir(exist_ok=True)
        copy.write_text(m.read_text())
        modules.append(copy)
    count = tmp_path / "runs"
    count.write_text("")
    monkeypatch.setattr(tlc, "MODULES", modules)
    monkeypatch.setattr(tlc, "find_java", lambda: "java-standin")
    monkeypatch.setattr(tlcgraph, "read", lambda path, key=None: path.read_text())
    monkeypatch.setattr(tlcgraph, "command", lambda cmd, graph: cmd)

    def command(work, cfg_text, workers, extra=(), quick_jit=False):
        (work / "MC.cfg").write_text(cfg_text)
        return [sys.executable, "-c", STANDIN, str(work), str(count), *map(str, modules)]
    monkeypatch.setattr(tlc, "command", command)
    monkeypatch.setenv(tlccache.ENV, str(tmp_path / "cache"))
    return (lambda cfg: tlc.state_graph(cfg, timeout=60)), (lambda: len(count.read_text().split())), modules


def test_the_same_inputs_are_dumped_once(standin):
    dump, runs, _ = standin
    first = dump(configs.get("ci"))
    assert dump(configs.get("ci")) == first and runs() == 1


def test_an_edited_module_misses_and_is_dumped_afresh(standin):
    dump, runs, modules = standin
    before = dump(configs.get("ci"))
    modules[0].write_text(modules[0].read_text() + "\n\\* edited\n")
    after = dump(configs.get("ci"))
    assert runs() == 2 and "\\* edited" in after and "\\* edited" not in before


def test_another_cfg_misses(standin):
    dump, runs, _ = standin
    ci, sessions = dump(configs.get("ci")), dump(configs.get("sessions"))
    assert runs() == 2 and ci != sessions


def test_without_the_variable_nothing_is_cached(standin, monkeypatch):
    dump, runs, _ = standin
    monkeypatch.delenv(tlccache.ENV)
    dump(configs.get("ci"))
    dump(configs.get("ci"))
    assert runs() == 2


def test_the_key_covers_every_input(tmp_path):
    module = tmp_path / "M.tla"
    module.write_text("---- MODULE M ----\n====\n")
    base = tlccache.key("cfg", [module], "pin", ("java", 1))
    assert base == tlccache.key("cfg", [module], "pin", ("java", 1))
    others = {tlccache.key("cfg2", [module], "pin", ("java", 1)), tlccache.key("cfg", [module], "pin2", ("java", 1)),
              tlccache.key("cfg", [module], "pin", ("java", 2)), tlccache.key("cfg", [module], "pin", ("java2", 1))}
    module.write_text("---- MODULE M ----\nX == 1\n====\n")
    others.add(tlccache.key("cfg", [module], "pin", ("java", 1)))
    assert base not in others and len(others) == 5


def test_a_second_worker_waits_for_the_dump_under_way(tmp_path, monkeypatch):
    monkeypatch.setenv(tlccache.ENV, str(tmp_path))
    entry = tlccache.open_entry("k")
    assert entry.path is None
    with open(tmp_path / "k.lock", "w") as other:  # another worker's attempt, without blocking
        with pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        dumped = tmp_path / "graph"
        dumped.write_text("graph")
        entry.store(dumped)
        entry.release()
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free once the dump is stored
        fcntl.flock(other, fcntl.LOCK_UN)
    again = tlccache.open_entry("k")
    assert again.path is not None and again.path.read_text() == "graph" and not list(tmp_path.glob("*.part*"))
    again.release()
