"""--skip-excluded-preprocessor-conditional-blocks: branches that are not taken stay as written."""
from __future__ import annotations

from translator import TranslateOptions, translate_source
from translator.conditionals import evaluate, inactive_regions

SOURCE = """#include <cuda_runtime.h>
__global__ void k(float* x) {}
#define HAVE_FAST_PATH 1
void go(float* x) {
#ifdef SOME_MACRO
  k<<<1, 1>>>(x); cudaFree(x);
#elif HAVE_FAST_PATH && CUDART_VERSION >= 11000
  k<<<1, 2>>>(x);
#else
  k<<<1, 3>>>(x);
#endif
#if CUSPARSE_VERSION >= 11600
  cudaDeviceSynchronize();
#endif
}
"""


def test_untaken_branches_are_left_as_written() -> None:
    options = TranslateOptions(launch_style="ggl", skip_excluded_blocks=True)
    text = translate_source(SOURCE, "go.cu", options).text
    assert "  k<<<1, 1>>>(x); cudaFree(x);\n" in text
    assert "  hipLaunchKernelGGL(k, dim3(1), dim3(2), 0, 0, x);\n" in text
    assert "  k<<<1, 3>>>(x);\n" in text
    assert "  hipDeviceSynchronize();\n" in text  # a library version we cannot know: kept active


def test_defines_given_as_options_choose_the_branch() -> None:
    options = TranslateOptions(launch_style="ggl", skip_excluded_blocks=True, defines=(("SOME_MACRO", "1"),))
    text = translate_source(SOURCE, "go.cu", options).text
    assert "hipLaunchKernelGGL(k, dim3(1), dim3(1), 0, 0, x); hipFree(x);" in text
    assert "  k<<<1, 2>>>(x);\n" in text


def test_without_the_switch_every_branch_is_translated() -> None:
    text = translate_source(SOURCE, "go.cu", TranslateOptions(launch_style="ggl")).text
    assert "<<<" not in text and "cudaFree" not in text


def test_expressions_are_evaluated_like_the_preprocessor() -> None:
    macros = {"A": "2", "B": "A * 3", "EMPTY": "1"}
    assert evaluate("defined(A) && B == 6 && !defined C", macros) == 1
    assert evaluate("(A << 2) / 3 > 2 || 0x10 == 16u", macros) == 1
    assert evaluate("UNKNOWN + 1", macros) == 1
    assert evaluate("A ? 1 : 2", macros) is None  # not understood: the branch stays active
    regions = inactive_regions("#if 0\nx\n#else\ny\n#endif\n", {})
    assert 7 in regions and 11 not in regions
