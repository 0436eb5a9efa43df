"""The promotion's validation of a continuation row, part of the registry (spec.names re-exports it): the one
flaw a forged or corrupt continuation-kind row has (TLA+ ContinuationFlaws; ForgeContinuation), each the review
item of the reviewed validation (R003 line 28, input.ts 321-397) that refuses it, and the defect per flaw that
omits its check (spec/README.md decision 28)."""

from __future__ import annotations

from .records import Defect, _index

# flaw -> the check that refuses a row with it, in the order the promotion asks them
CONTINUATION_CHECKS = {
    "id": "canonical continuation id (the id derived from Session and execution)",
    "session": "same-Session input (the recovered execution is the row's Session's)",
    "delivery": "queue delivery",
    "prompt": "exact prompt (the recovery prompt's content)",
    "assistant": "assistant relationship (the assistant is the recovered execution's)",
    "newest": "newest assistant (the recovered execution's newest started one)",
    "synthetic": "synthetic identity (recovery's, not a caller's)",
}
CONTINUATION_FLAWS = tuple(CONTINUATION_CHECKS)

# one defect per check: the promotion's validation omits it, so a row with that flaw is promoted (`forged`)
FLAW_DEFECTS = _index(
    Defect(f"promotion-ignores-{flaw}", ("PromotedContinuationsValid",), "R003-PASS-recovery-validation",
           f"the promotion's validation omits its {check} check: a forged or corrupt continuation row with that "
           f"flaw is promoted as recovery's own", "forged")
    for flaw, check in CONTINUATION_CHECKS.items())
