"""Walking a search to its end, by scroll token or by page: the person tests that check paging share
these."""

from __future__ import annotations


def walk_scroll(client, headers, body, path="/v1/person/search", max_pages=50):
    """(ids in order, pages read, the last answer) of a scroll from `body` until no token is
    answered."""
    ids, token, pages = [], None, 0
    while True:
        response = client.post(
            path, json={**body, **({"scroll_token": token} if token else {})}, headers=headers
        )
        assert response.status_code == 200, response.json
        ids += [hit["id"] for hit in response.json["data"]]
        pages += 1
        token = response.json.get("scroll_token")
        if token is None:
            return ids, pages, response.json
        assert pages < max_pages


def walk_pages(client, headers, body):
    """(ids in order, the last answer) of /v2/person/search/page from page 1 to total_pages."""
    ids, page = [], 1
    while True:
        response = client.post(
            "/v2/person/search/page", json={**body, "page": page}, headers=headers
        )
        assert response.status_code == 200, response.json
        ids += [hit["id"] for hit in response.json["data"]]
        if page >= response.json["total_pages"]:
            return ids, response.json
        page += 1
