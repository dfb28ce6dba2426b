"""A chat model as the screening call's voice: an OpenAI-compatible endpoint (HIREKIT_LLM_*) streams
the agent's words, which go to the candidate token by token, and acts only through tools the
dialogue validates.

A tool call with bad arguments, an unknown question, a time that cannot be read, or a model that
times out or errs never reaches the candidate or the record: the agent says a safe line and the
rules take that turn. Text a model sends after it starts a tool call is never spoken; facts about
the job are spoken from the record, not the model."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import time
from collections.abc import Iterator
from zoneinfo import ZoneInfo

import requests

from app.outbound.llm import CONNECT_TIMEOUT_SECONDS, LlmClient, LlmError
from plugins.calls import rubric as rubrics
from plugins.calls.conversation import booking, knowledge
from plugins.calls.conversation.contract import Outgoing

log = logging.getLogger("hirekit.calls")

MAX_ROUNDS = (
    3  # model requests in one turn: act, then speak (a turn with two actions needs a third)
)
HISTORY_TURNS = 40
ENDINGS = ("completed", "wrong_person")


class ToolRefused(ValueError):
    """A tool call the dialogue cannot accept as it stands."""


def configured(config) -> bool:
    return bool(config.get("LLM_URL"))


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "record_answer",
            "description": (
                "Record the candidate's answer to screening question `question_index`. `value` is "
                "typed: "
                "true/false for yes_no, a number for number, one of the choices for choice, a "
                "short "
                "text for text; null once the follow-ups are used up and the answer is still "
                "missing. "
                "`evidence` is the candidate's own words, quoted exactly."
            ),
            "parameters": {
                "type": "object",
                "required": ["question_index", "value", "evidence"],
                "properties": {
                    "question_index": {"type": "integer"},
                    "value": {"type": ["boolean", "number", "string", "null"]},
                    "evidence": {"type": "string"},
                },
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "answer_candidate_question",
            "description": (
                "Answer a question the candidate asked, from one of the facts given (its source "
                "key), or "
                "with source 'recruiter' when no fact answers it. The fact itself is read to the "
                "candidate."
            ),
            "parameters": {
                "type": "object",
                "required": ["question", "source"],
                "properties": {"question": {"type": "string"}, "source": {"type": "string"}},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "book_callback",
            "description": (
                "Book a call back at the time the candidate asked for, as an ISO 8601 local date "
                "and time "
                "in the candidate's zone (e.g. 2026-12-01T10:00). The call then ends."
            ),
            "parameters": {
                "type": "object",
                "required": ["when"],
                "properties": {"when": {"type": "string"}},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "opt_out",
            "description": "The candidate asked never to be called again. The call then ends.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "end_call",
            "description": (
                "End the call: 'completed' when the screening is done and the candidate has no "
                "more "
                "questions; 'wrong_person' when the person is not the candidate."
            ),
            "parameters": {
                "type": "object",
                "required": ["reason"],
                "properties": {"reason": {"type": "string", "enum": list(ENDINGS)}},
            },
        },
    },
]


class ModelBrain:
    """Writes a conversation's turns with a model; `conversation` is the CallConversation it speaks
    for."""

    def __init__(self, conversation, config):
        self.conversation = conversation
        self.client = LlmClient.from_config(config)

    # --- one turn ---

    def turn(self, text: str, *, at_ms: int) -> Iterator[Outgoing]:
        conv = self.conversation
        messages = self.messages()
        acted = False
        for _ in range(MAX_ROUNDS):
            spoken: list[str] = []
            calls: list[dict] = []
            try:
                for kind, payload in self.stream(messages):
                    if kind == "token":
                        spoken.append(payload)
                        yield {
                            "type": "text",
                            "token": payload,
                            "last": False,
                            "interruptible": True,
                        }
                    else:
                        calls = payload
            except LlmError as error:
                log.warning(
                    "call %s: model turn failed (%s); the rules take it", conv.call_id, error
                )
                yield from self.fallback(text, at_ms, acted=acted, spoken=spoken)
                return
            if spoken and not calls:
                conv._turn("agent", "".join(spoken).strip(), at_ms, conv.index)
                conv._save()
                yield {"type": "text", "token": "", "last": True, "interruptible": True}
                return
            if spoken:  # words before a tool call went out; they end there
                conv._turn("agent", "".join(spoken).strip(), at_ms, conv.index)
                yield {"type": "text", "token": "", "last": True, "interruptible": True}
            if not calls:
                yield from self.fallback(text, at_ms, acted=acted, spoken=spoken)
                return
            try:
                actions = [self.validate(call) for call in calls]
            except ToolRefused as refused:
                log.warning(
                    "call %s: model tool call refused (%s); the rules take the turn",
                    conv.call_id,
                    refused,
                )
                yield from self.fallback(text, at_ms, acted=acted, spoken=spoken)
                return
            results, out = self.apply(actions, at_ms)
            acted = True
            if out:  # an action that speaks for itself (a fact, a booking, an ending)
                yield from conv.deliver(out, at_ms)
                if conv.finished or conv.stage not in ("question", "wrap_up"):
                    return
            messages = [
                *messages,
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["name"], "arguments": call["arguments"]},
                        }
                        for call in calls
                    ],
                },
                *[
                    {"role": "tool", "tool_call_id": call["id"], "content": result}
                    for call, result in zip(calls, results)
                ],
            ]
        yield from self.fallback(text, at_ms, acted=acted, spoken=[])

    def fallback(
        self, text: str, at_ms: int, *, acted: bool, spoken: list[str]
    ) -> Iterator[Outgoing]:
        """The safe line, then the rules: on the utterance itself, or (when an action already took
        it) the next prompt."""
        conv = self.conversation
        out = conv.say(SAFE_LINE, at_ms)
        out[0].update(token=SAFE_LINE + " ", last=False)  # one utterance with the rules' turn
        if acted:
            rest = (
                conv.next_question(at_ms)
                if conv.stage == "question"
                else conv._prompt(
                    conv.state.get("prompt") or "Is there anything else you'd like to know?", at_ms
                )
            )
        else:
            rest = conv.decide(text, at_ms)
        yield from conv.deliver([*out, *rest], at_ms)

    # --- the model ---

    def messages(self) -> list[dict]:
        conv = self.conversation
        questions = [
            {
                "index": e["index"],
                "question": e["question"],
                "answer_type": e["answer_type"],
                "choices": conv.rubrics[e["index"]].choices,
                "status": e["status"],
                "follow_ups_asked": len(e["follow_ups"]),
            }
            for e in conv.answers
        ]
        zone = booking.candidate_zone(conv.call_id)
        now = dt.datetime.now(ZoneInfo(zone)).strftime("%A %Y-%m-%dT%H:%M")
        system = (
            "You are an automated phone screening assistant for a job application. Speak in "
            "short, natural, "
            "spoken sentences, one question at a time, in the candidate's language. Ask the "
            "screening questions "
            "in order. When the candidate answers one, call record_answer with the typed value "
            "and their exact "
            "words as evidence. If an answer lacks what the question asks, ask a follow-up, at "
            "most "
            f"{conv.max_follow_ups} per question, then call record_answer with value null. Answer "
            "the candidate's "
            "questions only through answer_candidate_question, choosing a fact's source key, or "
            "'recruiter' when "
            "no fact answers it; never state anything about the job that is not in the facts. A "
            "request to be "
            "called back: book_callback. 'Don't call me again': opt_out. When every question is "
            "done and the "
            "candidate has no more questions: end_call with 'completed'. Call tools without "
            "speaking; you speak "
            "after their results.\n"
            + json.dumps(
                {
                    "job_title": conv.job.title,
                    "candidate_first_name": conv.candidate.first_name,
                    "facts": knowledge.fact_sources(conv.job, conv.faq),
                    "questions": questions,
                    "current_question_index": conv.index,
                    "stage": conv.stage,
                    "candidate_local_time": now,
                    "candidate_zone": zone,
                }
            )
        )
        history = []
        for turn in conv.turns[-HISTORY_TURNS:]:
            role = "assistant" if turn["speaker"] == "agent" else "user"
            if turn["text"]:
                history.append({"role": role, "content": turn["text"]})
        return [{"role": "system", "content": system}, *history]

    def stream(self, messages: list[dict]) -> Iterator[tuple[str, object]]:
        """("token", text) as the model's words arrive, then ("tools", [{id, name, arguments}]) once
        the answer is complete; LlmError on a failure, a bad stream or LLM_TIMEOUT passing."""
        client = self.client
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if client.api_key:
            headers["Authorization"] = f"Bearer {client.api_key}"
        body = {
            "model": client.model,
            "messages": messages,
            "tools": TOOLS,
            "stream": True,
            "temperature": 0.2,
        }
        deadline = time.monotonic() + client.timeout
        try:
            response = requests.post(
                client.endpoint,
                json=body,
                headers=headers,
                stream=True,
                timeout=(min(CONNECT_TIMEOUT_SECONDS, client.timeout), client.timeout),
            )
        except requests.RequestException as error:
            raise LlmError(f"model request failed: {error}") from error
        with response:
            if response.status_code != 200:
                raise LlmError(f"model answered HTTP {response.status_code}")
            calls: dict[int, dict] = {}
            try:
                for line in _lines(response.raw):
                    if time.monotonic() > deadline:
                        raise LlmError("model took longer than LLM_TIMEOUT")
                    if not line or not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        break
                    delta = _delta(data)
                    for part in delta.get("tool_calls") or ():
                        entry = calls.setdefault(
                            int(part.get("index", 0)), {"id": "", "name": "", "arguments": ""}
                        )
                        entry["id"] = part.get("id") or entry["id"]
                        function = part.get("function") or {}
                        entry["name"] += function.get("name") or ""
                        entry["arguments"] += function.get("arguments") or ""
                    content = delta.get("content")
                    if content and not calls:
                        yield "token", content
            except requests.RequestException as error:
                raise LlmError(f"model stream broke: {error}") from error
        yield (
            "tools",
            [dict(call, id=call["id"] or f"call_{n}") for n, call in sorted(calls.items())],
        )

    # --- tools ---

    def validate(self, call: dict) -> tuple[str, dict]:
        """(tool name, checked arguments); ToolRefused when anything is off."""
        conv = self.conversation
        try:
            args = json.loads(call["arguments"] or "{}")
        except ValueError:
            raise ToolRefused(f"{call['name']}: arguments are not JSON") from None
        if not isinstance(args, dict):
            raise ToolRefused(f"{call['name']}: arguments are not an object")
        name = call["name"]
        if name == "record_answer":
            index = args.get("question_index")
            if (
                not isinstance(index, int)
                or isinstance(index, bool)
                or not 0 <= index < len(conv.answers)
            ):
                raise ToolRefused(f"record_answer: no question {index!r}")
            value, evidence = args.get("value"), args.get("evidence")
            if value is not None and not rubrics.valid_value(conv.rubrics[index], value):
                raise ToolRefused(
                    f"record_answer: {value!r} is not a {conv.rubrics[index].answer_type} answer"
                )
            if value is not None and not (isinstance(evidence, str) and self.said(evidence)):
                raise ToolRefused("record_answer: the evidence is not the candidate's words")
            return name, {"index": index, "value": value, "evidence": evidence or ""}
        if name == "answer_candidate_question":
            question, source = args.get("question"), args.get("source")
            if not isinstance(question, str) or not question.strip() or len(question) > 500:
                raise ToolRefused("answer_candidate_question: no question")
            if source == "recruiter":
                return name, {"question": question.strip(), "fact": None}
            fact = (
                knowledge.fact_for_source(source, conv.job, conv.faq)
                if isinstance(source, str)
                else None
            )
            if fact is None:
                raise ToolRefused(f"answer_candidate_question: no fact {source!r}")
            return name, {"question": question.strip(), "fact": fact}
        if name == "book_callback":
            try:
                when = dt.datetime.fromisoformat(str(args.get("when")))
            except ValueError:
                raise ToolRefused(
                    f"book_callback: {args.get('when')!r} is not a date and time"
                ) from None
            if when.tzinfo is None:
                when = when.replace(tzinfo=ZoneInfo(booking.candidate_zone(conv.call_id)))
            if when <= dt.datetime.now(dt.timezone.utc):
                raise ToolRefused("book_callback: the time has passed")
            return name, {"when": when}
        if name == "opt_out":
            return name, {}
        if name == "end_call":
            if args.get("reason") not in ENDINGS:
                raise ToolRefused(f"end_call: unknown reason {args.get('reason')!r}")
            if args["reason"] == "completed" and conv.first_open_question() is not None:
                raise ToolRefused("end_call: questions are still open")
            return name, {"reason": args["reason"]}
        raise ToolRefused(f"unknown tool {name!r}")

    def said(self, evidence: str) -> bool:
        """Whether `evidence` is (a part of) something the candidate said on this call."""
        wanted = _plain(evidence)
        return bool(wanted) and any(
            wanted in _plain(turn["text"])
            for turn in self.conversation.turns
            if turn["speaker"] == "candidate"
        )

    def apply(
        self, actions: list[tuple[str, dict]], at_ms: int
    ) -> tuple[list[str], list[Outgoing]]:
        """Carry out validated actions; answers each one's result for the model and what was said
        for them."""
        conv = self.conversation
        results: list[str] = []
        out: list[Outgoing] = []
        for name, args in actions:
            if conv.finished:
                results.append("the call has ended")
                continue
            if name == "record_answer":
                if args["value"] is None:
                    conv.mark_unanswered(args["index"])
                else:
                    conv._note_answer_text(args["evidence"])
                    conv.record_answer(args["index"], args["value"], args["evidence"])
                following = conv.first_open_question()
                if following is None:
                    conv.state.update(stage="wrap_up")
                    results.append(
                        "recorded; every question is done: ask if they have questions about the "
                        "role"
                    )
                else:
                    conv.state.update(stage="question", index=following)
                    results.append(
                        f"recorded; ask question {following} next: "
                        f"{conv.answers[following]['question']}"
                    )
            elif name == "answer_candidate_question":
                reply = conv.answer_candidate(args["question"], args["fact"])
                out += conv.say(reply, at_ms, question_index=conv.index)
                out[-1].update(
                    token=reply + " ", last=False
                )  # the model goes on in the same utterance
                results.append(f"the candidate was told: {reply} Now continue.")
            elif name == "book_callback":
                out += conv.book(args["when"], at_ms)
                results.append("handled")
            elif name == "opt_out":
                out += conv.opt_out(at_ms)
                results.append("opted out")
            else:
                line = SAFE_GOODBYE if args["reason"] == "completed" else WRONG_PERSON
                out += conv.end(args["reason"], line, at_ms)
                results.append("ended")
        if out and not conv.finished and conv.stage in ("question", "wrap_up"):
            out[-1]["last"] = False  # the model continues the turn
        return results, out


SAFE_LINE = "Sorry, let me get that right."
SAFE_GOODBYE = "Thank you for your time. The recruiter will be in touch about next steps. Goodbye."
WRONG_PERSON = "I'm sorry for the trouble. I'll make sure we update our records. Goodbye."


def _lines(raw) -> Iterator[str]:
    """The stream's lines as soon as each is complete (read1 returns what has arrived, where a sized
    read would wait for the size to fill)."""
    pending = b""
    while True:
        data = raw.read1(8192)
        if not data:
            break
        pending += data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            yield line.decode("utf-8", "replace").rstrip("\r")
    if pending:
        yield pending.decode("utf-8", "replace")


def _delta(data: str) -> dict:
    try:
        chunk = json.loads(data)
        choices = chunk.get("choices") or [{}]
        delta = choices[0].get("delta") or {}
    except (ValueError, AttributeError, IndexError, TypeError) as error:
        raise LlmError("model stream chunk is not a chat completion chunk") from error
    if not isinstance(delta, dict):
        raise LlmError("model stream chunk has no delta")
    return delta


def _plain(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", (text or "").lower()))
