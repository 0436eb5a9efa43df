"""A recorded continuation row's flaw, as the twin names it (spec/README.md decision 28)."""

from __future__ import annotations

from impl.inputs import first_flaw


def with_flaw(i: list) -> list:
    """An input row as recorded (its continuation envelope and its execution's newest started assistant after
    the seventh column) with the envelope read as its flaw (impl/inputs.first_flaw: the first check
    of the promotion's validation it fails, "" for none) in the eighth; a row already read is left."""
    if len(i) <= 8:
        return i
    iid, sess, kind, src = i[:4]
    delivery, origin, digest, asst, asst_exec, synthetic, newest = i[7:14]
    flaw = "" if kind != "continuation" else first_flaw(iid, sess, src, delivery, origin, digest, asst, asst_exec,
                                                        bool(synthetic), newest)
    return [*i[:7], flaw]
