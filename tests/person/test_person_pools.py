"""A load's or a sample's process pool ends when it is terminated, even in a process whose SIGTERM
handler only notes the signal (an RQ worker's warm shutdown), which its children inherit
(plugins/person/pools.py)."""

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
ready = None

def start(word):
    global ready
    ready = word

def work(number):
    return abs(number), ready

with fork_pool(2, initializer=start, initargs=("ready",)) as pool:  # __exit__ terminates the pool
    answers = pool.map(work, range(-10, 10))
print(sum(n for n, _ in answers), *{word for _, word in answers}, signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL)
"""  # noqa: E501


def test_a_pool_ends_when_terminated_under_a_sigterm_handler_that_only_notes_it():
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    # the work done, in children the initializer ran in, and the parent's own handler kept
    assert done.stdout.split() == ["100", "ready", "True"]
