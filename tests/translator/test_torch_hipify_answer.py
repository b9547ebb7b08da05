"""The answer PyTorch's hipify leaves in the sandbox is hostile data: it is read field by field."""
from __future__ import annotations

import json

import pytest

from translator.torch_hipify import HipifiedFile, TorchHipifyError, parse_answer

GOOD = {"path": "csrc/cuda/k.cu", "hipified": "csrc/hip/k.hip", "status": "ok"}


def test_a_well_formed_answer_gives_one_list_per_directory() -> None:
    assert parse_answer(json.dumps([[GOOD], []]), 2) == [[HipifiedFile("csrc/cuda/k.cu", "csrc/hip/k.hip", "ok")], []]


@pytest.mark.parametrize("answer", [
    [[{**GOOD, "hipified": "../../etc/cron.d/x"}]],
    [[{**GOOD, "path": "/etc/passwd"}]],
    [[{**GOOD, "status": 3}]],
    [["csrc/cuda/k.cu"]],
    [[GOOD], [GOOD]],  # more directories than were asked for
    {"csrc/cuda/k.cu": GOOD},
])
def test_a_malformed_or_escaping_answer_is_refused_whole(answer: object) -> None:
    with pytest.raises(TorchHipifyError, match="gave no usable answer"):
        parse_answer(json.dumps(answer), 1)


def test_an_answer_that_is_not_json_is_refused() -> None:
    with pytest.raises(TorchHipifyError):
        parse_answer("[[{", 1)
