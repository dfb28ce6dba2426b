"""Settings of the person family: the search backends, enrichment vendors and their sandbox twins
(app.config reads DEFAULTS)."""

from __future__ import annotations

from app.instance import INSTANCE_DIR

# each setting's comment is its meaning on docs/configuration.md (app.config_docs)
DEFAULTS: dict[str, object] = {
    # --- Person data ---
    "PERSON_RATE_LIMIT": "300/minute",  # requests per key per window on the person routes
    # `embedded` (an index on local disk), `elasticsearch`, `opensearch` or `none` (search answers
    # 503)
    "SEARCH_BACKEND": "embedded",
    "SEARCH_INDEX": str(INSTANCE_DIR / "search" / "person"),  # directory of the embedded index
    "ELASTICSEARCH_URL": "",  # the cluster when SEARCH_BACKEND is `elasticsearch`
    # the alias searched; a replacing load fills a new dated index behind it
    "ELASTICSEARCH_INDEX": "person",
    "ELASTICSEARCH_API_KEY": "",  # Elasticsearch API key (or USERNAME and PASSWORD)
    "ELASTICSEARCH_USERNAME": "",  # Elasticsearch basic-auth user
    "ELASTICSEARCH_PASSWORD": "",  # Elasticsearch basic-auth password
    "ELASTICSEARCH_CA_CERTS": "",  # CA bundle that verifies the cluster's certificate
    "ELASTICSEARCH_TIMEOUT": 10.0,  # seconds per Elasticsearch request
    # the REST API major asked of the cluster: empty, the client's (9, which Elasticsearch 9
    # answers); `8` for an Elasticsearch 8 cluster (Elasticsearch 9 answers 8 too)
    "ELASTICSEARCH_COMPATIBLE_WITH": "",
    # how long Elasticsearch keeps a scroll's point in time between two of its pages (an
    # Elasticsearch time: `5m`, `90s`); a next page after longer, or after a replacing load, is 400
    # and the client starts the scroll again
    "ELASTICSEARCH_SCROLL_KEEP_ALIVE": "5m",
    # the cluster when SEARCH_BACKEND is `opensearch` (https:// for TLS); several nodes
    # comma-separated, so a request to a node that is down is sent to another
    "OPENSEARCH_URL": "",
    # the alias searched; a replacing load fills a new dated index behind it
    "OPENSEARCH_INDEX": "person",
    # OpenSearch basic-auth user (the security plugin's internal users, or a proxy's)
    "OPENSEARCH_USERNAME": "",
    "OPENSEARCH_PASSWORD": "",  # OpenSearch basic-auth password
    # sent as `Authorization: ApiKey <key>` instead of basic auth (API tokens, or a gateway that
    # takes one)
    "OPENSEARCH_API_KEY": "",
    "OPENSEARCH_CA_CERTS": "",  # CA bundle that verifies the cluster's certificate
    # verify the cluster's TLS certificate (off only for a test cluster)
    "OPENSEARCH_VERIFY_CERTS": True,
    "OPENSEARCH_TIMEOUT": 10.0,  # seconds per OpenSearch request
    # how long OpenSearch keeps a scroll's point in time between two of its pages (`5m`, `90s`); a
    # next page after longer, or after a replacing load, is 400 and the client starts the scroll
    # again
    "OPENSEARCH_SCROLL_KEEP_ALIVE": "5m",
    # /readyz fails (503) while the person dataset is empty or down; off, it reports it
    "PERSON_DATASET_REQUIRED": False,
    # seconds one person search may run before it is abandoned with 503
    "PERSON_SEARCH_TIMEOUT": 5.0,
    # threads one embedded search runs on at once (0: one per core, at most 4; 1: one)
    "PERSON_SEARCH_THREADS": 0,
    # profiles an embedded index holds before its searches use several threads
    "PERSON_SEARCH_THREADS_MIN_PROFILES": 500000,
    "SCROLL_TOKEN_TTL": 3600,  # seconds a person scroll token stays valid
    # `local` (matches over the dataset), `http` (an upstream vendor) or `none` (503)
    "ENRICH_VENDOR": "local",
    "ENRICH_URL": "",  # the upstream vendor's base URL when ENRICH_VENDOR is `http`
    "ENRICH_API_KEY": "",  # key sent to the upstream vendor (X-Api-Key)
    "ENRICH_TIMEOUT": 10.0,  # seconds to read the vendor's answer
    "ENRICH_CONNECT_TIMEOUT": 3.05,  # seconds to connect to the vendor
    "ENRICH_RETRIES": 2,  # retries of a vendor call after a timeout, refusal, 429 or 5xx
    "ENRICH_BACKOFF": 0.5,  # first wait before a retry, in seconds, doubling each time
    # longest wait honoured from a vendor's Retry-After, in seconds (a longer one is cut to this)
    "ENRICH_MAX_RETRY_AFTER": 10.0,
    # SEARCH_BACKEND of the sandbox routes (/v1/sandbox, /v2/sandbox)
    "SANDBOX_SEARCH_BACKEND": "embedded",
    # the sandbox's embedded index; empty: a "sandbox" directory beside SEARCH_INDEX
    "SANDBOX_SEARCH_INDEX": "",
    "SANDBOX_ELASTICSEARCH_URL": "",  # the sandbox's cluster
    "SANDBOX_ELASTICSEARCH_INDEX": "person-sandbox",  # the sandbox's alias
    "SANDBOX_OPENSEARCH_URL": "",  # the sandbox's OpenSearch cluster
    "SANDBOX_OPENSEARCH_INDEX": "person-sandbox",  # the sandbox's OpenSearch alias
    "SANDBOX_ENRICH_VENDOR": "local",  # ENRICH_VENDOR of the sandbox routes
    "SANDBOX_ENRICH_URL": "",  # the sandbox upstream; never falls back to ENRICH_URL
    "SANDBOX_ENRICH_API_KEY": "",  # key sent to the sandbox upstream
}
