/**
 * The shapes this server shares between its modules, in TypeScript: the registry's names, the database's
 * rows and interface, the twin's state as `observe` returns it, and the driver protocol's requests and
 * replies. Types only: nothing here exists at run time, and Node never loads this file (the JavaScript
 * modules name these types in JSDoc, `import('./types.js').ClaimRow`, and `tsc -p .` checks them).
 *
 * The registry's names (Defect, Boundary, Assumption, ActionParams, the pc and kind unions) are spec/names.py's,
 * generated into src/registry.ts (`python -m spec.bindings`) and re-exported here, so a misspelt defect switch
 * or boundary fails the type check. The requests' shapes follow docs/driver.schema.json.
 */

import type {
  ActionParams, Assumption, Boundary, ContinuationFlaw, Defect, EffectKind, EventKind, FinalizerPc, InputKind, InputState, Phase,
  QuarantineReason, RecoveryPc, RequestKind, RunnerPc, WakeReservation,
} from "./registry.js";

// ---- the registry (spec/names.py, generated into src/registry.ts) ----

export type * from "./registry.js";

export type ActionName = keyof ActionParams;
/** Any action's parameters, as a request carries them: each name with the type every action that has it
 * gives it (which of them an action needs is ActionParams'). */
export type Params = Partial<{ n: string; r: string; s: string; e: number; w: number; i: InputRecord; f: string }>;

// ---- configuration ----

/** A claimcheck configuration object (a trace's `config`, the start request's). */
export interface TraceConfig {
  sessions: string[];
  nodes: string[];
  recoverers: string[];
  prompts: number;
  max_exec: number;
  max_steps?: number;
  tools?: number;
  hosted?: number;
  fragments?: number;
  lease: number;
  scan_bound: number;
  grace?: number;
  supervision_lag?: number;
  max_tries?: number;
  faults: string[];
  admission?: boolean;
  steering?: boolean;
  delivery_kinds?: boolean;
  steer_prompts?: number[];
  left_claims?: string[];
  defects?: string[];
  assumptions_off?: Assumption[];
  wake_rows?: number;
  wake_batch?: number;
  fresh_share?: number;
  max_wake_tries?: number;
  wakers?: number;
  wakes_tied?: boolean;
}

/** An input as the caller names it (and the twin holds it). */
export interface InputRecord {
  sess: string;
  kind: InputKind;
  src: number;
  state: InputState;
  gen?: number;
  /** a forged or corrupt continuation row's one flaw (spec/names.py CONTINUATION_FLAWS); absent: none */
  flaw?: ContinuationFlaw;
}

// ---- the database ----

/** A value bound to a `?` placeholder. */
export type SqlValue = string | number | null;

/**
 * The async interface both databases answer (src/db.js on sql.js, src/pg.js on pg). A query's row type is
 * not checked against the SQL: the caller states it where it reads the rows (`R` is inferred from the
 * declaration the result is assigned to, and is `unknown` when none is stated, so it cannot be used
 * unexamined).
 */
export interface Database {
  all<R = unknown>(sql: string, params?: SqlValue[]): Promise<R[]>;
  get<R = unknown>(sql: string, params?: SqlValue[]): Promise<R | undefined>;
  /** A write: the number of rows it changed. */
  run(sql: string, params?: SqlValue[]): Promise<number>;
  /** `work` in one transaction: committed when it resolves, rolled back when it throws. */
  tx<T>(work: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The rows of src/db.js's schema. */
export interface ClaimRow {
  session_id: string;
  execution_id: number;
  owner_id: string;
  lease_expires_at: number;
  phase: Phase;
  assistant_id: string | null;
  recovery_error: string | null;
  recovery_attempts: number;
}
export interface EventRow {
  seq: number;
  session_id: string;
  kind: EventKind;
  assistant_id: string | null;
  input_id: string | null;
  request_id: string | null;
  writer: string;
  tool_call: number;
}
export interface InputRow {
  input_id: string;
  session_id: string;
  kind: InputKind;
  src: number;
  gen: number;
  delivery: "steer" | "queue";
  state: InputState;
  origin_session: string | null;
  content_digest: string | null;
  assistant_id: string | null;
  assistant_execution: number | null;
  synthetic: number;
}
export interface RecoveryRow {
  execution_id: number;
  session_id: string;
  continuation_id: string | null;
}
export interface CancelledRow {
  execution_id: number;
  session_id: string;
}
export interface WakeRow {
  item: string;
  rank: number;
  attempts: number;
  reserved: WakeReservation;
  /** 1: woken in the current round of retries */
  turned: number;
}
/** `SELECT value FROM id_sequence`. */
export interface SequenceRow {
  value: number;
}

/** An event as a publisher appends it (the events table's columns, by their short names): a Step's or a
 * tool call's event names its assistant; a PromptExecutionRequested its input and request. */
export type NewEvent = AssistantEvent | RequestEvent;
export interface AssistantEvent {
  session: string;
  kind: Exclude<EventKind, RequestKind>;
  assistant: string;
  writer: string;
  /** a tool event's call index in its Step (1, 2, ...); absent (0) for a Step event */
  call?: number;
}
export interface RequestEvent {
  session: string;
  kind: RequestKind;
  input: string;
  request: string;
  writer: string;
}

// ---- the twin's state (harness/traces/trace.py state_to_json; docs/driver.md "The vocabulary") ----

export interface TwinClaim {
  exec: number;
  owner: string;
  ttl: number;
  phase: Phase | "none";
  asst: number;
  quar: boolean;
  tries: number;
  why: QuarantineReason | "";
}
export interface TwinEvent {
  sess: string;
  kind: EventKind;
  asst: number;
  node: string;
  call: number;
}
/** A session_recovery or cancelled_executions row. */
export interface TwinPair {
  exec: number;
  sess: string;
}
export interface TwinInput {
  sess: string;
  kind: InputKind;
  src: number;
  state: InputState;
  gen: number;
}
export interface TwinRunner {
  pc: RunnerPc;
  sess: string;
  exec: number;
  mem: number;
  active: boolean;
  intr: boolean;
  ordinal: number;
  tool: number;
}
export interface TwinFinalizer {
  pc: FinalizerPc;
  sess: string;
  exec: number;
  owner: string;
}
export interface TwinRecovery {
  pc: RecoveryPc;
  sess: string;
  exec: number;
  seen: string;
  why: QuarantineReason | "";
}
/** The provider's record of one outside effect (a crash keeps it). */
export interface Effect {
  sess: string;
  exec: number;
  owner: string;
  by: string;
  kind: EffectKind;
  step: number;
  /** a tool's call index in its Step; 0 for every other effect */
  call: number;
}
export interface TwinWake {
  work: boolean;
  tries: number;
  woken: WakeReservation;
  turned: boolean;
}
/** A row a waker planned: the row, the counter it observed, the slot kind. */
export interface TwinPlan {
  row: number;
  tries: number;
  slot: "fresh" | "retry";
}
export interface TwinState {
  claim: Record<string, TwinClaim>;
  nextExec: number;
  log: TwinEvent[];
  recovery: TwinPair[];
  inputs: TwinInput[];
  run: Record<string, TwinRunner>;
  fin: Record<string, TwinFinalizer>;
  rec: Record<string, TwinRecovery>;
  cancelled: TwinPair[];
  /** Always empty: claimcheck fills in the environment's history from the twin. */
  faults: never[];
  effects: Effect[];
  wakes: TwinWake[];
  /** each racing waker's plan (only with Wakers > 1) */
  waker?: TwinPlan[][];
}

// ---- the driver protocol (docs/driver.md, docs/driver.schema.json) ----

interface Envelope<Op extends string> {
  id: number;
  op: Op;
}
export interface HelloRequest extends Envelope<"hello"> {
  protocol: string;
  versions: number[];
}
export interface StartRequest extends Envelope<"start"> {
  config: TraceConfig;
  defects?: Defect[];
}
export interface StepRequest extends Envelope<"step"> {
  action: string;
  params?: Params;
  /** Hello's `observes`: the reply carries the observation after the request. */
  observe?: boolean;
}
export interface AttemptRequest extends Envelope<"attempt"> {
  action: string;
  params?: Params;
  /** Hello's `observes`: the reply carries the observation after the request. */
  observe?: boolean;
}
export interface MoveRequest extends Envelope<"move"> {
  actor: string;
  who: string;
  /** Hello's `observes`: the reply carries the observation after the request. */
  observe?: boolean;
}
/** Hello's `attempts`: each attempt carried out in order and observed, as `attempt` with `observe: true`. */
export interface AttemptsRequest extends Envelope<"attempts"> {
  attempts: { action: string; params?: Params }[];
}
export type ObserveRequest = Envelope<"observe">;
export interface SaveRequest extends Envelope<"save"> {
  point: string;
}
export interface RestoreRequest extends Envelope<"restore"> {
  point: string;
}
export type StopRequest = Envelope<"stop">;
export type Request =
  | HelloRequest | StartRequest | StepRequest | AttemptRequest | AttemptsRequest | MoveRequest | ObserveRequest
  | SaveRequest | RestoreRequest | StopRequest;
/** The requests that move the world (kept in the journal a restore replays). */
export type MovingRequest = StepRequest | AttemptRequest | MoveRequest;

export interface HelloReply {
  protocol: "claimcheck-driver";
  version: 1;
  driver: string;
  save: boolean;
  /** The defect switches the server has (none: its gate skips the kill matrix as not applicable). */
  defects: Defect[];
  /** Whether this driver records each world's commit history (--history DIR). */
  history: boolean;
  /** Whether step, attempt and move replies carry the observation when the request asks (`observe: true`). */
  observes: boolean;
  /** Whether this driver carries out `attempts`. */
  attempts: boolean;
}
/** The action the server took (null: none). */
export interface TookReply {
  took: ActionName | null;
}
export interface AttemptReply {
  answer: "taken" | "refused";
  /** A refusal's reason, for the report. */
  detail?: string;
}
export interface ObserveReply {
  state: TwinState;
  boundaries: Boundary[];
}
/** One attempt of an `attempts` request: its answer and the observation after it, or why it failed (the last). */
export type Probed = (AttemptReply & ObserveReply) | { error: string };
export interface AttemptsReply {
  results: Probed[];
}
export type Ack = Record<string, never>;

/** What each op answers (the reply's fields besides `id` and `ok`). */
export interface Replies {
  hello: HelloReply;
  start: Ack;
  step: TookReply;
  attempt: AttemptReply;
  attempts: AttemptsReply;
  move: TookReply;
  observe: ObserveReply;
  save: Ack;
  restore: Ack;
  stop: Ack;
}

// ---- the commit history (docs/history.md, format version 1) ----

export interface HistoryHeader {
  format: "claimcheck-history";
  version: 1;
  config: TraceConfig;
  source: string;
}
/** The durable rows one transaction wrote, in the twin's vocabulary (a claim of null: deleted). */
export interface Writes {
  claim?: Record<string, TwinClaim | null>;
  nextExec?: number;
  log?: TwinEvent[];
  recovery?: TwinPair[];
  inputs?: TwinInput[];
  cancelled?: TwinPair[];
  wakes?: TwinWake[];
}
export interface HistoryLine {
  actor: string;
  action: string;
  params: Params;
  /** the clock's reading, on the steps whose twin action reads a lease */
  now?: number;
  writes: Writes;
}
