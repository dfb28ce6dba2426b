"""The embedded search backend: a tantivy index on local disk that answers like Elasticsearch, with nothing to install."""

from plugins.person.backends.embedded.backend import EmbeddedBackend

__all__ = ["EmbeddedBackend"]
