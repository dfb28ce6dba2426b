"""A small client for OpenAI-compatible chat completions (LLM_URL, LLM_API_KEY, LLM_MODEL,
LLM_TIMEOUT) with JSON answers and fallbacks.

Features that can use a model (question generation, call analysis) call `chat_json`; every failure
is an LlmError, so a caller either handles it or passes `fallback=` to get its deterministic answer
instead."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Callable

import requests
from flask import current_app

log = logging.getLogger("hirekit.llm")

_NO_FALLBACK = object()
CODE_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL | re.IGNORECASE)
CONNECT_TIMEOUT_SECONDS = 3.0


class LlmError(RuntimeError):
    """The model could not be asked or its answer could not be used (not configured, timeout, HTTP
    error, bad JSON)."""


@dataclass(frozen=True)
class LlmClient:
    """One OpenAI-compatible endpoint. `url` is the chat completions URL, or a base URL (…/v1) it is
    appended to."""

    url: str
    model: str
    api_key: str = ""
    timeout: float = 10.0

    @classmethod
    def from_config(cls, config) -> LlmClient:
        if not config.get("LLM_URL"):
            raise LlmError("no model configured (HIREKIT_LLM_URL is empty)")
        return cls(
            url=str(config["LLM_URL"]),
            model=str(config.get("LLM_MODEL") or ""),
            api_key=str(config.get("LLM_API_KEY") or ""),
            timeout=float(config.get("LLM_TIMEOUT") or 10.0),
        )

    @property
    def endpoint(self) -> str:
        base = self.url.rstrip("/")
        return base if base.endswith("/chat/completions") else base + "/chat/completions"

    def chat(
        self,
        messages: list[dict],
        *,
        json_mode: bool = False,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> str:
        """The assistant message's text for `messages`; LlmError on any failure."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
        }
        if max_tokens:
            body["max_tokens"] = max_tokens
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        read_timeout = timeout or self.timeout
        try:
            response = requests.post(
                self.endpoint,
                json=body,
                headers=headers,
                timeout=(min(CONNECT_TIMEOUT_SECONDS, read_timeout), read_timeout),
            )
        except requests.RequestException as error:
            raise LlmError(f"model request failed: {error}") from error
        if response.status_code != 200:
            raise LlmError(f"model answered HTTP {response.status_code}: {response.text[:200]}")
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as error:
            raise LlmError("model answer is not a chat completion") from error
        if not isinstance(content, str):
            raise LlmError("model answer has no text content")
        return content

    def chat_json(self, messages: list[dict], **options) -> Any:
        """The assistant's answer parsed as JSON (a ```json fence around it is allowed); LlmError
        otherwise."""
        return parse_json_answer(self.chat(messages, json_mode=True, **options))


def parse_json_answer(content: str) -> Any:
    text = content.strip()
    fenced = CODE_FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        return json.loads(text)
    except ValueError as error:
        raise LlmError(f"model answer is not JSON: {text[:200]!r}") from error


def configured(config=None) -> bool:
    """Whether a model is configured (HIREKIT_LLM_URL set); features use their rule-based path
    otherwise."""
    config = current_app.config if config is None else config
    return bool(config.get("LLM_URL"))


def chat_json(
    messages: list[dict],
    *,
    fallback: Callable[[], Any] | Any = _NO_FALLBACK,
    config=None,
    **options,
) -> Any:
    """Ask the configured model for a JSON answer; with `fallback`, any LlmError is logged and
    fallback() answers instead."""
    try:
        client = LlmClient.from_config(current_app.config if config is None else config)
        return client.chat_json(messages, **options)
    except LlmError as error:
        if fallback is _NO_FALLBACK:
            raise
        log.warning("model not used, falling back: %s", error)
        return fallback() if callable(fallback) else fallback
