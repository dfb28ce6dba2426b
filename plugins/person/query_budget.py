"""The person query budget: named bounds on what one search may ask of the engine, checked by the
DSL validator before any engine work, and the text the search routes and tools document them
with."""

from __future__ import annotations

from app.config import DEFAULTS

# characters in one text value: match/match_phrase text, term, terms and range values
MAX_TEXT_LENGTH = 1_000
MAX_TOKENS = 64  # analyzed tokens in one match or match_phrase
# characters in one prefix or wildcard pattern (an SQL LIKE pattern becomes one)
MAX_PATTERN_LENGTH = 100
MAX_PATTERN_WILDCARDS = 4  # * and ? in one wildcard pattern (% in an SQL LIKE pattern)
# Characters from a wildcard pattern's first * or ? to its end. The engine compiles a pattern into
# an automaton in one step that holds the interpreter lock, and its cost grows with what follows the
# first wildcard (with 10 wildcards and 100 characters, 50-100 ms, during which every other request
# thread of the worker waited); the text before it is cheap.
MAX_WILDCARD_TAIL = 20
# prefix and wildcard clauses and ranges on keyword fields in one query: each compiles to an
# automaton
MAX_PATTERNS = 5
MAX_CLAUSES = 200  # clauses in one query, bool clauses included
MAX_DEPTH = 20  # levels bool clauses nest
MAX_VALUES = 1_000  # values in one array (terms values, a bool's clause list)
# terms in the whole query: each term and terms value, match token, pattern, range and exists
MAX_TERMS = 1_000
MAX_SQL_LENGTH = 20_000  # characters in one `sql` search (parsed and translated in at most ~90 ms)
# The embedded engine (tantivy 0.27) compiles prefix and wildcard patterns into automata of at most
# this many states (measured: 981 ASCII characters before a trailing *, 52 ?, or a * then one
# character and 6 ?); a pattern past it is 400.
ENGINE_AUTOMATON_STATES = 1_000

TIMEOUT_SETTING = "PERSON_SEARCH_TIMEOUT"

BUDGET_DOC = (
    "Query budget (checked before the search runs; beyond it 400 naming the bound): a text value "
    "(match or match_phrase "
    f"text, term, terms or range value) at most {MAX_TEXT_LENGTH:,} characters; match and "
    "match_phrase at most "
    f"{MAX_TOKENS} tokens each; a prefix or wildcard pattern (an SQL LIKE pattern too) at most "
    f"{MAX_PATTERN_LENGTH} "
    f"characters, and a wildcard at most {MAX_PATTERN_WILDCARDS} * or ? (SQL: %) and at most "
    f"{MAX_WILDCARD_TAIL} characters "
    f"from its first * or ? to its end, at most {MAX_PATTERNS} patterns a "
    "query (a range on a keyword field counts as a pattern: it compiles to an automaton); on the "
    "embedded engine a "
    f"pattern must "
    f"also compile to at most {ENGINE_AUTOMATON_STATES:,} automaton states (several ? after a * "
    "and a character do not); "
    f"at most {MAX_CLAUSES} clauses (bool included), nested at most {MAX_DEPTH} deep; at most "
    f"{MAX_VALUES:,} values in "
    f"one array and {MAX_TERMS:,} terms in the whole query (each term or terms value, match token, "
    "pattern, range and "
    f"exists counts one); sql at most {MAX_SQL_LENGTH:,} characters. Time budget: a search still "
    f"running after HIREKIT_{TIMEOUT_SETTING} seconds "
    f"(default {DEFAULTS[TIMEOUT_SETTING]:g}) is abandoned and answers 503 with Retry-After."
)
