// @ts-check
/**
 * The model provider: a scripted stream per dispatch (its outcome, 'end' or 'fail', is decided by the
 * script: the driver decides it before the Step publishes), plus the outside world's record of every call,
 * local tool run and reconciliation (a crash does not erase it).
 */
export class ScriptedProvider {
  constructor() {
    /** @type {Map<number, string>} execution -> outcome */
    this.script = new Map();
    /** @type {Array<{sess: string, exec: number, owner: string, by: string, kind: string, step: number}>} */
    this.effects = [];
  }

  decide(execution, outcome) {
    this.script.set(execution, outcome);
  }

  /** Begin a provider call: the stream of Step `step` of an execution. */
  dispatch({ session, execution, owner, node, step }) {
    this.record(session, execution, owner, node, "dispatch", step);
    const script = this.script;
    return {
      /** The stream's end: 'end' (the Step completes) or 'fail' (the stream failed). */
      outcome: () => script.get(execution) ?? "end",
    };
  }

  runTool({ session, execution, owner, node, step }) {
    this.record(session, execution, owner, node, "tool", step);
  }

  reconcile({ session, execution, owner, node }) {
    this.record(session, execution, owner, node, "reconcile", 0);
  }

  record(sess, exec, owner, by, kind, step) {
    if (!this.effects.some((x) => x.sess === sess && x.exec === exec && x.owner === owner && x.by === by
      && x.kind === kind && x.step === step)) {
      this.effects.push({ sess, exec, owner, by, kind, step });
    }
  }
}
