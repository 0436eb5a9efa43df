// @ts-check
/** Deterministic ids: a prompt's, a continuation's (derived from Session and execution), an assistant's. */
export const promptId = (session, k) => `prompt:${session}:${k}`;
export const continuationId = (session, execution, gen = 0) =>
  gen === 0 ? `cont:${session}:${execution}` : `cont:${session}:${execution}:${gen}`;
export const assistantId = (execution, step) => `asst:${execution}:${step}`;
export const requestId = (input) => `request:${input}`;

/** The (execution, step) of an assistant id. */
export function assistantStep(id) {
  const [, e, k] = id.split(":");
  return [Number(e), Number(k)];
}
