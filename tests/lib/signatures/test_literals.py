"""Literals that every match of a regex must contain: the prefilter's requirements."""

from migrator.lib.signatures.literals import required_regex_literals


def test_required_literals_of_a_regex_come_from_every_alternative() -> None:
    assert required_regex_literals(r"hipErrorNoDevice|no ROCm-capable device") == [
        "hiperrornodevice",
        "no rocm-capable device",
    ]
    # Python's parser factors the common prefix "cu" out of the alternation.
    assert required_regex_literals(r"cannot find -l(?:cublas|cudnn)\b") == [
        "cannot find -lcu"
    ]
