"""The assumptions the protocol's properties rest on, and the accepted residuals (docs/protocol.md section 5),
part of the registry: spec.names re-exports them."""

from __future__ import annotations

from .records import Assumption, Residual, _index

ASSUMPTIONS = _index([
    Assumption("TimelyDispatch", ("NoPhysicalReplay",),
               "no lease expires between a renewal and the provider dispatch that follows it"),
    Assumption("SynchronizedClocks", ("NoOverlappingEffects",),
               "nodes agree on now closely enough that Grace >= SupervisionLag: a node supervises its "
               "actors before recovery may take their expired claim"),
    Assumption("ProcessLocalRouting", ("NoOverlappingEffects",),
               "an interrupt reaches the node that owns the execution"),
])
RESIDUALS = _index([Residual("R1", "NotExhaustedByPauses", ("SessionsEventuallyAvailable", "PendingInputsEventuallyServed",
                                                            "ContinuationsEventuallyPromoted"),
                             "lost-lease exhaustion: a claim taken over MaxTries times whose last conversion lost its "
                             "lease is quarantined exhausted for good (docs/protocol.md section 5)"),
                     Residual("R2", "ListenerHung", ("SessionsEventuallyAvailable", "PendingInputsEventuallyServed",
                                                     "ContinuationsEventuallyPromoted"),
                              "a hung listener: a runner whose listener never returns keeps its Session's claim live "
                              "through its node's heartbeat for as long as the process lives (docs/protocol.md "
                              "section 5)", stable=False)])
