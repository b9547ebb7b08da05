"""Normalisation that lets one machine's signature match another machine's log line."""

from migrator.lib.signatures.normalise import normalise_text


def test_normalisation_reduces_paths_to_basenames_and_numbers_to_a_placeholder() -> (
    None
):
    assert normalise_text("/x/y/foo.cu:12:3: Error") == normalise_text(
        "foo.cu:99:1:   error"
    )
    assert normalise_text("-I/usr/local/cuda/include") == "-i include"
