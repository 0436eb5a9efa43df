// @ts-check
/** Deterministic ids: a prompt's, a continuation's (derived from Session and execution), an assistant's. */
/** @param {string} session @param {number} k */
export const promptId = (session, k) => `prompt:${session}:${k}`;
/** @param {string} session @param {number} execution @param {number} gen */
export const continuationId = (session, execution, gen = 0) =>
  gen === 0 ? `cont:${session}:${execution}` : `cont:${session}:${execution}:${gen}`;
/** A continuation id not derived from (Session, execution): a forged row's (ForgeContinuation, flaw `id`).
 * @param {string} session @param {number} execution */
export const forgedContinuationId = (session, execution) => `cont:${session}:${execution}:forged`;
/** The digest of the exact recovery prompt of (Session, execution): the content recovery's continuation carries,
 * checked at promotion (spec/README.md decision 28). @param {string} session @param {number} execution */
export const recoveryPromptDigest = (session, execution) => `recovery:${session}:${execution}`;
/** @param {number} execution @param {number} step */
export const assistantId = (execution, step) => `asst:${execution}:${step}`;
/** @param {string} input */
export const requestId = (input) => `request:${input}`;
/** The digest of the content admitted with an input: in this world an input's content is determined by its
 * id, so its digest is too (a caller retrying with another content sends another digest). @param {string} input */
export const contentDigest = (input) => `content:${input}`;

/** The (execution, step) of an assistant id. @param {string} id @returns {[number, number]} */
export function assistantStep(id) {
  const [, e, k] = id.split(":");
  return [Number(e), Number(k)];
}
