"""minimum_should_match rewritten as a union of conjunctions (query.at_least) must match and score
as the engine's own minimum_should_match does: the same hits with the same scores (to the last bits
a float sum in another order changes)."""

from __future__ import annotations

import pytest
from tantivy import Occur, Query

from plugins.person.backends.embedded import EmbeddedBackend
from plugins.person.backends.embedded.query import QueryBuilder, at_least, cheaper_as_conjunctions
from plugins.person.profile_fields import FIELDS


@pytest.fixture(scope="module")
def searcher(embedded_index):
    return EmbeddedBackend(embedded_index("scroll")).searcher()


def _ranked(searcher, query):
    """(count, every hit as (score to 4 places, address)) in that order."""
    result = searcher.search(query, 2000, count=True)
    assert result.count == len(result.hits)
    return result.count, sorted(
        (-round(score, 4), address.segment_ord, address.doc) for score, address in result.hits
    )


@pytest.mark.parametrize("wanted", [2, 3])
def test_a_match_with_minimum_should_match_scores_as_the_engine_does(searcher, wanted):
    builder = QueryBuilder(searcher)
    tokens = ["senior", "staff", "software", "engineer", "manager"]
    scored = [builder._exact(FIELDS["job_title"], token, True) for token in tokens]
    unscored = [builder._exact(FIELDS["job_title"], token, False) for token in tokens]
    engine = Query.boolean_query([(Occur.Should, q) for q in scored], wanted)
    count, hits = _ranked(searcher, at_least(scored, unscored, wanted))
    assert (count, hits) == _ranked(searcher, engine)
    assert count > 10


@pytest.mark.parametrize(
    "frequencies, wanted, rewritten",
    [
        # "senior staff software engineer": rare terms to skip along
        ([2_371_659, 225_355, 450_760, 2_207_131], 2, True),
        # fifteen conjunctions of common terms read more than the terms themselves
        ([5_000_000] * 6, 2, False),
        ([10, 20, 30], 1, False),  # any one: a plain disjunction
        ([10, 20, 30], 3, False),  # all of them: a plain conjunction
        ([1] * 8, 4, False),  # 70 conjunctions: too many
    ],
)
def test_the_rewrite_is_chosen_only_where_it_reads_fewer_postings(frequencies, wanted, rewritten):
    assert cheaper_as_conjunctions(frequencies, wanted) is rewritten
