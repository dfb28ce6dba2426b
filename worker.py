"""RQ worker entry: `python worker.py [queues...]`, the same command as `flask --app wsgi worker` and the installed
`hirekit-worker` (app/worker.py holds it)."""

from app.worker import main

if __name__ == "__main__":
    main()
