"""A throwaway PostgreSQL server from Debian's packages, for the tests and for a person at a shell.

`start(base_dir)` runs Debian's `initdb` into `base_dir/data` and starts `postgres` listening on
127.0.0.1 only (a free port) and on a Unix socket in `base_dir/run`, waits until it accepts connections,
creates the database `claimcheck` and returns a `PgServer` with `.url` (a SQLAlchemy URL) and `.stop()`.
`PgServer.fresh_database()` gives an empty database in a few milliseconds (a copy of an empty template).

PostgreSQL refuses to run as root: when we are root, its binaries run as the OS user `postgres` (via
`runuser`) and `base_dir` is handed to that user. Nothing is downloaded: the binaries come from the
`postgresql` package (`.ci/run` installs it); when they are missing, `PgUnavailable` says so in one line.

    python -m binding.pgserver start DIR [--durable]    # prints the URL; the server keeps running
    python -m binding.pgserver url DIR                  # the URL of a running server
    python -m binding.pgserver stop DIR                 # stops it and removes DIR
"""

from __future__ import annotations

import argparse
import glob
import itertools
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

BIN_GLOB = "/usr/lib/postgresql/*/bin"
BIN_ENV = "CLAIMCHECK_PG_BIN"  # a directory holding initdb, pg_ctl, postgres (overrides the glob)
SUPERUSER = "postgres"
DATABASE = "claimcheck"
TEMPLATE = "claimcheck_empty"
STATE_FILE = "server.json"
START_TIMEOUT_S = 60

# A test server trades durability for speed (a crash of the server loses its data, which a test server
# never keeps); `durable=True` keeps PostgreSQL's defaults.
FAST = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


class PgUnavailable(RuntimeError):
    """PostgreSQL cannot be started here (binaries missing, no `postgres` user, ...): one line."""


def find_bin(pattern: str | None = None) -> Path:
    """The newest Debian PostgreSQL bin directory holding initdb, pg_ctl and postgres."""
    if pattern is None and os.environ.get(BIN_ENV):
        candidates = [os.environ[BIN_ENV]]
        where = f"${BIN_ENV}={os.environ[BIN_ENV]}"
    else:
        pattern = pattern or BIN_GLOB
        candidates = sorted(glob.glob(pattern), key=_version_key, reverse=True)
        where = pattern
    for d in candidates:
        if all(os.access(os.path.join(d, exe), os.X_OK) for exe in ("initdb", "pg_ctl", "postgres")):
            return Path(d)
    raise PgUnavailable(f"no PostgreSQL binaries (initdb, pg_ctl, postgres) in {where}: "
                        "install Debian's package `postgresql` (apt-get install -y postgresql)")


def _version_key(path: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", path)) or (0,)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres() -> list[str]:
    """The command prefix that runs a PostgreSQL binary as a user it accepts."""
    if os.geteuid() != 0:
        return []
    try:
        import pwd
        pwd.getpwnam(SUPERUSER)
    except KeyError:
        raise PgUnavailable(f"running as root and there is no OS user {SUPERUSER!r} to run PostgreSQL as")
    runuser = shutil.which("runuser")
    if runuser is None:
        raise PgUnavailable("running as root and `runuser` is missing (util-linux)")
    return [runuser, "-u", SUPERUSER, "--"]


def _chown(*paths: Path) -> None:
    """Hand paths to the `postgres` user when we are root (PostgreSQL runs as that user then)."""
    if os.geteuid() != 0:
        return
    import pwd
    pw = pwd.getpwnam(SUPERUSER)
    for path in paths:
        os.chown(path, pw.pw_uid, pw.pw_gid)


def _run(cmd: list[str], what: str, timeout: float = START_TIMEOUT_S) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise PgUnavailable(f"{what} did not finish in {timeout:.0f} s")
    if done.returncode != 0:
        tail = " | ".join(line for line in (done.stderr or done.stdout).strip().splitlines()[-3:])
        raise PgUnavailable(f"{what} failed (exit {done.returncode}): {tail}")
    return done.stdout


@dataclass
class PgServer:
    base_dir: Path
    bin_dir: Path
    port: int
    prefix: list[str] = field(default_factory=list)
    _names: itertools.count = field(default_factory=itertools.count, repr=False)

    @property
    def data_dir(self) -> Path:
        return self.base_dir / "data"

    @property
    def socket_dir(self) -> Path:
        return self.base_dir / "run"

    def url_for(self, database: str) -> str:
        return f"postgresql+psycopg2://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    @property
    def url(self) -> str:
        return self.url_for(DATABASE)

    # ------------------------------------------------------------------ databases

    def connect(self, database: str = "postgres"):
        """A psycopg2 connection in autocommit (for CREATE/DROP DATABASE)."""
        import psycopg2
        conn = psycopg2.connect(host="127.0.0.1", port=self.port, user=SUPERUSER, dbname=database)
        conn.autocommit = True
        return conn

    def execute(self, sql: str, database: str = "postgres") -> None:
        conn = self.connect(database)
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
        finally:
            conn.close()

    def create_database(self, name: str, template: str | None = None) -> str:
        _check_name(name)
        sql = f'CREATE DATABASE "{name}"'
        if template:
            # FILE_COPY copies the template's files (fast for a small template; fsync is off)
            sql += f' TEMPLATE "{template}" STRATEGY FILE_COPY'
        self.execute(sql)
        return self.url_for(name)

    def drop_database(self, name: str) -> None:
        _check_name(name)
        self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def fresh_database(self, prefix: str = "t", template: str = TEMPLATE) -> str:
        """A new database, a copy of `template` (by default an empty one): its SQLAlchemy URL."""
        return self.create_database(f"{prefix}_{os.getpid()}_{next(self._names)}", template=template)

    # ------------------------------------------------------------------ lifecycle

    def running(self) -> bool:
        done = subprocess.run([*self.prefix, str(self.bin_dir / "pg_ctl"), "status", "-D", str(self.data_dir)],
                              capture_output=True, text=True)
        return done.returncode == 0

    def stop(self, *, remove: bool = True) -> None:
        """Stop at once (no checkpoint: the data is thrown away) and remove `base_dir`."""
        if self.data_dir.exists():
            subprocess.run([*self.prefix, str(self.bin_dir / "pg_ctl"), "stop", "-D", str(self.data_dir),
                            "-m", "immediate", "-w", "-t", "30"], capture_output=True, text=True)
        if remove:
            shutil.rmtree(self.base_dir, ignore_errors=True)

    def save(self) -> None:
        (self.base_dir / STATE_FILE).write_text(json.dumps({"bin_dir": str(self.bin_dir), "port": self.port}))

    @classmethod
    def load(cls, base_dir: Path) -> "PgServer":
        try:
            state = json.loads((Path(base_dir) / STATE_FILE).read_text())
        except (OSError, ValueError) as exc:
            raise PgUnavailable(f"{base_dir}: no server started there ({exc})")
        return cls(Path(base_dir), Path(state["bin_dir"]), int(state["port"]), _as_postgres())


def _check_name(name: str) -> None:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", name):
        raise ValueError(f"not a plain database name: {name!r}")


def start(base_dir: Path | str, *, bin_dir: Path | str | None = None, durable: bool = False,
          attempts: int = 3) -> PgServer:
    """initdb into `base_dir/data`, start postgres on 127.0.0.1 and a socket in `base_dir/run`, wait until
    it accepts connections, create the database `claimcheck` and the empty template; raise PgUnavailable
    (one line) when any of it fails."""
    bins = find_bin(str(bin_dir)) if bin_dir is not None else find_bin()
    try:
        import psycopg2  # noqa: F401
    except ImportError:
        raise PgUnavailable("the PostgreSQL driver psycopg2 is not installed (pip install psycopg2-binary)")
    prefix = _as_postgres()
    base = Path(base_dir).absolute()
    base.mkdir(parents=True, exist_ok=True)
    if any(base.iterdir()):
        raise PgUnavailable(f"{base} is not empty")
    server = PgServer(base, bins, 0, prefix)
    server.socket_dir.mkdir()
    _chown(base, server.socket_dir)
    os.chmod(base, 0o700)
    if prefix and subprocess.run([*prefix, "test", "-w", str(base)]).returncode != 0:
        raise PgUnavailable(f"the OS user {SUPERUSER!r} cannot reach {base}: every parent directory must be "
                            "searchable by it (use a directory under /tmp)")
    try:
        _run([*prefix, str(bins / "initdb"), "-D", str(server.data_dir), "-U", SUPERUSER, "--auth=trust",
              "-E", "UTF8", "--locale=C", "--no-sync"], "initdb")
        settings = {"listen_addresses": "'127.0.0.1'", "unix_socket_directories": f"'{server.socket_dir}'",
                    "max_connections": "200", "shared_buffers": "32MB", "log_min_messages": "warning",
                    # a per-Session history's commits in the order they became visible (impl/history_sessions.py)
                    "track_commit_timestamp": "on"}
        if not durable:
            settings.update(FAST)
        for attempt in range(attempts):
            server.port = _free_port()
            settings["port"] = str(server.port)
            conf = "".join(f"{k} = {v}\n" for k, v in settings.items())
            (server.data_dir / "postgresql.auto.conf").write_text(conf)
            _chown(server.data_dir / "postgresql.auto.conf")
            try:
                # -w: pg_ctl returns once the server accepts connections (or fails after -t seconds)
                _run([*prefix, str(bins / "pg_ctl"), "start", "-D", str(server.data_dir), "-w",
                      "-t", str(START_TIMEOUT_S), "-l", str(server.base_dir / "postgres.log")], "pg_ctl start",
                     timeout=START_TIMEOUT_S + 10)
                break
            except PgUnavailable:
                if attempt == attempts - 1:
                    raise PgUnavailable(f"postgres did not start: {_log_tail(server)}")
        server.execute(f'CREATE DATABASE "{TEMPLATE}"')
        server.create_database(DATABASE)
        server.save()
    except BaseException:
        server.stop(remove=False)
        raise
    return server


def _log_tail(server: PgServer) -> str:
    try:
        lines = (server.base_dir / "postgres.log").read_text().strip().splitlines()
    except OSError:
        return "no log"
    return " | ".join(lines[-3:]) or "empty log"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m binding.pgserver", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("start", help="initdb and start a server in DIR (must be empty or missing)")
    s.add_argument("dir")
    s.add_argument("--durable", action="store_true", help="keep fsync and synchronous_commit on")
    sub.add_parser("url", help="print the URL of the server in DIR").add_argument("dir")
    sub.add_parser("stop", help="stop the server in DIR and remove DIR").add_argument("dir")
    args = p.parse_args(argv)
    try:
        if args.cmd == "start":
            print(start(Path(args.dir), durable=args.durable).url)
        elif args.cmd == "url":
            print(PgServer.load(Path(args.dir)).url)
        else:
            PgServer.load(Path(args.dir)).stop()
    except PgUnavailable as exc:
        print(f"pgserver: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
