"""A screening call's dialogue behind the relay's Conversation contract: the opening, the job's
questions with follow-ups, the candidate's own questions, callbacks, opt-outs and the end, persisted
turn by turn on the call.

The deterministic rules below decide every turn when no model is configured, and any turn a model
fails; with a model (plugins.calls.conversation.model_brain) the model speaks from the first
question on, acting through the validated actions of this class."""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Iterator

import peewee as pw
from flask import current_app

from app.data.db import database, utcnow
from app.data.records import row_by_id
from plugins.calls import rubric as rubrics
from plugins.calls.conversation import booking, knowledge
from plugins.calls.conversation import understanding as nlu
from plugins.calls.conversation.contract import END_REASONS, ConversationRefused, Outgoing
from plugins.calls.models import (
    BUSY,
    COMPLETED,
    FAILED,
    FINAL_STATUSES,
    IN_PROGRESS,
    NO_ANSWER,
    QUEUED,
    RINGING,
    Call,
    JobFaq,
    QuestionRubric,
)
from plugins.candidates.models import Candidate
from plugins.jobs.models import Job

log = logging.getLogger("hirekit.calls")

CONFIRM, GOOD_TIME, QUESTION, WRAP_UP = "confirm", "good_time", "question", "wrap_up"
CALLBACK_TIME, CALLBACK_OFFER, ENDED = "callback_time", "callback_offer", "ended"
YES_NO_STAGES = (CONFIRM, GOOD_TIME, CALLBACK_OFFER, WRAP_UP)
PENDING, ANSWERED, UNANSWERED = "pending", "answered", "unanswered"
KEYS = {"1": "yes", "2": "no"}
MAX_UTTERANCE_CHARS = 2000  # what one utterance may add to the record; speech is far shorter
CALLBACK_TRIES = 2  # times the agent asks for a callback time before it books the next allowed one
# What each end reason does to the call's status; a hang-up mid-screening is a failed attempt, so it
# is retried
STATUS_BY_END = {
    "completed": COMPLETED,
    "callback_booked": COMPLETED,
    "opted_out": COMPLETED,
    "wrong_person": COMPLETED,
    "voicemail_left": NO_ANSWER,
    "no_answer": NO_ANSWER,
    "busy": BUSY,
    "failed": FAILED,
    "hung_up": FAILED,
}

SAFE_LINE = "Sorry, let me get that right."
WRONG_PERSON_LINE = "I'm sorry for the trouble. I'll make sure we update our records. Goodbye."
NOT_INTERESTED_LINE = "I understand. Thank you for letting us know, and good luck. Goodbye."
OPTED_OUT_LINE = "Understood. We won't call you again. Sorry for the interruption, goodbye."
CLOSING_LINE = "Thank you for your time. The recruiter will be in touch about next steps. Goodbye."
WRAP_UP_PROMPT = "Those are all my questions. Do you have any questions about the role for me?"
ANYTHING_ELSE = "Is there anything else you'd like to know?"
ASK_CALLBACK = "No problem. When would be a better time for me to call you back?"


def end_status(reason: str, answers: list[dict]) -> tuple[str, str | None]:
    """The status a conversation's end reason gives its call, and the call's error: a hang-up once
    every question was dealt with completes the screening; before that it fails (and is retried)."""
    status = STATUS_BY_END[reason]
    if reason == "hung_up" and answers and all(entry.get("status") != PENDING for entry in answers):
        status = COMPLETED
    if status != FAILED:
        return status, None
    if reason == "hung_up":
        return status, "the call ended before the screening finished"
    return status, "the call failed during the conversation"


def recording_on(tenant_id: str) -> bool:
    """Whether the tenant records calls (its call settings, GET /v1/call-settings; off by
    default)."""
    from plugins.calls.recordings import recording_enabled

    return recording_enabled(tenant_id)


def write_live_record(call_id, fields: dict) -> None:
    """A live call's record as a turn left it; never over the record of a call that has ended.
    `fields` maps Call's fields to values, or to pw.Value(db value) when already serialized.

    It runs once a turn for every live call, so its UPDATE is SQL text made once per set of
    columns: building it with the query builder each time cost more of the relay's CPU than the
    rest of the turn's bookkeeping."""
    columns = tuple(fields)
    key = (database.param, columns)
    sql = _LIVE_RECORD_SQL.get(key)
    if sql is None:
        sql = _LIVE_RECORD_SQL.setdefault(key, _live_record_sql(columns))
    values = [
        value.value if isinstance(value, pw.Value) else field.db_value(value)
        for field, value in fields.items()
    ]
    database.execute_sql(sql, [*values, Call.id.db_value(call_id)])


_LIVE_RECORD_SQL: dict[tuple, str] = {}


def _live_record_sql(columns: tuple) -> str:
    param = database.param
    assigned = ", ".join(f'"{field.column_name}" = {param}' for field in columns)
    return (
        f'UPDATE "{Call._meta.table_name}" SET {assigned} '
        f'WHERE "{Call.id.column_name}" = {param} AND "{Call.end_reason.column_name}" IS NULL'
    )


def open_call_conversation(
    call_id: str, language: str | None = None, *, record_writer=None
) -> CallConversation:
    """The conversation of a call being placed (ringing, in progress, or claimed for dialling);
    ConversationRefused for an unknown or finished call, one not being placed, or one whose
    conversation already ran. With a `record_writer` (the relay's), turns' records are written
    behind the turns; without, each turn writes its own."""
    try:
        call = row_by_id(Call, call_id)
    except Exception:  # noqa: BLE001 - a malformed id is as unknown as a missing one
        call = None
    if call is None:
        raise ConversationRefused(f"no call {call_id}")
    if call.status in FINAL_STATUSES:
        raise ConversationRefused(f"call {call_id} is already {call.status}")
    if call.status == QUEUED and call.dialled_at is None:
        raise ConversationRefused(f"call {call_id} is not being placed")
    if call.dialogue and call.dialogue.get("stage"):
        raise ConversationRefused(f"call {call_id} already has its conversation")
    # the job and candidate the whole conversation reads, each by its key (a joined select of three
    # wide models cost the relay more CPU to build than these three reads)
    call.job, call.candidate = row_by_id(Job, call.job_id), row_by_id(Candidate, call.candidate_id)
    return CallConversation(call, language=language, record_writer=record_writer)


class CallConversation:
    """One live call's dialogue (the Conversation protocol). Every turn saves the call's record as
    its first message goes out (or hands it to the record writer); the end is written at once."""

    def __init__(self, call: Call, *, language: str | None = None, record_writer=None):
        config = current_app.config
        self.record_writer = record_writer
        self.call_id = call.id
        self.tenant_id = call.tenant_id
        self.status_at_open = call.status
        self.job = call.job
        self.candidate = call.candidate
        self.language = language or config.get("CALL_LANGUAGE") or "en-US"
        self.max_follow_ups = int(config.get("CALL_FOLLOW_UPS", 2))
        self.finished = False
        self.turns: list[dict] = list(call.transcript or [])
        self.candidate_questions: list[dict] = list(call.candidate_questions or [])
        self.faq = self._faq()
        self.answers: list[dict] = list(call.answers or []) or self._fresh_answers(call)
        self.rubrics = self._rubrics()
        self.state: dict = dict(call.dialogue or {})
        self.end_reason: str | None = None  # set once the end is persisted
        self.ending: str | None = None  # the agent's own end, persisted as its goodbye goes out
        self.brain = None
        from plugins.calls.conversation import model_brain

        self.analyzer = "rules"
        if model_brain.configured(config):
            self.brain = model_brain.ModelBrain(self, config)
            self.analyzer = f"llm:{config.get('LLM_MODEL', '')}"

    # --- what the call is about ---

    def _faq(self) -> list[dict]:
        row = row_by_id(JobFaq, self.job.id)
        return list(row.entries) if row else []

    def _fresh_answers(self, call: Call) -> list[dict]:
        """One pending result per question; what an earlier, unfinished attempt for the application
        got answered is carried over, so this attempt resumes at the first unanswered question."""
        from plugins.calls.lifecycle import question_rows_for

        earlier = self._earlier_results(call)
        results = []
        for index, question in enumerate(question_rows_for(call)):
            kept = earlier.get(str(question.id))
            if kept is not None:
                results.append(
                    {
                        **kept,
                        "index": index,
                        "from_call_id": kept.get("from_call_id") or kept["call_id"],
                    }
                )
                continue
            results.append(
                {
                    "index": index,
                    "question_id": str(question.id),
                    "question": question.question_text,
                    "answer": None,
                    "value": None,
                    "score": 0,
                    "meets_requirement": False,
                    "evidence": None,
                    "follow_ups": [],
                    "status": PENDING,
                }
            )
        return results

    def _earlier_results(self, call: Call) -> dict[str, dict]:
        earlier = (
            # not the earlier calls' transcripts
            Call.select(Call.id, Call.end_reason, Call.answers)
            .where(
                (Call.application == call.application_id)
                & (Call.id != call.id)
                & (Call.created_at <= call.created_at)
            )
            .order_by(Call.created_at.desc())
            .limit(5)
        )
        for previous in earlier:
            if previous.end_reason == "completed":
                return {}  # a finished screening: a new call starts afresh
            answered = {
                entry["question_id"]: {**entry, "call_id": str(previous.id)}
                for entry in previous.answers or []
                if entry.get("status") == ANSWERED
            }
            if answered:
                return answered
        return {}

    def _rubrics(self) -> list[rubrics.Rubric]:
        ids = [entry["question_id"] for entry in self.answers]
        stored = {
            str(row.question_id): row
            for row in QuestionRubric.select().where(QuestionRubric.question.in_(ids))
        }
        description = self.job.description or ""
        resolved = []
        for entry in self.answers:
            rule = rubrics.resolve(entry["question"], stored.get(entry["question_id"]), description)
            entry.update(answer_type=rule.answer_type, knockout=rule.knockout, weight=rule.weight)
            resolved.append(rule)
        return resolved

    @property
    def stage(self) -> str:
        return self.state.get("stage", CONFIRM)

    @property
    def index(self) -> int | None:
        """The question being asked now, None outside the questions."""
        return self.state.get("index") if self.stage == QUESTION else None

    def first_open_question(self) -> int | None:
        return next((entry["index"] for entry in self.answers if entry["status"] == PENDING), None)

    # --- persistence ---

    def _record(self) -> dict:
        """The record as the conversation stands, serialized now: a writer behind the turns may
        write it while the conversation goes on changing its lists."""
        return {
            Call.transcript: pw.Value(Call.transcript.db_value(self.turns)),
            Call.answers: pw.Value(Call.answers.db_value(self.answers)),
            Call.candidate_questions: pw.Value(
                Call.candidate_questions.db_value(self.candidate_questions)
            ),
            Call.dialogue: pw.Value(Call.dialogue.db_value(self.state)),
            Call.language: self.language,
            Call.analyzer: self.analyzer,
            Call.updated_at: utcnow(),
        }

    def _save(self) -> None:
        if self.record_writer is None:
            write_live_record(self.call_id, self._record())
        else:
            self.record_writer.save(self.call_id, self._record())

    def _turn(self, speaker: str, text: str, at_ms: int, question_index: int | None = None) -> dict:
        turn = {
            "speaker": speaker,
            "text": text,
            "at_ms": max(0, int(at_ms)),
            "question_index": question_index,
            "interrupted": False,
        }
        self.turns.append(turn)
        return turn

    def say(self, text: str, at_ms: int, *, question_index: int | None = None) -> list[Outgoing]:
        """The agent's turn as one text message (the rules speak whole sentences)."""
        self._turn("agent", text, at_ms, question_index)
        return [{"type": "text", "token": text, "last": True, "interruptible": True}]

    def _prompt(
        self, text: str, at_ms: int, *, question_index: int | None = None
    ) -> list[Outgoing]:
        """Say something that awaits an answer; silence repeats it."""
        self.state["prompt"] = text
        self.state["silences"] = 0
        return self.say(text, at_ms, question_index=question_index)

    # --- the contract ---

    def greet(self, *, at_ms: int) -> Iterator[Outgoing]:
        from plugins.calls.lifecycle import advance
        from plugins.calls.telephony import Progress

        if self.status_at_open in (QUEUED, RINGING):
            advance(self.call_id, Progress(IN_PROGRESS))
        company = self.job.client_name or self._tenant_name()
        recorded = " This call is recorded." if recording_on(self.tenant_id) else ""
        first = (self.candidate.first_name or "").strip() or "the candidate"
        text = (
            f"Hello, this is the automated screening assistant calling on behalf of {company} "
            "about the "
            f"{self.job.title} position you applied for.{recorded} Am I speaking with {first}?"
        )
        self.state.update(stage=CONFIRM, tries=0, started_at=utcnow().isoformat())
        out = self._prompt(text, at_ms)
        yield from self.deliver(out, at_ms)

    def hear(self, text: str, *, at_ms: int, lang: str | None = None) -> Iterator[Outgoing]:
        if self.finished:
            return
        text = " ".join((text or "").split())[:MAX_UTTERANCE_CHARS]
        if lang:
            self.language = lang
        self._turn("candidate", text, at_ms, self.index)
        if self.brain is not None and self.stage in (QUESTION, WRAP_UP):
            yield from self.brain.turn(text, at_ms=at_ms)
            return
        out = self.decide(text, at_ms)
        yield from self.deliver(out, at_ms)

    def interrupted(self, spoken: str, *, at_ms: int, duration_ms: int) -> None:
        for turn in reversed(self.turns):
            if turn["speaker"] == "agent":
                turn["text"] = " ".join((spoken or "").split())
                turn["interrupted"] = True
                break
        self._save()

    def keypress(self, digit: str, *, at_ms: int) -> Iterator[Outgoing]:
        if self.finished or digit not in KEYS or not self.awaits_yes_no():
            return
        self._turn("candidate", f"[pressed {digit}: {KEYS[digit]}]", at_ms, self.index)
        self._note_answer_text(KEYS[digit])
        out = self.decide(KEYS[digit], at_ms)
        yield from self.deliver(out, at_ms)

    def silence(self, *, at_ms: int) -> Iterator[Outgoing]:
        if self.finished:
            return
        out = self.on_silence(at_ms)
        yield from self.deliver(out, at_ms)

    def close(self, end_reason: str, *, at_ms: int) -> None:
        if self.end_reason is not None:
            return
        if self.ending is not None:  # the agent ended the call; its goodbye may not have gone out
            end_reason = self.ending
        self.finish(end_reason if end_reason in END_REASONS else "failed", at_ms)

    def deliver(self, out: list[Outgoing], at_ms: int) -> Iterator[Outgoing]:
        """Send a turn's messages and persist the turn: the record is written once the first message
        is on its way (or, for a turn that says nothing, at once), so the candidate hears the reply
        while it is written, never after; an ending is persisted before the `end` message. A turn
        cut short by a barge-in is persisted too (the generator's close)."""
        saved = False
        try:
            for message in out:
                if message["type"] == "end" and self.ending is not None:
                    self.finish(self.ending, at_ms)  # writes the whole record
                    saved = True
                yield message
                if not saved:
                    self._save()
                    saved = True
        finally:
            if not saved:
                self._save()

    # --- the rules ---

    def awaits_yes_no(self) -> bool:
        if self.stage in YES_NO_STAGES:
            return True
        return self.stage == QUESTION and self.rubrics[self.state["index"]].answer_type == "yes_no"

    def decide(self, text: str, at_ms: int) -> list[Outgoing]:
        """The rules' answer to one utterance."""
        stage = self.stage
        if nlu.wants_opt_out(text):
            return self.opt_out(at_ms)
        if nlu.not_interested(text):
            return self.end("completed", NOT_INTERESTED_LINE, at_ms, declined=True)
        if nlu.wrong_number(text) or (
            stage == CONFIRM and nlu.yes_or_no(text) is False and not nlu.not_now(text)
        ):
            return self.end("wrong_person", WRONG_PERSON_LINE, at_ms)
        if stage in (CALLBACK_TIME, CALLBACK_OFFER):
            return self._callback_step(text, at_ms)
        if nlu.not_now(text) or (stage == GOOD_TIME and nlu.yes_or_no(text) is False):
            return self._callback_asked(text, at_ms)
        if nlu.asks_to_repeat(text) and self.state.get("prompt"):
            return self.say(self.state["prompt"], at_ms, question_index=self.index)
        if stage == CONFIRM:
            return self._confirm(text, at_ms)
        if stage == GOOD_TIME:
            return self._good_time(text, at_ms)
        if stage == QUESTION:
            return self._answer(text, at_ms)
        if stage == WRAP_UP:
            return self._wrap_up(text, at_ms)
        return []

    def _confirm(self, text: str, at_ms: int) -> list[Outgoing]:
        said = nlu.yes_or_no(text)
        if said is None and nlu.is_question(text) and self.state.get("tries", 0) == 0:
            self.state["tries"] = 1
            first = self.candidate.first_name or "the candidate"
            return self._prompt(
                f"I'm an automated assistant calling about your job application. "
                f"Am I speaking with {first}?",
                at_ms,
            )
        return self._ask_good_time(at_ms)

    def _ask_good_time(self, at_ms: int) -> list[Outgoing]:
        self.state.update(stage=GOOD_TIME, tries=0)
        remaining = sum(1 for entry in self.answers if entry["status"] == PENDING)
        resumed = any(entry["status"] != PENDING for entry in self.answers)
        lead = (
            "Thanks. Last time we were cut off, so I'll pick up where we left off. "
            if resumed
            else "Thanks. "
        )
        return self._prompt(
            f"{lead}I have {remaining} short question{'s' if remaining != 1 else ''}. "
            "Is now a good time?",
            at_ms,
        )

    def _good_time(self, text: str, at_ms: int) -> list[Outgoing]:
        if nlu.yes_or_no(text) is None and nlu.is_question(text):
            return self._candidate_asks(text, at_ms, then=self.state.get("prompt", ""))
        return self.next_question(at_ms, lead="Great. ")

    def next_question(self, at_ms: int, *, lead: str = "") -> list[Outgoing]:
        """Ask the first unanswered question, or wrap up when none is left."""
        index = self.first_open_question()
        if index is None:
            self.state.update(stage=WRAP_UP)
            return self._prompt(f"{lead}{WRAP_UP_PROMPT}".strip(), at_ms)
        self.state.update(stage=QUESTION, index=index)
        question = self.answers[index]["question"]
        return self._prompt(f"{lead}{question}".strip(), at_ms, question_index=index)

    def _note_answer_text(self, text: str) -> None:
        if self.stage == QUESTION:
            entry = self.answers[self.state["index"]]
            entry["answer"] = f"{entry['answer']} {text}".strip() if entry.get("answer") else text

    def _answer(self, text: str, at_ms: int) -> list[Outgoing]:
        index = self.state["index"]
        rule = self.rubrics[index]
        asked, said = split_question(text)
        if said:
            self._note_answer_text(said)
        value = rubrics.read_value(rule, said) if said else None
        if value is not None:
            self.record_answer(index, value, said)
            if asked:
                return self._candidate_asks(asked, at_ms, then_next=True)
            return self.next_question(at_ms, lead="Thank you. ")
        if asked:
            question = self.answers[index]["question"]
            return self._candidate_asks(
                asked, at_ms, then=f"Coming back to my question: {question}", question_index=index
            )
        return self.follow_up_or_move_on(index, at_ms)

    def follow_up_or_move_on(self, index: int, at_ms: int) -> list[Outgoing]:
        entry = self.answers[index]
        if len(entry["follow_ups"]) < self.max_follow_ups:
            line = follow_up_line(self.rubrics[index], len(entry["follow_ups"]))
            entry["follow_ups"].append(line)
            return self._prompt(line, at_ms, question_index=index)
        self.mark_unanswered(index)
        return self.next_question(at_ms, lead="No problem, let's move on. ")

    def _wrap_up(self, text: str, at_ms: int) -> list[Outgoing]:
        if nlu.nothing_more(text) or (nlu.yes_or_no(text) is False and not nlu.is_question(text)):
            return self.end("completed", CLOSING_LINE, at_ms)
        if nlu.yes_or_no(text) is True and not nlu.is_question(text) and len(text.split()) <= 4:
            return self._prompt("Sure, go ahead.", at_ms)
        return self._candidate_asks(text, at_ms, then=ANYTHING_ELSE)

    def _candidate_asks(
        self,
        question: str,
        at_ms: int,
        *,
        then: str = "",
        then_next: bool = False,
        question_index: int | None = None,
    ) -> list[Outgoing]:
        replies = []
        for asked in asked_sentences(question):
            reply = self.answer_candidate(
                asked, knowledge.answer_question(asked, self.job, self.faq)
            )
            if reply not in replies:
                replies.append(reply)
        reply = " ".join(replies)
        if then_next:
            index = self.first_open_question()
            if index is None:
                self.state.update(stage=WRAP_UP)
                return self._prompt(f"{reply} {ANYTHING_ELSE}", at_ms)
            self.state.update(stage=QUESTION, index=index)
            return self._prompt(
                f"{reply} Next: {self.answers[index]['question']}", at_ms, question_index=index
            )
        return self._prompt(f"{reply} {then}".strip(), at_ms, question_index=question_index)

    def on_silence(self, at_ms: int) -> list[Outgoing]:
        """Silence repeats the last prompt once, then moves on."""
        prompt = self.state.get("prompt", "")
        if self.state.get("silences", 0) == 0 and prompt:
            self.state["silences"] = 1
            return self.say(f"Are you still there? {prompt}", at_ms, question_index=self.index)
        stage = self.stage
        if stage == CONFIRM:
            return self._ask_good_time(at_ms)
        if stage == GOOD_TIME:
            return self.next_question(at_ms)
        if stage == QUESTION:
            self.mark_unanswered(self.state["index"])
            return self.next_question(at_ms, lead="Let's move on. ")
        if stage == WRAP_UP:
            return self.end("completed", CLOSING_LINE, at_ms)
        return self.end(
            "hung_up", "I'll let the recruiter know to reach you another time. Goodbye.", at_ms
        )

    # --- callbacks ---

    def _callback_asked(self, text: str, at_ms: int) -> list[Outgoing]:
        when = self._parse_time(text)
        if when is not None:
            return self.book(when, at_ms)
        self.state.update(stage=CALLBACK_TIME, tries=1)
        return self._prompt(ASK_CALLBACK, at_ms)

    def _callback_step(self, text: str, at_ms: int) -> list[Outgoing]:
        if self.stage == CALLBACK_OFFER:
            said = nlu.yes_or_no(text)
            when = self._parse_time(text)
            if when is not None:
                return self.book(when, at_ms)
            if said is True:
                return self.book(dt.datetime.fromisoformat(self.state["offered"]), at_ms)
            self.state.update(stage=CALLBACK_TIME)
            return self._prompt("What day and time would suit you instead?", at_ms)
        when = self._parse_time(text)
        if when is not None:
            return self.book(when, at_ms)
        if nlu.yes_or_no(text) is True and len(text.split()) <= 3:
            return self.next_question(at_ms, lead="Great. ")
        tries = self.state.get("tries", 1)
        if tries < CALLBACK_TRIES:
            self.state["tries"] = tries + 1
            return self._prompt("What day and time works best? For example, tomorrow at 10.", at_ms)
        return self._offer(booking.next_allowed(self.call_id, utcnow()), at_ms)

    def _parse_time(self, text: str) -> dt.datetime | None:
        zone = booking.candidate_zone(self.call_id)
        return nlu.callback_time(
            text, now=dt.datetime.now(dt.timezone.utc), zone=zone, language=self.language
        )

    def book(self, when: dt.datetime, at_ms: int) -> list[Outgoing]:
        """Book `when` (aware) as the next attempt and confirm it aloud; a time outside the job's
        window offers the next allowed one instead."""
        outcome = booking.book(self.call_id, when)
        if outcome.booked_for is not None:
            spoken = booking.spoken_time(outcome.booked_for, booking.candidate_zone(self.call_id))
            self.state["callback_at"] = outcome.booked_for.isoformat()
            return self.end(
                "callback_booked",
                f"Thank you. I've booked a call back for {spoken}. Talk to you then, goodbye.",
                at_ms,
            )
        return self._offer(outcome.next_allowed, at_ms)

    def _offer(self, when: dt.datetime | None, at_ms: int) -> list[Outgoing]:
        if when is None:
            return self.end(
                "hung_up",
                "I can't book a call back right now, so the recruiter will reach out to "
                "you. Goodbye.",
                at_ms,
            )
        spoken = booking.spoken_time(when, booking.candidate_zone(self.call_id))
        self.state.update(stage=CALLBACK_OFFER, offered=when.isoformat())
        return self._prompt(
            f"I can only call within our calling hours. The earliest I can call you back is "
            f"{spoken}. Does that work for you?",
            at_ms,
        )

    # --- the actions (the rules' and a model's) ---

    def record_answer(self, index: int, value, evidence: str) -> None:
        entry, rule = self.answers[index], self.rubrics[index]
        score, meets, note = rubrics.judge(rule, value)
        entry.update(
            value=value,
            score=score,
            meets_requirement=meets,
            note=note,
            status=ANSWERED,
            evidence=evidence.strip() or entry.get("answer"),
        )
        entry.pop("from_call_id", None)

    def mark_unanswered(self, index: int) -> None:
        entry = self.answers[index]
        if entry["status"] == PENDING:
            entry.update(
                status=UNANSWERED, value=None, score=0, meets_requirement=False, note="no answer"
            )

    def answer_candidate(self, question: str, fact: knowledge.Fact | None) -> str:
        """Keep the candidate's question with the answer given (a fact of the job or FAQ, or passed
        on)."""
        reply = fact.text if fact is not None else knowledge.PASS_TO_RECRUITER
        self.candidate_questions.append(
            {
                "question": question,
                "answer": fact.text if fact else None,
                "source": fact.source if fact else None,
                "passed_to_recruiter": fact is None,
                "at_ms": self.turns[-1]["at_ms"] if self.turns else 0,
            }
        )
        return reply

    def opt_out(self, at_ms: int) -> list[Outgoing]:
        from plugins.candidates.consent import CANDIDATE_CALL
        from plugins.candidates.services import opt_out

        opt_out(self.tenant_id, self.candidate.id, source=CANDIDATE_CALL)
        return self.end("opted_out", OPTED_OUT_LINE, at_ms)

    def end(self, reason: str, line: str, at_ms: int, *, declined: bool = False) -> list[Outgoing]:
        """Say the goodbye and end; the end is persisted as the messages are delivered."""
        out = self.say(line, at_ms)
        if declined:
            self.state["declined"] = True
        self.finished, self.ending = True, reason
        return [*out, {"type": "end", "handoffData": json.dumps({"reasonCode": reason})}]

    def finish(self, reason: str, at_ms: int) -> None:
        """Persist the end once: the end reason, duration, the remaining questions unanswered, and
        the status it means (with the assessment when the screening completed)."""
        from plugins.calls.lifecycle import advance
        from plugins.calls.telephony import Progress

        if self.end_reason is not None:
            return
        self.finished, self.end_reason = True, reason
        self.state["stage"] = ENDED
        status, error = end_status(reason, self.answers)
        duration = max(0, round(at_ms / 1000))
        Call.update(
            {**self._record(), Call.end_reason: reason, Call.duration_seconds: duration}
        ).where(Call.id == self.call_id).execute()
        voicemail_left = reason == "voicemail_left"
        if self.record_writer is not None:
            # a relay's conversation: the status, assessment and webhook are a worker's to make
            self.record_writer.complete(
                self.call_id, status, error=error, voicemail_left=voicemail_left
            )
            return
        advance(
            self.call_id,
            Progress(status, transcript=self.turns, voicemail_left=voicemail_left, error=error),
        )

    def _tenant_name(self) -> str:
        from app.data.tenancy import Tenant

        tenant = Tenant.get_or_none(Tenant.id == self.tenant_id)
        return tenant.name if tenant is not None else "the hiring team"


def split_question(text: str) -> tuple[str, str]:
    """(what the candidate asks, what they answer) in one utterance: sentences ending in '?' are
    asked; an utterance that opens like a question and has no other sentence is all asked."""
    import re

    sentences = [part.strip() for part in re.split(r"(?<=[.!?])\s+", text) if part.strip()]
    asked = [s for s in sentences if s.endswith("?")]
    said = [s for s in sentences if not s.endswith("?")]
    if (
        not asked
        and len(sentences) == 1
        and nlu.QUESTION_OPENERS.search(text)
        and nlu.yes_or_no(text) is None
    ):
        return text, ""
    return " ".join(asked), " ".join(said)


def asked_sentences(text: str) -> list[str]:
    """Each question in an utterance ('Is it remote? What's the pay?' is two), at most three."""
    import re

    parts = [part.strip() for part in re.split(r"(?<=\?)\s+", text) if part.strip()]
    return parts[:3] or [text]


def follow_up_line(rule: rubrics.Rubric, asked_before: int) -> str:
    """What the agent asks when an answer lacks what the question asks."""
    if rule.answer_type == "yes_no":
        return "Sorry, is that a yes or a no? You can also press 1 for yes or 2 for no."
    if rule.answer_type == "number":
        return (
            "Could you give me a number? Roughly how many would you say?"
            if asked_before == 0
            else "Even a rough number helps. About how many?"
        )
    if rule.answer_type == "choice":
        options = (
            ", ".join(rule.choices[:-1]) + f" or {rule.choices[-1]}"
            if len(rule.choices) > 1
            else (rule.choices[0] if rule.choices else "")
        )
        return f"Which would it be: {options}?"
    return (
        "Could you tell me a little more about that?"
        if asked_before == 0
        else "Could you give me a concrete example?"
    )
