"""A real OpenSearch node or three-node cluster on loopback, built by Maven from
deploy/opensearch/pom.xml: for tests, the node-loss drill, the side-by-side bench and a developer's
`make opensearch-start`."""

from deploy.opensearch.cluster import LauncherUnavailable, OpenSearchCluster, build, missing_tools

__all__ = ["LauncherUnavailable", "OpenSearchCluster", "build", "missing_tools"]
