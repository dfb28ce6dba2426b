"""The embedded search backend: a tantivy index on local disk that answers like Elasticsearch, with
nothing to install."""

# Layers, each importing only from those before it: layout (fields, documents) <- query (DSL ->
# tantivy) <- ranking (paging strategies) <- sort (several sort keys) <- build (parallel bulk load)
# <- backend (EmbeddedBackend and its writer). See reference/embedded-search.md for the measurements
# behind the layout.

from plugins.person.backends.embedded.backend import EmbeddedBackend

__all__ = ["EmbeddedBackend"]
