"""Retry-safe writes: an `Idempotency-Key` on a /v1 POST, PUT, PATCH or DELETE that changes state
(or an MCP write tool's `idempotency_key`) runs the request once per tenant and key, and replays its
stored answer to every retry (Stripe's semantics).

How it works, and why:

- Keys apply to writes that change state only: creates, updates, upserts, deletes and actions
  (instant call, generate, webhook test, replay, erase: a retried DELETE replays its 204 instead of
  answering 404 for what it removed). A blueprint whose routes only read declares it
  (`app.http.api.Blueprint(..., read_only=True)`: person search, enrich, bulk, identify, which are
  POSTs because their queries are bodies), and its requests ignore the header: nothing is claimed,
  stored or replayed, so a query cannot fill the table with answers.

- A key is claimed in its own short transaction before the view runs (`claim`): one row per (tenant,
  key) in `idempotency_keys`, inserted if missing and then read locked (SQLite's transactions take
  the write lock up front; PostgreSQL locks the row), so two concurrent requests with one key cannot
  both run. The claim carries a random token: the request whose token the row holds runs; any other
  request with the same key is answered from the row.
- The row remembers the request's fingerprint (sha256 of the method, the path with its query, and
  the body bytes). A request with the same key but another fingerprint is 422: the key was used for
  another request.
- While the first request runs the row is in flight: a duplicate is 409 (retryable, `Retry-After:
  1`). A claim held longer than IDEMPOTENCY_LOCK_SECONDS belongs to a process that died mid-request
  and is taken over by the next retry, so a crash never blocks a key for its whole retention.
- When the view has answered, the answer (status, body bytes, Content-Type and Location) is stored
  and the row is done; every later request with the same key and fingerprint gets those bytes again
  with `Idempotent-Replayed: true` and runs nothing: no record, call, event or webhook delivery is
  made twice. A 5xx or 429 answer is not stored: the claim is released and the client may retry.
- A stored answer is at most IDEMPOTENCY_MAX_STORED_BYTES (64 KiB) of body. A larger answer is not
  kept, but the key still guards the write: a retry runs nothing and gets the original status, its
  Location if it had one, `Idempotent-Replayed: true`, `Idempotent-Answer-Omitted: too-large`, and a
  small JSON note in place of the body (`status`, `replayed`, `answer_omitted`, the record's `id`
  when the answer was a record, `message`), so the client reads the record by its id. An MCP tool's
  retry gets that note as its result (or, for a failure, its message).
- The answer is stored after the view's own transactions committed, not inside them: views open
  their transactions at different depths (services, events), and holding SQLite's write lock for a
  whole request would serialize every writer. The window between the view's commit and the stored
  answer is a crash of the process itself; a retry then runs after the lock expires, as it would
  without a key.
- Keys expire IDEMPOTENCY_TTL seconds (24 h) after their first use; the worker purges them
  (`purge_expired`, a periodic pass on the default queue every IDEMPOTENCY_PURGE_INTERVAL seconds),
  and an expired key found before then is reused.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re
import uuid
from dataclasses import dataclass
from typing import Callable

import orjson
import peewee as pw
from flask import Response, after_this_request, current_app, g, request

from app.background import periodic
from app.data import tombstones
from app.data.db import BaseModel, JSONField, database, utcnow
from app.errors import ApiError, ValidationFailed, error_detail
from app.data.tenancy import Tenant

log = logging.getLogger("hirekit.idempotency")

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255
# printable ASCII, no blank ends
PRINTABLE_KEY = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
API_PREFIX = "/v1/"
STORED_HEADERS = ("Content-Type", "Location")
OMITTED_HEADER = "Idempotent-Answer-Omitted"
OMITTED_TOO_LARGE = "too-large"
OMITTED_ERASED = "erased"
JSON_TYPE = "application/json"
IN_FLIGHT, DONE = "in_flight", "done"
PURGE_QUEUE = "default"
PURGE_JOB_ID = "hirekit-idempotency-purge"
# between the clocks of the servers that claim keys and erase records
CLOCK_SKEW = dt.timedelta(minutes=1)


class IdempotencyKey(BaseModel):
    """One use of an Idempotency-Key by a tenant: the request's fingerprint, then the answer it
    got."""

    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id")
    key = pw.CharField(max_length=MAX_KEY_LENGTH)
    fingerprint = pw.CharField(max_length=64)
    # the token of the request running (or that ran) under this key
    claim = pw.CharField(max_length=32)
    state = pw.CharField(max_length=16, default=IN_FLIGHT)
    # an in-flight claim older than this was left by a dead process
    locked_until = pw.DateTimeField()
    status = pw.IntegerField(null=True)
    body = pw.BlobField(null=True)
    headers = JSONField(null=True)
    created_at = pw.DateTimeField(default=utcnow)
    expires_at = pw.DateTimeField(index=True)

    class Meta:
        table_name = "idempotency_keys"
        indexes = ((("tenant", "key"), True),)


class IdempotencyRecordName(BaseModel):
    """A record id a stored answer names (every UUID in its body), so an erasure finds the answers
    naming its records by this index instead of reading every stored answer of the tenant."""

    answer = pw.ForeignKeyField(
        IdempotencyKey, on_delete="CASCADE", column_name="idempotency_key_id"
    )
    tenant = pw.ForeignKeyField(Tenant, on_delete="CASCADE", column_name="tenant_id")
    record_id = pw.CharField(max_length=36)

    class Meta:
        table_name = "idempotency_record_names"
        indexes = ((("tenant", "record_id"), False),)


MODELS = (IdempotencyKey, IdempotencyRecordName)
RECORD_ID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def named_records(body: bytes) -> set[str]:
    """The record ids (UUIDs, as the API writes them) a stored body names."""
    return {found.decode() for found in RECORD_ID.findall(body)}


def index_names(tenant_id: str, answer_id: int, body: bytes) -> None:
    """Keep the record ids the stored answer `answer_id` names (replacing what it named before)."""
    IdempotencyRecordName.delete().where(IdempotencyRecordName.answer == answer_id).execute()
    rows = [
        {"answer": answer_id, "tenant": tenant_id, "record_id": name}
        for name in sorted(named_records(body))
    ]
    for start in range(0, len(rows), 500):
        IdempotencyRecordName.insert_many(rows[start : start + 500]).execute()


@dataclass(frozen=True)
class StoredAnswer:
    status: int
    body: bytes
    headers: dict


def valid_key(value: str) -> str:
    """The key as sent, or a 422 naming the header when it is empty, longer than 255 or not
    printable ASCII."""
    if not value or len(value) > MAX_KEY_LENGTH or not PRINTABLE_KEY.fullmatch(value):
        raise ValidationFailed(
            {HEADER: [f"Must be 1-{MAX_KEY_LENGTH} printable ASCII characters."]}
        )
    return value


def fingerprint(*parts: bytes | str) -> str:
    """sha256 over the parts, each length-prefixed so that no two different requests share one."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(b"%d:" % len(data))
        digest.update(data)
    return digest.hexdigest()


def claim(
    tenant_id: str, key: str, request_fingerprint: str
) -> tuple[str | None, StoredAnswer | None]:
    """(token, None) when this request runs under the key; (None, answer) when the stored answer
    replays; ApiError 422 for a key used with another request, 409 while another request with it
    runs."""
    now = utcnow()
    token = uuid.uuid4().hex
    settings = current_app.config
    lock_until = now + dt.timedelta(seconds=float(settings["IDEMPOTENCY_LOCK_SECONDS"]))
    fresh = {
        "fingerprint": request_fingerprint,
        "claim": token,
        "state": IN_FLIGHT,
        "locked_until": lock_until,
        "status": None,
        "body": None,
        "headers": None,
        "created_at": now,
        "expires_at": now + dt.timedelta(seconds=float(settings["IDEMPOTENCY_TTL"])),
    }
    scope = (IdempotencyKey.tenant == tenant_id) & (IdempotencyKey.key == key)
    with database.atomic():
        IdempotencyKey.insert(tenant=tenant_id, key=key, **fresh).on_conflict_ignore().execute()
        query = IdempotencyKey.select().where(scope)
        row = (query.for_update() if database.for_update else query).get()
        if row.claim == token:
            return token, None
        if row.expires_at <= now or (row.state == IN_FLIGHT and row.locked_until <= now):
            # expired, or left in flight by a dead process
            IdempotencyKey.update(**fresh).where(scope).execute()
            IdempotencyRecordName.delete().where(IdempotencyRecordName.answer == row.id).execute()
            return token, None
        if row.fingerprint != request_fingerprint:
            raise ApiError(
                422,
                f"The {HEADER} {key!r} was already used for another request (another method, path "
                "or "
                "body); use a new key for a new request.",
                fields={HEADER: ["Used for another request."]},
            )
        if row.state == IN_FLIGHT:
            raise ApiError(
                409,
                f"A request with the {HEADER} {key!r} is still being processed; retry shortly.",
                headers={"Retry-After": "1"},
            )
        return None, StoredAnswer(row.status, bytes(row.body or b""), dict(row.headers or {}))


def store(
    tenant_id: str,
    key: str,
    token: str,
    status: int,
    body: bytes,
    headers: dict,
    *,
    max_bytes: int | None = None,
) -> None:
    """Keep the answer of the request holding the claim (past IDEMPOTENCY_MAX_STORED_BYTES, or the
    view's own `max_bytes` when larger, a note in its place); a 5xx or 429 answer releases the claim
    instead."""
    mine = (
        (IdempotencyKey.tenant == tenant_id)
        & (IdempotencyKey.key == key)
        & (IdempotencyKey.claim == token)
    )
    limit = max(int(current_app.config["IDEMPOTENCY_MAX_STORED_BYTES"]), max_bytes or 0)
    if kept(status) and len(body) > limit:
        body, headers = omitted_answer(status, body, limit, headers)
    with database.atomic():
        if not kept(status):
            IdempotencyKey.delete().where(mine).execute()
            return
        stored = (
            IdempotencyKey.update(state=DONE, status=status, body=body, headers=headers)
            .where(mine)
            .execute()
        )
        # after the row is locked (an erasure locks the rows in flight): see erase_answers
        if stored and body:
            row = (
                IdempotencyKey.select(IdempotencyKey.id, IdempotencyKey.created_at)
                .where(mine)
                .get()
            )
            erased = [
                record_id
                for record_id in tombstones.buried_since(tenant_id, row.created_at - CLOCK_SKEW)
                if record_id.encode() in body
            ]
            if erased:
                body, headers = erased_answer(status, body, headers, erased)
                IdempotencyKey.update(body=body, headers=headers).where(mine).execute()
            index_names(tenant_id, row.id, body)


def kept(status: int) -> bool:
    """Whether an answer is stored for replay: not a 5xx or a 429, after which the same request may
    run again."""
    return status < 500 and status != 429


def omitted_answer(status: int, body: bytes, limit: int, headers: dict) -> tuple[bytes, dict]:
    """What is kept of an answer too large to store: a small JSON note (with the record's id when
    the answer was a record), and the headers but its Content-Type."""
    note: dict = {"status": status, "replayed": True, "answer_omitted": OMITTED_TOO_LARGE}
    record_id = answered_id(body)
    if record_id is not None:
        note["id"] = record_id
    note["message"] = (
        f"This request already ran and answered {status}; its answer ({len(body):,} bytes) was "
        "larger than "
        f"the {limit:,} bytes kept per {HEADER}, so it is not replayed and nothing was run again. "
        "Read "
        "the record by its id (or Location) instead."
    )
    kept = {name: value for name, value in headers.items() if name != "Content-Type"}
    return orjson.dumps(note), {
        **kept,
        "Content-Type": JSON_TYPE,
        OMITTED_HEADER: OMITTED_TOO_LARGE,
    }


def erase_answers(tenant_id: str, record_ids) -> int:
    """Erasure (inside its transaction): every stored answer of the tenant that names one of these
    records (its id in the body) no longer replays what it answered, and a retry of the original
    request still runs nothing (the erased record is not made again). A batch answer keeps every
    other item and loses only what the items naming a record held beyond their status, source id and
    id; any other answer is replaced by a note (erased_answer). Answers how many answers were
    changed.

    The tenant's requests still in flight are locked first: a request whose view committed before
    the erasure locked its subject stores its answer either before this reads the answers (and is
    changed here) or after the erasure commits (and `store` then finds the records' tombstones and
    keeps the note instead)."""
    needles = [str(record_id) for record_id in record_ids]
    if not needles:
        return 0
    in_flight = IdempotencyKey.select(IdempotencyKey.id).where(
        (IdempotencyKey.tenant == tenant_id) & (IdempotencyKey.state == IN_FLIGHT)
    )
    if database.for_update:
        list(in_flight.for_update())
    naming = IdempotencyRecordName.select(IdempotencyRecordName.answer).where(
        (IdempotencyRecordName.tenant == tenant_id) & IdempotencyRecordName.record_id.in_(needles)
    )
    replaced = 0
    for row in IdempotencyKey.select().where(
        (IdempotencyKey.tenant == tenant_id)
        & (IdempotencyKey.state == DONE)
        & IdempotencyKey.id.in_(naming)
    ):
        body, headers = erased_answer(
            row.status, bytes(row.body or b""), dict(row.headers or {}), needles
        )
        replaced += (
            IdempotencyKey.update(body=body, headers=headers)
            .where(IdempotencyKey.id == row.id)
            .execute()
        )
        index_names(tenant_id, row.id, body)
    return replaced


def erased_answer(
    status: int, body: bytes, headers: dict, needles: list[str]
) -> tuple[bytes, dict]:
    """What is kept of a stored answer naming an erased record: a batch answer (`items` of outcomes)
    with only the items naming it reduced to their status, source id and id; an error answer (4xx)
    as the one error body saying it was erased; any other as a note (`status`, `replayed`,
    `answer_omitted`, `message`) with `Idempotent-Answer-Omitted: erased`. The Location header is
    kept."""
    batch = batch_items(body)
    if batch is not None:
        for index, item in enumerate(batch["items"]):
            if isinstance(item, dict) and any(
                needle.encode() in orjson.dumps(item) for needle in needles
            ):
                batch["items"][index] = {
                    name: item.get(name) for name in ("status", "source_id", "id") if name in item
                }
        return orjson.dumps(batch), headers
    message = (
        f"This request already ran and answered {status}; what it answered was erased on the data "
        "subject's "
        "request, so it is not replayed and nothing was run again."
    )
    kept = {name: value for name, value in headers.items() if name == "Location"}
    if status >= 400:
        answer = {"status": status, "error": error_detail(status, message)}
    else:
        answer = {
            "status": status,
            "replayed": True,
            "answer_omitted": OMITTED_ERASED,
            "message": message,
        }
    return orjson.dumps(answer), {**kept, "Content-Type": JSON_TYPE, OMITTED_HEADER: OMITTED_ERASED}


def batch_items(body: bytes) -> dict | None:
    """The decoded answer when it is a batch answer (app.http.batch_upserts: `items` and the
    counts), else None."""
    if not body.startswith(b'{"items":'):
        return None
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return answer if isinstance(answer, dict) and isinstance(answer.get("items"), list) else None


def answered_id(body: bytes) -> str | None:
    """The top-level string `id` of a JSON object answer (a record), else None."""
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    record_id = answer.get("id") if isinstance(answer, dict) else None
    return record_id if isinstance(record_id, str) else None


def release(tenant_id: str, key: str, token: str) -> None:
    """Drop a claim whose request ended without an answer to store."""
    with database.atomic():
        IdempotencyKey.delete().where(
            (IdempotencyKey.tenant == tenant_id)
            & (IdempotencyKey.key == key)
            & (IdempotencyKey.claim == token)
            & (IdempotencyKey.state == IN_FLIGHT)
        ).execute()


def purge_expired(now: dt.datetime | None = None) -> int:
    """Delete the keys past their retention (and the record ids their answers named); answers how
    many."""
    expired = IdempotencyKey.expires_at <= (now or utcnow())
    with database.atomic():
        IdempotencyRecordName.delete().where(
            IdempotencyRecordName.answer.in_(
                IdempotencyKey.select(IdempotencyKey.id).where(expired)
            )
        ).execute()
        return IdempotencyKey.delete().where(expired).execute()


@periodic.chained(
    job_id=PURGE_JOB_ID, queue=PURGE_QUEUE, interval_setting="IDEMPOTENCY_PURGE_INTERVAL"
)
def purge_expired_keys() -> int:
    """The worker's periodic pass: purge expired keys."""
    return purge_expired()


# ---- HTTP: before the view, after it
# ------------------------------------------------------------------------------

# app.extensions: blueprint name -> declared read_only
READ_ONLY_BLUEPRINTS = "hirekit.idempotency.read_only"


def applies_to_request() -> bool:
    req = request._get_current_object()
    return (
        req.method in WRITE_METHODS
        and req.path.startswith(API_PREFIX)
        and HEADER in req.headers
        and not reads_only(current_app._get_current_object(), req.blueprint)
    )


def reads_only(app, blueprint_name: str | None) -> bool:
    """Whether the blueprint declared that its routes change no state (app.http.api.Blueprint's
    `read_only`); read once per blueprint and kept on the app."""
    known = app.extensions.setdefault(READ_ONLY_BLUEPRINTS, {})
    if blueprint_name not in known:
        blueprint = app.blueprints.get(blueprint_name) if blueprint_name else None
        known[blueprint_name] = bool(getattr(blueprint, "read_only", False))
    return known[blueprint_name]


FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")


def body_parts(req) -> list[bytes | str]:
    """What the fingerprint reads of the body: its bytes; for a form (already parsed by
    app.http.nul_guard, so its raw bytes are gone) its fields and each file's name, type and sha256
    in a fixed order, whatever the boundary."""
    if req.mimetype not in FORM_TYPES:
        return [req.get_data(cache=True)]
    parts: list[bytes | str] = [req.mimetype]
    for name, value in sorted(req.form.items(multi=True)):
        parts += [name, value]
    for name, upload in sorted(
        req.files.items(multi=True), key=lambda item: (item[0], item[1].filename or "")
    ):
        digest = hashlib.sha256(upload.stream.read()).hexdigest()
        upload.stream.seek(0)
        parts += [name, upload.filename or "", upload.mimetype or "", digest]
    return parts


def claim_before_view():
    """before_request (after auth and the body guards): claim the key, or answer the stored reply /
    409 / 422."""
    if not applies_to_request():
        return None
    caller = g.get("caller")
    # a /v1 route without an API key (e.g. a telephony callback): keys are per tenant
    if caller is None:
        return None
    req = request._get_current_object()
    key = valid_key(req.headers[HEADER])
    request_fingerprint = fingerprint(
        req.method, req.full_path if req.query_string else req.path, *body_parts(req)
    )
    token, answer = claim(caller.tenant_id, key, request_fingerprint)
    if answer is not None:
        replay = Response(answer.body, status=answer.status)
        for name, value in answer.headers.items():
            replay.headers[name] = value
        replay.headers[REPLAYED_HEADER] = "true"
        return replay
    g.idempotency = (caller.tenant_id, key, token)
    # only a request that holds a claim pays for the after-view step
    after_this_request(store_after_view)
    return None


WITHHELD = "hirekit_idempotency_withheld"  # g: top-level answer fields the stored answer leaves out
STORED_UP_TO = "hirekit_idempotency_stored_up_to"  # g: a view's own bound on its stored answer


def store_answers_up_to(max_bytes: int) -> None:
    """The view's answer is bounded by the view (a batch answer: its items' outcomes) and kept whole
    for a replay up to `max_bytes`, past IDEMPOTENCY_MAX_STORED_BYTES when that is smaller."""
    setattr(g, STORED_UP_TO, max_bytes)


def withhold_from_stored_answer(*names: str) -> None:
    """The view's answer carries these top-level fields once (a generated secret): the answer kept
    for a retry with the same Idempotency-Key leaves them out, so they are stored nowhere but where
    they belong."""
    setattr(g, WITHHELD, (*g.get(WITHHELD, ()), *names))


def without_withheld(body: bytes, names: tuple) -> bytes:
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body
    if not isinstance(answer, dict) or not any(name in answer for name in names):
        return body
    return orjson.dumps({key: value for key, value in answer.items() if key not in names})


def store_after_view(response: Response) -> Response:
    """after_this_request of a claiming request: keep its answer (5xx or 429: release it)."""
    held = g.pop("idempotency")  # set by claim_before_view, which registered this step
    headers = {name: response.headers[name] for name in STORED_HEADERS if name in response.headers}
    body, withheld = response.get_data(), g.get(WITHHELD, ())
    store(
        *held,
        response.status_code,
        without_withheld(body, withheld) if withheld else body,
        headers,
        max_bytes=g.get(STORED_UP_TO),
    )
    return response


def release_unanswered(exc) -> None:
    """teardown_request: a claim still held here got no stored answer (the request failed after the
    view)."""
    held = g.pop("idempotency", None)
    if held is not None:
        try:
            release(*held)
        except pw.PeeweeException:
            log.exception("could not release idempotency key %s", held[1])


def init_app(app) -> None:
    """Register the hooks; call after app.http.nul_guard.init_app (the fingerprint reads the
    de-chunked, guarded body)."""
    app.before_request(claim_before_view)
    app.teardown_request(release_unanswered)
    periodic.declare_core(
        app, periodic.PeriodicJob(purge_expired_keys, PURGE_QUEUE, "IDEMPOTENCY_PURGE_INTERVAL")
    )


# ---- OpenAPI
# --------------------------------------------------------------------------------------------------

KEY_PARAMETER = {
    "name": HEADER,
    "in": "header",
    "required": False,
    "schema": {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_KEY_LENGTH,
        "pattern": PRINTABLE_KEY.pattern,
    },
    "description": "Makes the write safe to retry: the first request with this key (1-255 "
    "printable ASCII characters, "
    "scoped to your tenant, e.g. a UUID) runs and its answer is kept for 24 hours; a retry with "
    "the same "
    "key, method, path and body gets that answer again with `Idempotent-Replayed: true` and runs "
    "nothing; "
    "the same key with another request is 422; while the first is still running, 409 (retry "
    "shortly). "
    "5xx and 429 answers are not kept. An answer body larger than IDEMPOTENCY_MAX_STORED_BYTES (64 "
    "KiB by "
    "default) is not kept either, but the key still guards the write: a retry runs nothing and "
    "gets the "
    "original status (and Location) with `Idempotent-Answer-Omitted: too-large` and a small JSON "
    "note "
    "(`status`, `replayed`, `answer_omitted`, the record's `id` when the answer was a record, "
    "`message`) "
    "in place of the answer. Keys apply to writes "
    "that change state (creates, updates, upserts, deletes, actions such as instant call, "
    "generate, "
    "webhook test and replay); read-only POSTs (person search, enrich, bulk, identify) ignore the "
    "header and keep "
    "nothing.",
}
REPLAYED_RESPONSE_HEADER = {
    "description": "`true` when this answer is the stored answer of an earlier request with the "
    "same Idempotency-Key",
    "schema": {"type": "string", "enum": ["true"]},
}
OMITTED_RESPONSE_HEADER = {
    "description": "`too-large` on a replay whose original answer was larger than "
    "IDEMPOTENCY_MAX_STORED_BYTES, "
    "`erased` on one whose answer named a candidate since erased: the body is then a small JSON "
    "note, "
    "not the original answer (the status and Location are the original's)",
    "schema": {"type": "string", "enum": [OMITTED_TOO_LARGE, OMITTED_ERASED]},
}


def document_operation(path: str, method: str, operation: dict, *, read_only: bool = False) -> None:
    """An authenticated /v1 write that changes state documents the Idempotency-Key header and its
    answers' Idempotent-Replayed and Idempotent-Answer-Omitted headers; a read-only one (which
    ignores the key) neither."""
    if (
        read_only
        or method.upper() not in WRITE_METHODS
        or not path.startswith(API_PREFIX)
        or not operation.get("security")
    ):
        return
    parameters = operation.setdefault("parameters", [])
    if not any(isinstance(p, dict) and p.get("name") == HEADER for p in parameters):
        parameters.append(dict(KEY_PARAMETER))
    for status, response in operation.get("responses", {}).items():
        if str(status).startswith("2") and isinstance(response, dict):
            response.setdefault("headers", {})[REPLAYED_HEADER] = REPLAYED_RESPONSE_HEADER
            response["headers"][OMITTED_HEADER] = OMITTED_RESPONSE_HEADER


# ---- the same guarantee for callers that are not HTTP requests (MCP tools)
# ----------------------------------------


def run_once(tenant_id: str, key: str, request_fingerprint: str, run: Callable[[], dict]) -> dict:
    """`run()`'s JSON result, computed once per (tenant, key): a retry with the same fingerprint
    gets the stored result without running; an ApiError from `run()` (a 4xx) is stored as the answer
    too and raised again."""
    token, answer = claim(tenant_id, valid_key(key), request_fingerprint)
    if answer is not None:
        stored = orjson.loads(answer.body)
        # past the size cap, or erased: its message
        if answer.status >= 400 and OMITTED_HEADER in answer.headers:
            raise ApiError(
                answer.status, stored.get("message") or stored.get("error", {}).get("message", "")
            )
        if answer.status >= 400:
            raise ApiError(
                answer.status,
                stored["message"],
                type=stored["type"],
                fields=stored.get("fields"),
                extra=stored.get("extra"),
            )
        return stored
    try:
        result = run()
    except ApiError as error:
        if not kept(error.status):
            release(tenant_id, key, token)
        else:
            failure = {
                "message": error.message,
                "type": error.type,
                "fields": error.fields,
                "extra": error.extra,
            }
            store(tenant_id, key, token, error.status, orjson.dumps(failure), {})
        raise
    except BaseException:
        release(tenant_id, key, token)
        raise
    store(tenant_id, key, token, 200, orjson.dumps(result), {})
    return result
