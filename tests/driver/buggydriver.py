"""A buggy server for tests, as a third party's would be: the bundled driver with one registry defect
always on in its code (`python tests/driver/buggydriver.py DEFECT`), declaring no defect switches."""

import sys

from binding import driver as D
from binding.world import Scheduler


class Buggy(D.Driver):
    def __init__(self, defect: str):
        super().__init__(switches=False)
        self.defect = defect

    def _start(self, req):
        out = super()._start(req)
        self.sched = Scheduler(self.sched.cfg, mutant=frozenset([self.defect]))  # the bug: not a switch
        return out


if __name__ == "__main__":
    driver = Buggy(sys.argv[1])
    out, sys.stdout = sys.stdout, sys.stderr
    for line in sys.stdin:
        if line.strip():
            out.write(driver.handle_line(line) + "\n")
            out.flush()
            if driver.stopped:
                break
