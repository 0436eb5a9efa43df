"""The bundled server, impl/, behind claimcheck's port (harness.port): everything that adapts impl/ to
claimcheck, laid out as examples/typescript/src/ is beside its server. impl/ is the server only; harness/
imports nothing of impl/ nor of this package, and only the command line (harness.cli, the pytest plugin)
chooses it as the default server.

- world.py: the world (nodes, recovery workers, one clock, one provider on one database) and its
  deterministic Scheduler, the port's World; actions.py: the action table it applies twin actions with;
- mapping.py: the database and the actors' memory read back as a twin state; reads.py: that read on a
  connection of its own;
- server.py: the port's Server in this process; savepoints.py: save and restore (the exhaustive walk);
  databases.py: a lockstep campaign's database, seeded once and restored per run;
- driver.py: the same world behind the driver protocol (`python -m binding.driver`, docs/driver.md);
- history.py: the commit history (impl/history.py) as history-format lines for `claimcheck validate`;
- stress/: the stress run's node process (`claimcheck stress`), its database and the history's vocabulary;
- pgserver.py: a throwaway PostgreSQL server for the tests and `--db` (`python -m binding.pgserver`).
"""
