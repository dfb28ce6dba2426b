"""The HTTP enrichment vendor: a PDL-compatible upstream over a pooled requests session, with
retries on 429/5xx honouring Retry-After."""

from __future__ import annotations

import logging
import time

import requests
from requests.adapters import HTTPAdapter

from app.errors import ApiError
from plugins.person.enrich import EnrichVendor, Match, NoMatch

log = logging.getLogger("hirekit.person.enrich")

ENRICH_PATH = "/v5/person/enrich"
IDENTIFY_PATH = "/v5/person/identify"
BULK_PATH = "/v5/person/bulk"
# the seed's names -> the upstream's (PDL) names; anything else is not sent
TO_UPSTREAM = {
    "id": "pdl_id",
    "full_name": "name",
    "first_name": "first_name",
    "last_name": "last_name",
    "middle_name": "middle_name",
    "email": "email",
    "phone_number": "phone",
    "company_name": "company",
    "school": "school",
    "location": "location",
    "profile": "profile",
    "min_likelihood": "min_likelihood",
}
FROM_UPSTREAM = {upstream: ours for ours, upstream in TO_UPSTREAM.items()}


class UpstreamRateLimited(ApiError):
    def __init__(self, retry_after: str | None):
        super().__init__(
            429,
            "The enrichment upstream is rate limiting us; retry later.",
            headers={"Retry-After": retry_after or "60"},
        )


class UpstreamFailed(ApiError):
    def __init__(self, message: str):
        super().__init__(502, f"The enrichment upstream failed: {message}")


class HttpVendor(EnrichVendor):
    """Calls {base_url}/v5/person/enrich and /v5/person/bulk with X-Api-Key."""

    name = "http"

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 10.0,
        connect_timeout: float = 3.05,
        retries: int = 2,
        backoff: float = 0.5,
        max_retry_after: float = 10.0,
    ):
        self.base_url = base_url.rstrip("/")
        self.timeout = (connect_timeout, timeout)
        self.retries = retries
        self.backoff = backoff
        self.max_retry_after = max_retry_after
        self.session = requests.Session()
        self.session.mount("http://", HTTPAdapter(pool_connections=4, pool_maxsize=32))
        self.session.mount("https://", HTTPAdapter(pool_connections=4, pool_maxsize=32))
        self.session.headers.update(
            {"X-Api-Key": api_key, "Accept": "application/json", "User-Agent": "hirekit"}
        )
        self._bulk_supported = True

    @classmethod
    def from_config(cls, config, url: str, api_key: str) -> "HttpVendor":
        return cls(
            url,
            api_key,
            timeout=float(config["ENRICH_TIMEOUT"]),
            connect_timeout=float(config["ENRICH_CONNECT_TIMEOUT"]),
            retries=int(config["ENRICH_RETRIES"]),
            backoff=float(config["ENRICH_BACKOFF"]),
            max_retry_after=float(config["ENRICH_MAX_RETRY_AFTER"]),
        )

    def _send(self, method: str, path: str, **kwargs) -> requests.Response:
        """One call with retries: 429 and 5xx wait (Retry-After, else exponential backoff); timeouts
        and refusals retry too."""
        url = self.base_url + path
        for attempt in range(self.retries + 1):
            last_try = attempt == self.retries
            try:
                response = self.session.request(method, url, timeout=self.timeout, **kwargs)
            except requests.Timeout:
                if last_try:
                    raise UpstreamFailed(f"no answer within {self.timeout[1]:g}s") from None
                self._pause(attempt, None)
                continue
            except requests.RequestException as error:
                if last_try:
                    raise UpstreamFailed(f"not reachable ({type(error).__name__})") from None
                self._pause(attempt, None)
                continue
            if response.status_code == 429 or response.status_code >= 500:
                if last_try:
                    if response.status_code == 429:
                        raise UpstreamRateLimited(response.headers.get("Retry-After"))
                    raise UpstreamFailed(f"it answered {response.status_code}")
                self._pause(attempt, response.headers.get("Retry-After"))
                continue
            return response
        raise AssertionError("unreachable")

    def _pause(self, attempt: int, retry_after: str | None) -> None:
        delay = self.backoff * (2**attempt)
        if retry_after:
            try:
                delay = float(retry_after)
            except ValueError:
                pass
        time.sleep(max(0.0, min(delay, self.max_retry_after)))

    def enrich(self, params: dict) -> Match:
        response = self._send("GET", ENRICH_PATH, params=upstream_params(params))
        return self._answer(response.status_code, _json(response))

    def _answer(self, status: int, body) -> Match:
        if status == 404:
            raise NoMatch()
        if status == 400:
            message = (body.get("error") or {}).get("message") if isinstance(body, dict) else None
            raise ApiError(
                400, f"The enrichment upstream refused the request: {message or 'bad request'}"
            )
        if status in (401, 402, 403):
            raise UpstreamFailed(f"it refused our credentials or plan ({status})")
        if status != 200 or not isinstance(body, dict) or not isinstance(body.get("data"), dict):
            raise UpstreamFailed(f"unexpected answer ({status})")
        matched = [FROM_UPSTREAM.get(name, name) for name in body.get("matched") or []]
        likelihood = body.get("likelihood")
        likelihood = likelihood if isinstance(likelihood, int) and 1 <= likelihood <= 10 else 1
        return Match(body["data"], likelihood, matched, body["data"].get("dataset_version"))

    def identify(self, params: dict, *, limit: int) -> list[Match]:
        """The upstream's identify candidates; its match_score (0-100) read back as a likelihood
        (score / 10, at least 1)."""
        response = self._send("GET", IDENTIFY_PATH, params=upstream_params(params))
        if response.status_code == 404:
            return []
        body = _json(response)
        if (
            response.status_code != 200
            or not isinstance(body, dict)
            or not isinstance(body.get("matches"), list)
        ):
            self._answer(response.status_code, body)  # raises the same errors enrich would
            raise UpstreamFailed(f"unexpected identify answer ({response.status_code})")
        found = []
        for item in body["matches"][:limit]:
            if isinstance(item, dict) and isinstance(item.get("data"), dict):
                score = (
                    item.get("match_score")
                    if isinstance(item.get("match_score"), (int, float))
                    else 10
                )
                matched = [FROM_UPSTREAM.get(name, name) for name in item.get("matched_on") or []]
                found.append(
                    Match(
                        item["data"],
                        max(1, min(10, round(score / 10))),
                        matched,
                        item["data"].get("dataset_version"),
                    )
                )
        return found

    def enrich_many(self, params_list: list[dict]) -> list[Match | ApiError]:
        """The upstream's bulk endpoint when it has one (else one call each); answers in request
        order."""
        if not self._bulk_supported:
            return super().enrich_many(params_list)
        body = {"requests": [{"params": upstream_params(p)} for p in params_list]}
        try:
            response = self._send("POST", BULK_PATH, json=body)
        except ApiError as error:
            return [error] * len(params_list)
        if response.status_code in (404, 405):
            log.info("the enrichment upstream has no bulk endpoint; enriching one by one")
            self._bulk_supported = False
            return super().enrich_many(params_list)
        items = _json(response)
        if (
            response.status_code != 200
            or not isinstance(items, list)
            or len(items) != len(params_list)
        ):
            return [UpstreamFailed(f"unexpected bulk answer ({response.status_code})")] * len(
                params_list
            )
        answers: list[Match | ApiError] = []
        for item in items:
            try:
                status = item.get("status", 200) if isinstance(item, dict) else 0
                answers.append(self._answer(status, item))
            except ApiError as error:
                answers.append(error)
        return answers

    def by_ids(self, ids: list[str]) -> dict[str, Match]:
        found = {}
        for person_id, answer in zip(ids, self.enrich_many([{"id": i} for i in ids])):
            if isinstance(answer, Match):
                found[person_id] = answer
        return found


def upstream_params(params: dict) -> dict:
    """Our validated inputs under the upstream's names; with an id, only the id (the upstream
    ignores the rest anyway)."""
    if params.get("id"):
        return {
            "pdl_id": params["id"],
            **({"min_likelihood": params["min_likelihood"]} if "min_likelihood" in params else {}),
        }
    sent = {
        TO_UPSTREAM[key]: value
        for key, value in params.items()
        if key in TO_UPSTREAM and value not in (None, "", [])
    }
    if params.get("include_if_matched"):
        sent["include_if_matched"] = "true"
    return sent


def _json(response: requests.Response):
    try:
        return response.json()
    except ValueError:
        return None
