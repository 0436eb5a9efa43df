"""The gate in GitHub Actions: annotations and the job summary.

When GITHUB_ACTIONS=true, every failed check is printed as a workflow command,
`::error file=...,line=...,title=...::message`, so that Actions marks the line it points at (the trace
step that failed, or the TLA+ line defining the violated invariant); a skipped stage is a `::warning`.
When GITHUB_STEP_SUMMARY names a file, a Markdown table of the stages and their checks is appended to it.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.reports.results import FAIL, PASS, SKIP, TARGET_SECONDS, StageResult, target_line


def in_actions(env=None) -> bool:
    return (env if env is not None else os.environ).get("GITHUB_ACTIONS") == "true"


def _data(s: str) -> str:
    """A workflow command's message: %, CR and LF escaped."""
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(s: str) -> str:
    """A workflow command's property value: the message's escapes, and `:` and `,` too."""
    return _data(s).replace(":", "%3A").replace(",", "%2C")


def _path(file: str, env) -> str:
    """The path as Actions wants it: relative to the workspace when it lies inside it."""
    ws = env.get("GITHUB_WORKSPACE")
    if ws and Path(file).is_absolute():
        try:
            return Path(file).resolve().relative_to(Path(ws).resolve()).as_posix()
        except ValueError:
            pass
    return file


def command(level: str, message: str, *, title: str, file: str | None = None, line: int | None = None,
            env=None) -> str:
    env = env if env is not None else os.environ
    props = []
    if file:
        props.append(f"file={_prop(_path(file, env))}")
        if line:
            props.append(f"line={line}")
    props.append(f"title={_prop(title)}")
    return f"::{level} {','.join(props)}::{_data(message)}"


def annotations(results: list[StageResult], env=None) -> list[str]:
    """One `::error` per failed check (or per failed stage that no failing check explains), one
    `::warning` per skipped stage."""
    out = []
    for r in results:
        failed = [c for c in r.checks if c.status == FAIL]
        for c in failed:
            out.append(command("error", c.detail or f"{c.name} failed", title=f"claimcheck {r.name}: {c.name}",
                               file=c.file, line=c.line, env=env))
        if r.status == FAIL and not failed:
            out.append(command("error", r.detail or f"{r.name} failed", title=f"claimcheck {r.name}",
                               file=r.file, line=r.line, env=env))
        elif r.status == SKIP:
            out.append(command("warning", r.detail or "skipped", title=f"claimcheck {r.name}: skipped", env=env))
    return out


_MARK = {PASS: "✅ pass", FAIL: "❌ fail", SKIP: "⚠️ skip"}


def _cell(s: str, limit: int = 200) -> str:
    s = " ".join(s.split())
    s = s if len(s) <= limit else s[:limit - 1] + "…"
    return s.replace("\\", "\\\\").replace("|", "\\|")


def summary_markdown(results: list[StageResult], ok: bool) -> str:
    total = sum(r.seconds for r in results)
    counts = {s: sum(r.status == s for r in results) for s in (PASS, FAIL, SKIP)}
    lines = [f"## claimcheck gate: {'passed' if ok else 'FAILED'}", "",
             f"{counts[PASS]} passed, {counts[FAIL]} failed, {counts[SKIP]} skipped; "
             f"{total:.1f} s ({target_line(total, TARGET_SECONDS)})", "",
             "| stage | check | result | time | detail |", "| --- | --- | --- | ---: | --- |"]
    for r in results:
        lines.append(f"| **{_cell(r.name)}** | | {_MARK[r.status]} | {r.seconds:.1f} s | {_cell(r.detail)} |")
        for c in r.checks:
            where = f" (`{c.file}:{c.line}`)" if c.file and c.line and c.status == FAIL else ""
            lines.append(f"| | {_cell(c.name)} | {_MARK[c.status]} | {c.seconds:.1f} s | {_cell(c.detail)}{where} |")
    return "\n".join(lines) + "\n"


def report(results: list[StageResult], ok: bool, env=None, out=print) -> None:
    """What the gate does in Actions: annotations on stdout, the summary table appended to the file."""
    env = env if env is not None else os.environ
    if in_actions(env):
        for line in annotations(results, env):
            out(line)
    path = env.get("GITHUB_STEP_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(summary_markdown(results, ok) + "\n")
