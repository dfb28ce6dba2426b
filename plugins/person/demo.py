"""`make run`'s person step: generate and load the sample and sandbox datasets once, so search works
on a fresh machine."""

from __future__ import annotations

import os

import click
from flask import current_app

from plugins.person import datasets
from plugins.person.backends import DatasetUnavailable
from plugins.person.cli import write_sample
from plugins.person.loader import load_file

DEMO_DATASETS = (  # (sandbox?, profiles, seed): different seeds give the sandbox its own people
    (False, 10_000, 1),
    (True, 1_000, 2),
)


def _loaded_count(backend) -> int:
    try:
        return backend.dataset_info().get("count") or 0
    except DatasetUnavailable:
        return 0


def load_demo_datasets() -> None:
    """Generate and load each demo dataset whose backend is empty; leave loaded data alone."""
    for sandbox, count, seed in DEMO_DATASETS:
        backend = datasets.build_backend(current_app.config, sandbox)
        side = "sandbox" if sandbox else "production"
        if backend is None or _loaded_count(backend):
            continue
        path = os.path.join(current_app.config["INSTANCE_DIR"], f"person-{side}-sample.jsonl")
        if not os.path.exists(path):
            write_sample(path, count, seed)
        report = load_file(backend, path, replace=True)
        click.echo(f"loaded {report.loaded} sample profiles into the {side} person dataset")
