"""`python -m deploy.elasticsearch start|stop|status|build`: a real Elasticsearch 8 node (or three)
on loopback for a developer; the commands are deploy.opensearch's."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from deploy.elasticsearch import ElasticsearchCluster
from deploy.opensearch.__main__ import Commands, main

ELASTICSEARCH = Commands(
    "deploy.elasticsearch",
    ElasticsearchCluster,
    Path(os.environ.get("HIREKIT_ELASTICSEARCH_DIR", "instance/elasticsearch")),
    "elasticsearch",
    "HIREKIT_ELASTICSEARCH_COMPATIBLE_WITH=8",
)

if __name__ == "__main__":
    sys.exit(main(commands=ELASTICSEARCH))
