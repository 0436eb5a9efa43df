"""The driver protocol's line transports: a driver command's pipes (`Process`), or a driver object in this
process (`InProcess`). Both `send` one line and `receive` the next within a timeout; how the conversation
goes is harness.driver.client's."""

from __future__ import annotations

import queue
import shlex
import subprocess
import threading
from collections import deque


class Process:
    """A driver command's stdin and stdout as line transport; its stderr kept for messages."""

    def __init__(self, argv: list[str]):
        """Raises OSError (no such command, no permission) or ValueError (a NUL byte in it)."""
        self.label = shlex.join(argv)
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, encoding="utf-8", errors="backslashreplace", bufsize=1)
        self.lines: queue.Queue = queue.Queue()
        self.stderr: deque[str] = deque(maxlen=5)
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)  # end of output: the driver exited or closed stdout

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip("\n"))

    def send(self, line: str) -> None:
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass  # the reader sees the end of output and says how the driver ended

    def receive(self, timeout: float) -> str:
        """The next line; raises TimeoutError, or EOFError naming how the driver ended."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self.close(force=True)
            raise TimeoutError(f"no reply within {timeout:g} s (the driver was stopped)") from None
        if line is None:
            self.lines.put(None)
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
            how = f"exited with code {code}" if code is not None else "closed its output"
            tail = "; its stderr ends: " + " | ".join(self.stderr) if self.stderr else ""
            raise EOFError(f"the driver {how} without replying{tail}")
        return line

    def close(self, force: bool = False) -> None:
        if self.proc.poll() is None:
            if not force:
                try:
                    self.proc.stdin.close()
                    self.proc.wait(timeout=2)
                    return
                except (OSError, subprocess.TimeoutExpired):
                    pass
            self.proc.kill()
            self.proc.wait()


class InProcess:
    """A driver's request handling without a process (`binding.driver.Driver`: anything with
    `handle_line`): the same lines, no pipe."""

    label = "in process"

    def __init__(self, driver):
        self.driver = driver
        self.pending: deque[str] = deque()

    def send(self, line: str) -> None:
        self.pending.append(self.driver.handle_line(line))

    def receive(self, timeout: float) -> str:
        return self.pending.popleft()

    def close(self, force: bool = False) -> None:
        pass
