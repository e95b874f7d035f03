"""An example Python arm: ranks the files whose name the query mentions, longest name first.

Run it beside the grep baseline on the bundled synthetic bench:

    pytest examples --bench-samples=testdata/release/benchmark/synthetic_v1/samples.jsonl \
        --bench-corpus=testdata/release/corpus/synthetic_v1 --bench-arms=example,grep
"""

import pytest

from pytest_retrieval_bench import Answer, Request


class FileNameArm:
    name = "example"

    def retrieve(self, request: Request) -> Answer:
        text = request.query_text.lower()
        named = [path for path in request.snapshot.paths() if path.rsplit("/", 1)[-1].lower() in text]
        named.sort(key=lambda path: (-len(path.rsplit("/", 1)[-1]), path))
        return Answer(ranking=named)  # nothing named: an empty ranking, i.e. an abstention


@pytest.hookimpl(optionalhook=True)  # the conftest still loads with -p no:retrieval_bench
def pytest_retrieval_bench_arms(config):
    return [FileNameArm()]
