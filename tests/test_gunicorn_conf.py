"""deploy/gunicorn.conf.py: the hooks a worker runs once it has loaded the app."""

import gc
import runpy
from pathlib import Path

CONF = Path(__file__).resolve().parent.parent / "deploy" / "gunicorn.conf.py"


def test_a_worker_freezes_the_loaded_app_out_of_full_collections():
    settings = runpy.run_path(str(CONF))
    gc.unfreeze()
    try:
        settings["post_worker_init"](worker=None)
        assert gc.get_freeze_count() > 10_000  # the test process's modules, as a worker's app would be
        assert gc.get_count()[0] < 100  # collected first, so nothing about to be garbage is frozen
    finally:
        gc.unfreeze()
