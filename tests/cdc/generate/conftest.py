"""Generated landing zones shared by the generator's tests (small scales, built once)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from lakehouse.cdc.generate import GenerateOptions, GenerateSummary, generate

from .landing_reader import Landing, read_landing

SMALL_SCALE = 0.01
# Small files, so batches span several files and faults cross file boundaries.
SMALL_FLUSH = 40


@pytest.fixture(scope="session")
def generated(
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[..., tuple[GenerateSummary, Landing]]:
    """Generate once per distinct set of options; return the summary and the landing."""
    cache: dict[tuple, tuple[GenerateSummary, Landing]] = {}

    def build(**overrides) -> tuple[GenerateSummary, Landing]:
        settings = {"scale": SMALL_SCALE, "flush_size": SMALL_FLUSH, "change_batches": 3}
        settings.update(overrides)
        key = tuple(sorted((k, str(v)) for k, v in settings.items()))
        if key not in cache:
            out = tmp_path_factory.mktemp("landing")
            summary = generate(GenerateOptions(out=str(out), **settings))
            cache[key] = (summary, read_landing(Path(out)))
        return cache[key]

    return build


@pytest.fixture(params=["json", "json-schemaless", "unwrapped", "avro"])
def any_format(request: pytest.FixtureRequest, generated) -> tuple[GenerateSummary, Landing]:
    """The standard small landing in each of the four formats."""
    return generated(format=request.param)


@pytest.fixture
def landing_json(generated) -> Landing:
    return generated(format="json")[1]
