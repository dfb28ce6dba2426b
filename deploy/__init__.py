"""Deployment helpers: what starts the services Hirekit talks to on a developer's machine, in tests
and in CI."""
