"""claimcheck's implementation of the protocol (docs/protocol.md) on SQLModel over sqlite3
and PostgreSQL (impl/db.py: the transaction discipline of each).

Each twin action (spec/model.py) is one atomic unit here: one transaction, or one in-memory update.
binding/actions.py holds the whole table (every registry action to its call, checked at import); in short:

    Acquire(n, i)              Node.acquire(input_id)            PromoteContinuation  Node.promote(input_id)
    Renew .. RunnerExit        Node.runner.step()  (its pc's row of impl/actor.py's table; the provider's
    ToolStart .. ToolRun         decision picks PublishStepFailed / PublishStepEnded)
    CancelRequest(n, s)        Node.cancel(s)  (Finalizer.request)
    FinalizerReconcile .. Clear Node.finalizer.step()  (reconcile, then the fenced settle, then clear)
    Heartbeat(k, s)            Node.heartbeat(s) / RecoveryWorker.heartbeat(s)
    Supervise(n)               Node.supervise()  (stops the runner / finalizer whose claim is not its own)
    Tick                       clock.advance(1)
    RecoveryScan(r, s)         RecoveryWorker.scan(s)
    RecoveryTakeover .. Quar.  RecoveryWorker.step()  (take, reconcile, then convert or quarantine)
    Admit, ExactRetry          InputStore.admit_next / exact_retry   Resume  Node.resume   Steer  Runner.steer
    WakeArrive .. WakeLost     wakes.WakeQueue: arrive, scan, serve, release
    Crash(k)                   Node.crash() / RecoveryWorker.crash()
    CorruptRecoveryRow(s, e)   faults.corrupt_recovery_row(db, s, e)

Modules: clock, boundaries, schema, db, context, registry (names bound from spec.names), ids, results,
claims, events, inputs, wakes, provider, actor (the step machine and pc names), runner, cancel, node, recovery,
faults, snapshot, history + history_sessions (the commit recorder of `claimcheck stress`: off unless
installed, then one row per commit in the same transaction; per Session on PostgreSQL). The adapter to
claimcheck is not here: binding/ is.
"""
