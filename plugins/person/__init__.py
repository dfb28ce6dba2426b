"""The person family: DSL search over an embedded index or Elasticsearch, enrichment from a local
matcher or an HTTP vendor, sandbox."""

from app.plugins import Plugin
from plugins.person import datasets
from plugins.person.cli import person_cli
from plugins.person.routes import BLUEPRINTS
from plugins.person.suppression import PersonSuppression


def init_app(app) -> None:
    """Build both sides' backends and vendors once, and let /readyz report the search backend."""
    datasets.init_app(app)
    readiness = app.extensions.setdefault("hirekit_readiness", [])
    readiness.append(("search", lambda: datasets.check_ready(app)))
    from app.cli import add_demo_step
    from plugins.person.demo import load_demo_datasets

    add_demo_step(app, load_demo_datasets)


PLUGIN = Plugin(
    name="person",
    blueprints=BLUEPRINTS,
    models=(PersonSuppression,),
    rate_limit="PERSON_RATE_LIMIT",
    init_app=init_app,
    cli=(person_cli,),
)
