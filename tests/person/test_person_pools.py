"""A load's or a sample's process pool ends when it is terminated, even in a process whose SIGTERM handler only notes
the signal (an RQ worker's warm shutdown), which its children inherit (plugins/person/pools.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import signal
from plugins.person.pools import fork_pool

noted = []
signal.signal(signal.SIGTERM, lambda *_: noted.append(1))  # a warm shutdown: note the signal, stop later

def started(word):
    print(word, flush=True)

with fork_pool(2, initializer=started, initargs=("child started",)) as pool:  # __exit__ terminates the pool
    print(sum(pool.map(abs, range(-10, 10))))
print("terminated", signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL)
"""


def test_a_pool_ends_when_terminated_under_a_sigterm_handler_that_only_notes_it():
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines.count("child started") == 2  # the initializer still runs in each child
    assert lines[-2:] == ["100", "terminated True"]  # and the parent keeps its own handler
