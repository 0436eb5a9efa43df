// @ts-check
/** Deterministic ids: a prompt's, a continuation's (derived from Session and execution), an assistant's. */
/** @param {string} session @param {number} k */
export const promptId = (session, k) => `prompt:${session}:${k}`;
/** @param {string} session @param {number} execution @param {number} gen */
export const continuationId = (session, execution, gen = 0) =>
  gen === 0 ? `cont:${session}:${execution}` : `cont:${session}:${execution}:${gen}`;
/** @param {number} execution @param {number} step */
export const assistantId = (execution, step) => `asst:${execution}:${step}`;
/** @param {string} input */
export const requestId = (input) => `request:${input}`;

/** The (execution, step) of an assistant id. @param {string} id @returns {[number, number]} */
export function assistantStep(id) {
  const [, e, k] = id.split(":");
  return [Number(e), Number(k)];
}
