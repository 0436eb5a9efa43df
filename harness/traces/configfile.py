"""Configurations by name or by file: what `--config` takes (`check`, `fuzz`, `itf import`, `bench`).

A registered name (spec/configs.py: ci, sessions, deep) or a path to a JSON configuration file: the object
a trace holds under `config` (harness.traces.trace.TraceConfig), validated field by field. `spec/config-files/*.json` are the
registered configurations written as files (tests/cli/test_bad_config_files.py checks they load to the same Config).
Errors are ConfigError, one line: `<file>: <field>: <reason>`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import ValidationError

from spec import configs
from spec import model as M
from spec import names as N

from harness.traces import trace as T
from harness.traces.inputfile import InputError, read_json, validation_error


class ConfigError(InputError):
    """A configuration file (or name) that cannot be used: one line naming the file and the field."""


@dataclass(frozen=True)
class Chosen:
    label: str  # the registered name, or the file's stem (trace labels, file names of found traces)
    cfg: M.Config
    path: Path | None = None  # the file, when it came from one


def looks_like_path(text: str) -> bool:
    """Not a registered name: a path when it has a folder part, a .json suffix, or exists."""
    return text not in configs.CONFIGS and ("/" in text or text.endswith(".json") or os.path.exists(text))


def label_of(path: Path) -> str:
    label = re.sub(r"[^A-Za-z0-9_.-]+", "-", path.stem).strip("-._")[:64]
    return label or "file"


def load(path: str | Path, defects=(), assumptions_off=()) -> M.Config:
    """The configuration in a JSON file; `defects` and `assumptions_off` are switched on in addition to
    the file's own."""
    p = Path(path)
    raw = read_json(p, ConfigError)
    if not isinstance(raw, dict):
        raise ConfigError(f"{p}: (top): expected a configuration object, got {type(raw).__name__}")
    if raw.get("format") == T.FORMAT:
        raise ConfigError(f"{p}: format: a trace, not a configuration file (its `config` object is one)")
    try:
        tc = T.TraceConfig.model_validate(raw)
    except ValidationError as exc:
        raise validation_error(exc, str(p), error=ConfigError) from None
    try:
        cfg = T.trace_to_config(tc, prefix="")
    except T.TraceError as exc:
        raise ConfigError(f"{p}: {exc}") from None
    return switched(cfg, defects, assumptions_off)


def switched(cfg: M.Config, defects=(), assumptions_off=()) -> M.Config:
    """`cfg` with more defects on and more assumptions off (names already checked by the caller)."""
    off = {}
    for a in assumptions_off:
        if a not in configs.ASSUMPTION_FIELDS:
            raise N.UnknownName(f"unknown assumption {a!r}; known: {', '.join(configs.ASSUMPTION_FIELDS)}")
        off[configs.ASSUMPTION_FIELDS[a]] = False
    return replace(cfg, defects=frozenset(cfg.defects) | frozenset(N.check_defects(defects)), **off)


def resolve(spec: str, defects=(), assumptions_off=()) -> Chosen:
    """A registered name or a configuration file, with `defects` on and `assumptions_off` off."""
    if spec in configs.CONFIGS:
        return Chosen(spec, configs.get(spec, defects, assumptions_off))
    if not looks_like_path(spec):
        raise ConfigError(f"{spec}: not a registered configuration ({', '.join(configs.CONFIGS)}) "
                          "nor a path to a .json configuration file")
    p = Path(spec)
    return Chosen(label_of(p), load(p, defects, assumptions_off), p)


def dumps(cfg: M.Config) -> str:
    """`cfg` as a configuration file's text."""
    fields = T.config_to_trace(cfg).model_dump(exclude_none=True)
    return "{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in fields.items()) + "\n}\n"
