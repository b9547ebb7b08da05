"""Fingerprints: the same failure from two machines' logs counts once, different failures apart."""

from migrator.lib.signatures.fingerprints import fingerprint, normalise_failure


def test_the_same_failure_in_other_paths_lines_and_identifiers_has_one_fingerprint() -> None:
    here = fingerprint("/home/a/src/k.cu:12:3: error: use of undeclared identifier 'cudaFoo'")
    there = fingerprint("src/b/x.cu:99:1: error: use of undeclared identifier 'hipBar'")
    assert here == there
    assert here[1] == "error: use of undeclared identifier '<id>'" and len(here[0]) == 20


def test_a_different_failure_gets_a_different_fingerprint() -> None:
    assert fingerprint("ld: cannot find -lcublas")[0] != fingerprint("ld: cannot find -lcudnn")[0]


def test_tool_paths_go_but_quoted_header_names_stay() -> None:
    assert normalise_failure("/usr/bin/ld: cannot find -lcublas: No such file or directory") == (
        "ld: cannot find -lcublas: no such file or directory"
    )
    assert normalise_failure("fatal error: 'cuda_runtime.h' file not found") == (
        "fatal error: 'cuda_runtime.h' file not found"
    )


def test_symbols_addresses_and_versions_become_placeholders() -> None:
    assert normalise_failure("/opt/x/include/foo.h: undefined reference to _ZN3fooEv at 0x7ffd") == (
        "foo.h: undefined reference to <sym> at <hex>"
    )
    assert normalise_failure("libcudart.so.12.4.1 missing") == normalise_failure("libcudart.so.11.8 missing")
