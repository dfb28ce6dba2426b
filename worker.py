"""RQ worker entry: `python worker.py [queues...]`, the same command as `flask --app wsgi worker`
and the installed `hirekit-worker` (app/background/worker.py holds it, app/server/console_scripts.py
builds the app for it)."""

from app.server.console_scripts import hirekit_worker

if __name__ == "__main__":
    hirekit_worker()
