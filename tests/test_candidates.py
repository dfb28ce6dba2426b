"""The candidates family: create and update bodies, E.164 phones, uniqueness, updates, filters and
tenant scoping."""

import pytest

from tests.factories import candidate_body, create_candidate

pytestmark = pytest.mark.plugins("jobs", "candidates")

REQUIRED_ON_CREATE = ["first_name", "email", "phone_no", "source", "source_id"]
REQUIRED_ON_UPDATE = ["first_name", "email", "phone_no", "source", "source_id"]


def update_body(candidate: dict, **overrides) -> dict:
    body = {name: candidate[name] for name in REQUIRED_ON_UPDATE}
    body.update(overrides)
    return body


def test_create_then_read_returns_the_candidate(client, tenant_a):
    candidate = create_candidate(client, tenant_a, first_name="Ana", city="Austin")
    got = client.get(f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers)
    assert got.status_code == 200 and got.json == candidate
    assert (
        candidate["first_name"] == "Ana"
        and candidate["city"] == "Austin"
        and candidate["resume"] is None
    )
    assert candidate["created_at"].endswith("Z")


@pytest.mark.parametrize("missing", REQUIRED_ON_CREATE)
def test_create_without_a_required_field_is_422_naming_it(client, tenant_a, missing):
    body = candidate_body()
    del body[missing]
    response = client.post("/v1/candidates", json=body, headers=tenant_a.headers)
    assert response.status_code == 422
    assert list(response.json["error"]["fields"]) == [missing]


def test_phone_is_stored_in_e164(client, tenant_a):
    candidate = create_candidate(client, tenant_a, phone_no="+1 415 555 2671")
    assert candidate["phone_no"] == "+14155552671"
    assert (
        create_candidate(client, tenant_a, phone_no="+44 20 7946 0958")["phone_no"]
        == "+442079460958"
    )


@pytest.mark.parametrize(
    "phone, says",
    [
        ("415 555 2671", "country code"),
        ("(415) 555-2671", "country code"),
        ("+1 555", "Not a valid phone number"),
        ("call me maybe", "country code"),
    ],
)
def test_phone_without_country_code_or_invalid_is_422_saying_why(client, tenant_a, phone, says):
    response = client.post(
        "/v1/candidates", json=candidate_body(phone_no=phone), headers=tenant_a.headers
    )
    assert response.status_code == 422
    assert says in response.json["error"]["fields"]["phone_no"][0]


def test_email_is_validated(client, tenant_a):
    response = client.post(
        "/v1/candidates", json=candidate_body(email="not-an-email"), headers=tenant_a.headers
    )
    assert response.status_code == 422 and "email" in response.json["error"]["fields"]


def test_unknown_field_on_create_is_422(client, tenant_a):
    response = client.post(
        "/v1/candidates", json=candidate_body(favourite_colour="teal"), headers=tenant_a.headers
    )
    assert response.status_code == 422 and "favourite_colour" in response.json["error"]["fields"]


def test_duplicate_source_id_is_409_with_existing_id(client, tenant_a, tenant_b):
    candidate = create_candidate(client, tenant_a, source_id="ats-c-1")
    again = client.post(
        "/v1/candidates", json=candidate_body(source_id="ats-c-1"), headers=tenant_a.headers
    )
    assert again.status_code == 409 and again.json["error"]["existing_id"] == candidate["id"]
    assert (
        client.post(
            "/v1/candidates", json=candidate_body(source_id="ats-c-1"), headers=tenant_b.headers
        ).status_code
        == 201
    )


def test_update_stores_recruiter_fields_and_status_and_keeps_unsent_ones(client, tenant_a):
    candidate = create_candidate(client, tenant_a, city="Austin", last_name="Doe")
    response = client.patch(
        f"/v1/candidates/{candidate['id']}",
        headers=tenant_a.headers,
        json=update_body(
            candidate,
            first_name="Janet",
            phone_no="+1 (415) 555-2672",
            recruiter_name="Rita",
            recruiter_email="rita@example.com",
            recruiter_work_phone_no="+14155550100",
            status="screening",
        ),
    )
    assert response.status_code == 200, response.json
    updated = response.json
    assert updated["first_name"] == "Janet" and updated["phone_no"] == "+14155552672"
    assert (updated["recruiter_name"], updated["recruiter_email"], updated["status"]) == (
        "Rita",
        "rita@example.com",
        "screening",
    )
    assert updated["city"] == "Austin" and updated["last_name"] == "Doe"
    assert client.get(f"/v1/candidates/{candidate['id']}", headers=tenant_a.headers).json == updated


@pytest.mark.parametrize("missing", REQUIRED_ON_UPDATE)
def test_update_without_a_required_field_is_422_naming_it(client, tenant_a, missing):
    candidate = create_candidate(client, tenant_a)
    body = update_body(candidate)
    del body[missing]
    response = client.patch(
        f"/v1/candidates/{candidate['id']}", json=body, headers=tenant_a.headers
    )
    assert response.status_code == 422 and list(response.json["error"]["fields"]) == [missing]


def test_update_to_a_source_id_in_use_is_409(client, tenant_a):
    first = create_candidate(client, tenant_a)
    second = create_candidate(client, tenant_a)
    response = client.patch(
        f"/v1/candidates/{second['id']}",
        json=update_body(second, source_id=first["source_id"]),
        headers=tenant_a.headers,
    )
    assert response.status_code == 409 and response.json["error"]["existing_id"] == first["id"]


def test_list_filters_narrow_by_source_id_and_email(client, tenant_a):
    ana = create_candidate(client, tenant_a, email="Ana@Example.com", source_id="s-ana")
    create_candidate(client, tenant_a, email="bo@example.com", source_id="s-bo")
    every = client.get("/v1/candidates?page=1&size=10", headers=tenant_a.headers).json
    assert every["total"] == 2
    by_source = client.get(
        "/v1/candidates?page=1&size=10&source_id=s-ana", headers=tenant_a.headers
    ).json
    assert [c["id"] for c in by_source["data"]] == [ana["id"]]
    by_email = client.get(
        "/v1/candidates?page=1&size=10&email=ana@example.COM", headers=tenant_a.headers
    ).json
    assert [c["id"] for c in by_email["data"]] == [ana["id"]]
    assert (
        client.get(
            "/v1/candidates?page=1&size=10&email=nobody@example.com", headers=tenant_a.headers
        ).json["total"]
        == 0
    )


@pytest.mark.parametrize("query", ["", "page=1", "size=10", "page=0&size=10", "page=1&size=101"])
def test_list_needs_page_and_size_in_bounds(client, tenant_a, query):
    assert client.get(f"/v1/candidates?{query}", headers=tenant_a.headers).status_code == 422


def test_other_tenants_candidates_are_invisible(client, tenant_a, tenant_b):
    candidate = create_candidate(client, tenant_a)
    assert (
        client.get(f"/v1/candidates/{candidate['id']}", headers=tenant_b.headers).status_code == 404
    )
    patched = client.patch(
        f"/v1/candidates/{candidate['id']}",
        json=update_body(candidate, first_name="X"),
        headers=tenant_b.headers,
    )
    assert patched.status_code == 404
    assert client.get("/v1/candidates?page=1&size=10", headers=tenant_b.headers).json["total"] == 0
    assert client.get("/v1/candidates?page=1&size=10").status_code == 401
