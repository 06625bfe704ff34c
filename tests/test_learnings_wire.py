"""The in-process learnings path runs on plain dataclasses (recall_agent/learnings/wire.py); what it returns must
be exactly what the pydantic wire models say, so a client cannot tell the in-process node from the server."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from uuid import uuid4

import pytest
from pydantic import ValidationError

from recall_agent.learnings import RetrievalRequest, execute_sync, request_of
from recall_agent.learnings.store import open_store
from recall_agent.learnings.wire import Match, Reason, RetrievalResponse, iso_datetime
from recall_agent.models import Learning, LearningMatch, LearningRetrievalRequest, LearningRetrievalResponse
from recall_agent.protocol import MatchType

ERROR = "ModuleNotFoundError: No module named 'requests_oauth'"


def _wire_of(model_cls, data: dict) -> dict:
    """`data` through the pydantic model, validated and dumped back as JSON data."""
    return model_cls.model_validate(data).model_dump(mode="json")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    with open_store(tmp_path) as store:
        store.add(
            Learning(
                repo="shop",
                error_signatures=[ERROR],
                resolution_summary="install requests-oauthlib",
                file_paths_touched=["src/app/client.py"],
                task_type="bug_fix",
                ticket_id="ABC-1",
                created_at=datetime.now(UTC) - timedelta(days=3),
            )
        )
        store.add(
            Learning(repo="other", error_signatures=[ERROR], resolution_summary="pin requests-oauthlib 1.3")
        )
    return tmp_path


def test_a_real_answer_dumps_as_the_wire_model_does(home: Path) -> None:
    request = RetrievalRequest(
        repo="shop", error_text=ERROR, file_paths=["src/app/client.py"], task_type="bug_fix"
    )
    response = execute_sync(request, home=home)
    assert {m.repo for m in response.matches} == {"shop", "other"}  # an error match and a cross-repo one
    assert any(m.why is not None for m in response.matches)
    wire = response.to_wire()
    assert wire == _wire_of(LearningRetrievalResponse, wire)
    assert list(wire["matches"][0]) == list(_wire_of(LearningMatch, wire["matches"][0]))  # same key order
    # the HTTP body: byte for byte what pydantic writes for the same answer
    assert response.to_json() == LearningRetrievalResponse.model_validate(wire).model_dump_json().encode()


def test_a_dict_request_is_validated_by_the_wire_model(home: Path) -> None:
    with pytest.raises(ValidationError, match="max_results"):
        execute_sync({"repo": "shop", "error_text": ERROR, "max_results": 50}, home=home)
    with pytest.raises(ValidationError, match="colour"):
        request_of({"repo": "shop", "colour": "red"})
    plain = request_of({"repo": "shop", "error_text": ERROR, "match_type": "error_signature"})
    assert plain == RetrievalRequest(repo="shop", error_text=ERROR, match_type=MatchType.ERROR_SIGNATURE)
    # defaults are the wire model's
    model = LearningRetrievalRequest(repo="shop")
    assert RetrievalRequest.from_model(model) == RetrievalRequest(repo="shop")


def test_a_wire_string_match_type_becomes_the_enum() -> None:
    assert RetrievalRequest(repo="r", match_type="task_context").match_type is MatchType.TASK_CONTEXT
    with pytest.raises(ValueError):
        RetrievalRequest(repo="r", match_type="fuzzy")


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        datetime(2026, 1, 2, 3, 4, 5, 120, tzinfo=UTC),
        datetime(2026, 1, 2, 3, 4, 5, 123456),
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=-5))),
    ],
)
def test_timestamps_are_written_as_pydantic_writes_them(moment: datetime) -> None:
    match = Match(
        learning_id=uuid4(),
        match_type=MatchType.TASK_CONTEXT,
        similarity=0.7,
        freshness_score=1e-05,
        combined_score=0.0001,
        repo="r",
        resolution_summary="résumé ✓",
        age_days=0,
        created_at=moment,
        why=Reason(kind="KeyError", subjects=["id"], exact=True),
    )
    wire = match.to_wire()
    assert wire["created_at"] == iso_datetime(moment)
    assert json.dumps(wire) == json.dumps(_wire_of(LearningMatch, wire))


def test_filtering_recounts_the_matches() -> None:
    def match(kind: MatchType, repo: str) -> Match:
        now = datetime.now(UTC)
        return Match(uuid4(), kind, 0.9, 1.0, 0.9, repo, "fix", 0, now)

    response = RetrievalResponse(
        query_ms=3,
        matches=[
            match(MatchType.ERROR_SIGNATURE, "a"),
            match(MatchType.TASK_CONTEXT, "a"),
            match(MatchType.ERROR_SIGNATURE, "b"),
        ],
        error_matches_count=2,
        context_matches_count=1,
    )
    only_a = response.only([m for m in response.matches if m.repo == "a"])
    assert (only_a.error_matches_count, only_a.context_matches_count, only_a.query_ms) == (1, 1, 3)


def test_export_still_gives_wire_learnings(home: Path) -> None:
    with open_store(home) as store:
        learnings = list(store.iter_all())
    assert all(isinstance(item, Learning) for item in learnings)
    shop = next(item for item in learnings if item.repo == "shop")
    data = json.loads(shop.model_dump_json())
    assert data["task_type"] == "bug_fix" and data["error_signatures"] == [ERROR]
    assert Learning.model_validate(data).resolution_summary == "install requests-oauthlib"
