// @ts-check
/**
 * The model provider: a scripted stream per dispatch (its outcome, 'end' or 'fail', is decided by the
 * script: the driver decides it before the Step publishes), whether it opens with a partial fragment before
 * its Step.Started (the twin's Fragments: decided the same way), plus the outside world's record of every
 * call, local tool run and reconciliation (a crash does not erase it).
 */
/** @typedef {import('./types.js').EffectKind} EffectKind */
/** Who makes a provider call, and for which Step. @typedef {{session: string, execution: number, owner: string,
 *  node: string, step: number}} Call */
/** A local tool's run: call `call` (its index in the Step) of Step `step`. @typedef {Call & {call: number}} ToolCall */
/** A Step's stream: its end, 'end' (the Step completes) or 'fail' (the stream failed). @typedef {"end" | "fail"} Outcome */

export class ScriptedProvider {
  constructor() {
    /** @type {Map<number, Outcome>} execution -> outcome */
    this.script = new Map();
    /** @type {Set<number>} executions whose stream opens with a partial fragment */
    this.fragments = new Set();
    /** @type {import('./types.js').Effect[]} */
    this.effects = [];
  }

  /** @param {number} execution @param {Outcome} outcome */
  decide(execution, outcome) {
    this.script.set(execution, outcome);
  }

  /** Whether the execution's stream opens with a partial fragment (before its Step.Started).
   * @param {number} execution @param {boolean} opens */
  openFragment(execution, opens) {
    if (opens) this.fragments.add(execution);
    else this.fragments.delete(execution);
  }

  /** Begin a provider call: the stream of Step `step` of an execution. @param {Call} call */
  dispatch({ session, execution, owner, node, step }) {
    this.record(session, execution, owner, node, "dispatch", step, 0);
    const { script, fragments } = this;
    return {
      /** The stream's end: 'end' (the Step completes) or 'fail' (the stream failed). @returns {Outcome} */
      outcome: () => script.get(execution) ?? "end",
      /** The stream's first chunk is a partial fragment, not yet a Step.Started. */
      opensFragment: () => fragments.has(execution),
    };
  }

  /** @param {ToolCall} run */
  runTool({ session, execution, owner, node, step, call }) {
    this.record(session, execution, owner, node, "tool", step, call);
  }

  /** @param {Omit<Call, "step">} call */
  reconcile({ session, execution, owner, node }) {
    this.record(session, execution, owner, node, "reconcile", 0, 0);
  }

  /** @param {string} sess @param {number} exec @param {string} owner @param {string} by @param {EffectKind} kind
   *  @param {number} step @param {number} call */
  record(sess, exec, owner, by, kind, step, call) {
    if (!this.effects.some((x) => x.sess === sess && x.exec === exec && x.owner === owner && x.by === by
      && x.kind === kind && x.step === step && x.call === call)) {
      this.effects.push({ sess, exec, owner, by, kind, step, call });
    }
  }
}
