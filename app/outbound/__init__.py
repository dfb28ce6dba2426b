"""Clients of services outside Hirekit that families call: an OpenAI-compatible LLM, and e-mail to
candidates."""
