"""A real Elasticsearch 8 node or three-node cluster on loopback, built by Maven from
deploy/elasticsearch/pom.xml: for the conformance suite and a developer's
`make elasticsearch-start`. The cluster code is deploy/opensearch's, with this launcher."""

from pathlib import Path

from deploy.opensearch.cluster import Launcher, LauncherUnavailable, OpenSearchCluster, build
from deploy.opensearch.cluster import missing_tools

ELASTICSEARCH = Launcher(
    "Elasticsearch", Path(__file__).resolve().parent, "io.hirekit.elasticsearch.LoopbackNode"
)


class ElasticsearchCluster(OpenSearchCluster):
    """OpenSearchCluster's nodes, JVMs and health checks, each node an Elasticsearch 8 one."""

    launcher = ELASTICSEARCH


__all__ = ["ELASTICSEARCH", "ElasticsearchCluster", "LauncherUnavailable", "build", "missing_tools"]
