"""The OpenAPI document is built on first read of api.spec (app.http.api.Api), not as blueprints are registered: it must be
the document flask-smorest builds at registration, and one build however many threads read it first."""

from __future__ import annotations

import threading

from flask_smorest import Api as SmorestApi

from app.http import api as api_module


def test_document_built_on_first_read_is_the_one_built_at_registration(make_app, monkeypatch):
    lazy = make_app().extensions["hirekit_api"]
    assert lazy._undocumented  # nothing built yet
    lazy_document = lazy.spec.to_dict()
    monkeypatch.setattr(api_module.Api, "register_blueprint", SmorestApi.register_blueprint)
    eager = make_app().extensions["hirekit_api"]
    assert not eager._undocumented
    assert lazy_document == eager.spec.to_dict()
    assert list(lazy_document["paths"]) == list(eager.spec.to_dict()["paths"])  # same order too


def test_first_reads_from_many_threads_build_it_once(make_app, client):
    app = make_app()
    api = app.extensions["hirekit_api"]
    documents = []
    threads = [threading.Thread(target=lambda: documents.append(app.test_client().get("/openapi.json").json))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(documents) == 4 and all(document == documents[0] for document in documents)
    tags = [tag["name"] for tag in api.spec.to_dict()["tags"]]
    assert len(tags) == len(set(tags))
    assert documents[0] == client.get("/openapi.json").json
