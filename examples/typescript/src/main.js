// @ts-check
/**
 * The driver's command line (the `driver` script runs this): SQLite in memory (sql.js) by default;
 * PostgreSQL with `--database postgresql://USER@HOST:PORT/DB` (or $CLAIMCHECK_TS_DATABASE_URL): every world
 * in a fresh schema of that database. `--history DIR` (or $CLAIMCHECK_TS_HISTORY): each world's commit
 * history in DIR/world-<n>.jsonl, for `claimcheck validate` (src/history.js, docs/history.md). `--no-defects`:
 * hello declares no defect switches and start refuses any (a server as a third party ships it).
 */
import { appendFileSync } from "node:fs";
import { serve } from "./driver.js";

console.log = console.error; // a stray log must not corrupt the protocol's lines on stdout
const at = process.argv.indexOf("--database");
const url = at > 0 ? process.argv[at + 1] ?? null : process.env["CLAIMCHECK_TS_DATABASE_URL"] || null;
const h = process.argv.indexOf("--history");
const history = h > 0 ? process.argv[h + 1] ?? null : process.env["CLAIMCHECK_TS_HISTORY"] || null;
const switches = !process.argv.includes("--no-defects");
// Under StrykerJS (docs/mutation.md): the mutants this process reached, one JSON line appended to the file
// $CLAIMCHECK_MUTANT_COVERAGE names, so the mutation oracle runs on a mutant only the checks that reach it
const coverage = process.env["CLAIMCHECK_MUTANT_COVERAGE"];
if (coverage) {
  process.on("exit", () => {
    const reached = /** @type {any} */ (globalThis)["__stryker__"]?.mutantCoverage?.static ?? {};
    appendFileSync(coverage, JSON.stringify(Object.keys(reached)) + "\n");
  });
}
await serve(process.stdin, process.stdout, url, history, switches);
process.exit(0);
