"""The driver protocol's line transports: a driver command's pipes (`Process`), or a driver object in this
process (`InProcess`). Both `send` one line and `receive` the next within a timeout; how the conversation
goes is harness.driver.client's."""

from __future__ import annotations

import os
import select
import shlex
import subprocess
import threading
import time
from collections import deque


class Process:
    """A driver command's stdin and stdout as line transport; its stderr kept for messages. Replies are read
    in the caller's thread (select and os.read on the pipe): a request's round trip wakes no other thread,
    which on the exhaustive walk's few-millisecond edges is a visible share of claimcheck's time."""

    def __init__(self, argv: list[str]):
        """Raises OSError (no such command, no permission) or ValueError (a NUL byte in it)."""
        self.label = shlex.join(argv)
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     bufsize=0)
        self.fd = self.proc.stdout.fileno()
        self.buffer = b""  # read from stdout, not yet a whole line
        self.ended = False  # stdout reached its end
        self.stderr: deque[str] = deque(maxlen=5)
        self.stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self.stderr_reader.start()

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", "backslashreplace").rstrip("\n"))

    def send(self, line: str) -> None:
        try:
            data = memoryview((line + "\n").encode("utf-8"))
            while data:
                data = data[self.proc.stdin.write(data):]
        except (BrokenPipeError, OSError, ValueError):
            pass  # the reader sees the end of output and says how the driver ended

    def receive(self, timeout: float) -> str:
        """The next line; raises TimeoutError, or EOFError naming how the driver ended."""
        deadline = time.monotonic() + timeout
        while (end := self.buffer.find(b"\n")) < 0:
            if self.ended:
                self._ended()
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                self.close(force=True)
                raise TimeoutError(f"no reply within {timeout:g} s (the driver was stopped)")
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.ended = True
            self.buffer += chunk
        line, self.buffer = self.buffer[:end + 1], self.buffer[end + 1:]
        return line.decode("utf-8", "backslashreplace")

    def _ended(self):
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        self.stderr_reader.join(timeout=1)  # its last lines, for the message
        how = f"exited with code {code}" if code is not None else "closed its output"
        tail = "; its stderr ends: " + " | ".join(self.stderr) if self.stderr else ""
        raise EOFError(f"the driver {how} without replying{tail}")

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
