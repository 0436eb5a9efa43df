"""TLC's state graph as StateGraphWriter.java writes it, read back (harness/engines/tlcgraph.py): each state keyed
as the TLA+ text TLC prints would be, an edge that TLC's second worker wrote before its target's state line
kept, self-loops and repeats dropped. A hand-made file; tests/engines/test_equivalence.py reads TLC's own."""

import pytest

from harness.engines import tlcgraph
from harness.traces.tlavalue import state_key_from_text

GRAPH = """N y x
V 0 0 {}
V 1 0 [a |-> 1, b |-> "s"]
S 11 0 0
V 0 1 {1, 2}
S -22 1 0
E 11 -22 Acquire
E -22 33 Tick
E -22 -22 Tick
E 11 -22 Acquire
V 1 1 <<1, 2>>
S 33 1 1
E 33 11 Crash
"""


def test_states_edges_and_keys(tmp_path):
    path = tmp_path / "graph"
    path.write_text(GRAPH)
    init, keys, edges = tlcgraph.read(path)
    texts = ['/\\ y = {}\n/\\ x = [a |-> 1, b |-> "s"]', '/\\ y = {1, 2}\n/\\ x = [a |-> 1, b |-> "s"]',
             "/\\ y = {1, 2}\n/\\ x = <<1, 2>>"]
    assert init == 0 and keys == [state_key_from_text(t) for t in texts]
    assert edges == {(0, "Acquire", 1), (1, "Tick", 2), (2, "Crash", 0)}


def test_a_key_function_gets_each_states_text(tmp_path):
    path = tmp_path / "graph"
    path.write_text(GRAPH)
    _init, keys, _edges = tlcgraph.read(path, key=lambda text: text)
    assert keys[2] == "/\\ y = {1, 2}\n/\\ x = <<1, 2>>"


def test_a_graph_without_a_state_is_an_error(tmp_path):
    path = tmp_path / "graph"
    path.write_text("N x\n")
    with pytest.raises(RuntimeError, match="wrote no state"):
        tlcgraph.read(path)
