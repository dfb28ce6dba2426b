"""A background load really runs at idle CPU priority, and so do the threads and processes it starts
afterwards."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import multiprocessing, os, threading
from plugins.person.priority import run_in_background

before = (os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0))
said = run_in_background()
seen = {}
thread = threading.Thread(target=lambda: seen.update(thread=os.sched_getscheduler(0)))
thread.start(); thread.join()
with multiprocessing.get_context("fork").Pool(1) as pool:
    child = pool.apply(os.sched_getscheduler, (0,))
print(before[0], before[1], os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0), seen["thread"], child, said, sep="|")
"""  # noqa: E501


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux's")
def test_a_background_load_and_what_it_starts_run_at_idle_priority():
    out = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    policy_before, nice_before, policy, nice, thread_policy, child_policy, said = out.strip().split(
        "|"
    )
    assert int(policy_before) == os.SCHED_OTHER
    assert (int(policy), int(thread_policy), int(child_policy)) == (os.SCHED_IDLE,) * 3
    assert int(nice) == int(nice_before) + 10
    assert said == "idle CPU priority (SCHED_IDLE)"
