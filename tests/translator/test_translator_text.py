"""Words, comments, string literals and includes."""
from __future__ import annotations

from pathlib import Path

import pytest

from translator import TranslateOptions, translate_source


def test_it_keeps_partial_words(hip52: TranslateOptions) -> None:
    source = "int mycudaMalloc, cudaMalloc_count, my_cudaFree; void cudaMallocWrapper();\n"
    result = translate_source(source, "", hip52)
    assert result.text == source
    assert not result.account.changed


STRINGS = '''void f(float** p) {
  // cudaMalloc allocates; see cudaFree
  /* cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice); */
  const char* msg = "cudaMalloc failed: cudaErrorMemoryAllocation";
  char q = '"'; cudaMalloc(p, 4); const char* e = "\\"cudaFree\\" cudaMallocs:cudaFree";
}
'''


def test_it_translates_whole_words_of_string_literals_and_leaves_comments(hip52: TranslateOptions) -> None:
    result = translate_source(STRINGS, "", hip52)
    expected = STRINGS.replace("cudaMalloc(p, 4)", "hipMalloc(p, 4)").replace(
        '"cudaMalloc failed: cudaErrorMemoryAllocation"', '"hipMalloc failed: hipErrorOutOfMemory"')
    assert result.text == '#include <hip/hip_runtime.h>\n' + expected
    assert result.account.converted == {"memory": 1, "string-literal": 2}


def test_it_leaves_string_literals_alone_when_asked(hip52: TranslateOptions) -> None:
    options = hip52.replace(translate_strings=False)
    result = translate_source(STRINGS, "", options)
    assert result.text == '#include <hip/hip_runtime.h>\n' + STRINGS.replace("cudaMalloc(p, 4)", "hipMalloc(p, 4)")


def test_it_handles_an_empty_file(hip52: TranslateOptions) -> None:
    result = translate_source("", "empty.cu", hip52)
    assert result.text == "" and not result.account.changed
    assert result.account.to_dict()["converted_total"] == 0


def test_it_drops_duplicate_runtime_includes_and_keeps_quote_style(hip52: TranslateOptions) -> None:
    source = '#include "cuda.h"\n#include "cuda_runtime.h"\n#include <device_launch_parameters.h>\n#include <stdio.h>\n'
    result = translate_source(source, "", hip52)
    assert result.text == '#include "hip/hip_runtime.h"\n#include <stdio.h>\n'
    assert result.account.converted == {"header": 3}


def test_it_adds_the_runtime_include_for_runtime_api_use_without_kernels(hip52: TranslateOptions) -> None:
    result = translate_source("#include <vector>\nvoid f() { cudaDeviceReset(); }\n", "main.cpp", hip52)
    assert result.text == '#include <hip/hip_runtime.h>\n#include <vector>\nvoid f() { hipDeviceReset(); }\n'
    plain = translate_source("#include <vector>\nint f() { return 1; }\n", "main.cpp", hip52)
    assert not plain.account.changed


def test_it_leaves_a_local_cuda_h_include_alone(tmp_path: Path, hip52: TranslateOptions) -> None:
    (tmp_path / "cuda.h").write_text("#pragma once\nint project_helper();\n")
    source = '#include "cuda.h"\n#include <cuda_runtime.h>\nint g() { return project_helper(); }\n'
    result = translate_source(source, str(tmp_path / "main.cu"), hip52)
    assert result.text == '#include "cuda.h"\n#include <hip/hip_runtime.h>\nint g() { return project_helper(); }\n'
    assert result.account.warnings == ['"cuda.h" is the project\'s own header; left as is']


def test_it_does_not_redefine_a_projects_own_copy_of_a_cuda_enum(hip52: TranslateOptions) -> None:
    source = """enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1 };
#define cudaSuccess 0
int copy(cudaMemcpyKind k) { return k == cudaMemcpyHostToDevice ? cudaSuccess : 1; }
"""
    result = translate_source(source, "", hip52)
    assert result.text == source
    assert result.account.kept_local == ["cudaMemcpyHostToDevice", "cudaMemcpyHostToHost", "cudaMemcpyKind",
                                         "cudaSuccess"]
    assert result.account.unconverted == []


def test_names_hipify_does_not_list_are_not_reported_as_unconverted_api(hip52: TranslateOptions) -> None:
    source = """#include <cuda_runtime.h>
bool on_gpu(const at::Tensor& t) { return t.device().type() == at::DeviceType::CUDA; }
int run() { int cudaResult = 0; CUresult status = CUDA_SUCCESS; return cudaResult + status; }
"""
    result = translate_source(source, "run.cpp", hip52)
    assert result.account.unconverted == []
    assert [f["name"] for f in result.account.cuda_like] == ["cudaResult"]
    assert "at::DeviceType::CUDA;" in result.text and "int cudaResult = 0; hipError_t status = hipSuccess;" in result.text


def test_the_runtime_include_goes_where_hipify_clang_puts_it(hip52: TranslateOptions) -> None:
    def placed(source: str, path: str = "k.cu") -> str:
        return translate_source(source, path, hip52).text

    body = "__global__ void k() {}\n"
    assert placed("// header comment\n#include <cooperative_groups.h>\n" + body) == (
        "// header comment\n#include <hip/hip_runtime.h>\n#include <hip/hip_cooperative_groups.h>\n" + body)
    assert placed("#pragma once\n#include <stdio.h>\n" + body).startswith(
        "#pragma once\n#include <hip/hip_runtime.h>\n#include <stdio.h>\n")
    guarded = "/* guard */\n#ifndef K_CUH\n#define K_CUH\n#include <vector>\n" + body + "#endif  // K_CUH\n"
    assert placed(guarded, "k.cuh").startswith("/* guard */\n#ifndef K_CUH\n#include <hip/hip_runtime.h>\n#define K_CUH\n")
    assert placed("/*\n#include <x.h>\n*/\n" + body).startswith("#include <hip/hip_runtime.h>\n/*\n#include <x.h>")
    assert placed("int plain() { return 1; }\n", "plain.cpp") == "int plain() { return 1; }\n"


def test_options_are_frozen_and_replace_makes_a_changed_copy() -> None:
    options = TranslateOptions(roc_libraries=True)
    changed = options.replace(translate_strings=False)
    assert changed == TranslateOptions(roc_libraries=True, translate_strings=False) != options
    assert hash(changed) == hash(TranslateOptions(roc_libraries=True, translate_strings=False))
    assert options.translate_strings and not changed.translate_strings and changed.roc_libraries
    with pytest.raises(AttributeError):
        options.roc_libraries = False
    with pytest.raises(TypeError, match="no_such_option"):
        options.replace(no_such_option=True)
