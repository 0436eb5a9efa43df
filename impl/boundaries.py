"""Named failpoints between the atomic units of one code path.

Each name comes from `spec.names.BOUNDARIES`: it sits right after the unit named in its `after`
field, on the branch that leads to its `before` unit. By default a hit does nothing; a hook
(the harness's scheduler, or a test recorder) may pause, record, or act (e.g. advance a clock).
"""

from __future__ import annotations

from typing import Callable

from spec import names as N

Hook = Callable[[str, dict], None]


class Boundaries:
    def __init__(self, hook: Hook | None = None):
        self._hooks: list[Hook] = [hook] if hook else []

    def install(self, hook: Hook) -> Hook:
        self._hooks.append(hook)
        return hook

    def remove(self, hook: Hook) -> None:
        self._hooks.remove(hook)

    def hit(self, name: str, **ctx) -> None:
        if name not in N.BOUNDARIES:
            raise KeyError(f"unknown boundary {name!r}; known: {', '.join(N.BOUNDARIES)}")
        for hook in list(self._hooks):
            hook(name, ctx)


class Recorder:
    """A hook that records every hit as (name, ctx), in order."""

    def __init__(self):
        self.hits: list[tuple[str, dict]] = []

    def __call__(self, name: str, ctx: dict) -> None:
        self.hits.append((name, ctx))

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.hits]
