"""Notebook search benchmark: ``search_entries`` over 10,000 entries on PostgreSQL.

Run: .venv/bin/python bench/search_bench.py [--entries 10000] [--repeats 5] [--explain]

Target (issue 6): p95 under 30 ms with 10,000 entries. A scratch database (bench/_benchdb.py) gets
the 20 seed entries, then generated entries built from a vocabulary of CUDA/HIP/compiler/linker
terms (bulk-inserted, then one UPDATE sets ``search_vector`` exactly as
``notebook.actions.refresh_search_vector`` does, then ANALYZE). About 50 queries (single words,
phrases, pasted raw error lines) run ``repeats`` times each, first with the seed entries only and
then with the full set, side by side. Pasted lines also run the signature matcher over every
signature; its compile is cached per process, so its first-call cost is printed on its own, as is a
breakdown of one search into its parts. ``--explain`` prints EXPLAIN ANALYZE of the slowest query.
"""
from __future__ import annotations

import argparse
import random
import time
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING

from _benchdb import load_note, percentile, scratch_django

if TYPE_CHECKING:
    from migrator.notebook.models import Entry, Signature

SYMBOLS = (
    "cudaMalloc cudaMemcpy cudaMemcpyAsync cudaFree cudaMallocManaged cudaStreamCreate cudaEventRecord "
    "cudaDeviceSynchronize cudaGetDeviceProperties cudaLaunchKernel cudaGraphInstantiate cudaMemsetAsync "
    "cudaFuncSetAttribute cudaOccupancyMaxActiveBlocksPerMultiprocessor cudaHostAlloc cudaIpcGetMemHandle "
    "cublasSgemm cublasGemmEx cublasLtMatmul cublasCreate cusparseSpMV cusolverDnSgetrf curandGenerateUniform "
    "cufftExecC2C cudnnConvolutionForward ncclAllReduce ncclCommInitRank __shfl_down_sync __ballot_sync "
    "__activemask atomicAdd_block __syncwarp cooperative_groups::this_grid nvtxRangePushA thrust::device_vector "
    "cub::DeviceReduce::Sum __half2float __float2bfloat16 wmma::mma_sync hipMalloc hipMemcpy hipLaunchKernelGGL "
    "hipModuleLaunchKernel hipblasSgemm rocblas_sgemm hipStreamSynchronize hipDeviceSynchronize"
).split()
HEADERS = (
    "cuda_runtime.h cuda.h cublas_v2.h cublasLt.h cusparse.h cusolverDn.h curand_kernel.h cufft.h cudnn.h "
    "nccl.h nvToolsExt.h cuda_fp16.h cuda_bf16.h mma.h cooperative_groups.h thrust/device_vector.h "
    "cub/cub.cuh hip/hip_runtime.h hipblas/hipblas.h rocblas/rocblas.h"
).split()
LIBS = "cudart cublas cublasLt cusparse cusolver curand cufft cudnn nccl nvToolsExt cuda amdhip64 rocblas hipblas rccl".split()
ARCHS = "gfx90a gfx942 gfx1100 gfx1030 gfx908 sm_80 sm_90 sm_70".split()
FLAGS = "-arch=sm_80 --use_fast_math -Xptxas -lineinfo --expt-relaxed-constexpr -rdc=true --offload-arch -fgpu-rdc".split()
TOOLS = "hipcc nvcc clang++ ld ld.lld cmake make ninja python pip torch sglang vllm docker".split()
MODULES = "reduce scan softmax layernorm attention gemm conv transpose histogram sort topk embedding rope".split()
ERRORS = (
    "fatal error: '{header}' file not found",
    "undefined reference to `{symbol}'",
    "cannot find -l{lib}",
    "error: use of undeclared identifier '{symbol}'",
    "error while loading shared libraries: lib{lib}.so.12: cannot open shared object file",
    "ld.lld: error: undefined symbol: {symbol}",
    "clang: error: unsupported option '{flag}'",
    "error: no matching function for call to '{symbol}'",
    "warning: hipify: unconverted CUDA API call '{symbol}'",
    "hipErrorNoBinaryForGpu: Unable to find code object for {arch}",
    "error: '{symbol}' was not declared in this scope",
    "{tool}: error: linker command failed with exit code 1",
    "Memory access fault by GPU node-2 on address 0x7f in {module}_kernel",
    "RuntimeError: HIP error: invalid device function in {module}",
    "error: cannot compile {module}.hip for {arch}: unsupported builtin '{symbol}'",
)
CAUSES = (
    "The {module} kernel calls {symbol}, which hipify leaves untouched in this version, so {tool} sees a CUDA name.",
    "The build script still links lib{lib} from /usr/local/cuda/lib64 instead of the ROCm library.",
    "{header} is included directly; the HIP build has no such header on the include path.",
    "Code built with {flag} assumes a warp of 32 lanes; on {arch} a wavefront has 64.",
    "The wheel pulls the CUDA build of {lib}, which cannot load on a ROCm machine.",
    "The kernel was compiled for {arch} only, and the GPU in this machine reports a different target.",
)
FIXES = (
    "Replace {symbol} with its HIP equivalent and rebuild with `{tool}`.",
    "Link the ROCm library instead: `-l{lib}` becomes `-lamdhip64` or the roc/hip library of the same name.",
    "Include `hip/hip_runtime.h` instead of `{header}` and let hipify map the API calls.",
    "Pass `--offload-arch={arch}` so a code object for the GPU is built.",
    "Use the 64-lane mask type and `__ballot` for warp votes in the {module} kernel.",
    "Set `HIP_PLATFORM=amd` before running `{tool}`; remove `{flag}` from the build flags.",
)
TITLES = (
    "{symbol} fails in the {module} kernel with {tool}", "{tool} cannot find lib{lib} on {arch}",
    "Undeclared {symbol} after hipify", "{header} missing in the {module} sources", "Wrong results from {module} on {arch}",
    "The {lib} wheel pulls CUDA libraries", "Crash in {symbol} under {tool}", "{tool} rejects {flag}",
    "Slow {module} after porting {symbol}", "Hang in {symbol} across GPUs",
)
CONTEXTS = ("while building {module} for {arch}", "when running the {module} test", "at link time with {tool}",
            "on import in python", "after hipify of {header}", "in the CI job on {arch}")
WORDS = "hipcc cublas warp nan rccl illegal linker undeclared offload gfx942 bf16 container cmake wheel hipify nccl softmax memory".split()
PHRASES = (
    "cannot find cublas", "warp size 32", "illegal memory access", "no binary for gpu", "undefined reference",
    "hip runtime not linked", "sglang out of memory", "cuda visible devices", "fp16 nan", "missing cuda header",
    "findcuda cmake", "library path cuda", "unconverted api call", "invalid launch configuration", "rccl hang",
    "port validation",
)
PASTED = (
    "/home/x/a.cu:3:10: fatal error: 'cuda_runtime.h' file not found",
    "/usr/bin/ld: cannot find -lcublas",
    "ld.lld: error: undefined symbol: cudaMalloc",
    "src/kernels/softmax.hip:88:5: error: use of undeclared identifier '__shfl_down_sync'",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
    "Memory access fault by GPU node-2 (Agent handle: 0x55d1c0) on address 0x7f3a. Reason: Page not present.",
    "CMake Error at CMakeLists.txt:12 (find_package): Could NOT find CUDA (missing: CUDA_TOOLKIT_ROOT_DIR)",
    "./app: error while loading shared libraries: libcudart.so.12: cannot open shared object file: No such file or directory",
    "ERROR: Could not find a version that satisfies the requirement nvidia-cublas-cu12==12.1.3.1",
    "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1",
    "clang: error: unsupported option '--expt-relaxed-constexpr'",
    "warning: hipify: unconverted CUDA API call 'cudaGraphInstantiate' at src/graph.cu:41",
    "hipcc: error: linker command failed with exit code 1 (use -v to see invocation)",
    "torch.cuda.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB",
    "NCCL WARN Call to ibv_reg_mr failed; rccl timeout after 1800000 ms in ncclAllReduce",
)


def fill(template: str, rng: random.Random) -> str:
    return template.format(
        symbol=rng.choice(SYMBOLS), header=rng.choice(HEADERS), lib=rng.choice(LIBS), arch=rng.choice(ARCHS),
        flag=rng.choice(FLAGS), tool=rng.choice(TOOLS), module=rng.choice(MODULES),
    )


def generated_entry(index: int, rng: random.Random) -> tuple[Entry, list[Signature]]:
    """One realistic entry and its signatures (text, sometimes a regex) from the vocabulary."""
    from migrator.notebook.models import Entry, Signature

    lines = [fill(rng.choice(ERRORS), rng) for _ in range(rng.randint(1, 3))]
    module, symbol = rng.choice(MODULES), rng.choice(SYMBOLS)
    stages = rng.sample(["scan", "hipify", "compile", "link", "smoke"], rng.randint(1, 2))
    tags = rng.sample(["headers", "linking", "runtime", "wavefront", "python", "cmake", "containers", "memory", "precision"], 2)
    signatures = [Signature(kind="text", pattern=line[:500]) for line in lines]
    if rng.random() < 0.2:
        signatures.append(Signature(kind="regex", pattern=rf"{symbol.split('::')[-1]}\w* (?:failed|not found) in {module}_\d+"))
    entry = Entry(
        slug=f"gen-{index}", origin="import", title=f"{fill(rng.choice(TITLES), rng)} (#{index})",
        symptom=f"{lines[0]} {fill(rng.choice(CONTEXTS), rng)}. " + " ".join(lines[1:]),
        cause=" ".join(fill(rng.choice(CAUSES), rng) for _ in range(2)),
        fix="\n\n".join(fill(rng.choice(FIXES), rng) for _ in range(2)), stages=stages, tags=tags,
        search_extra=" ".join([s.pattern for s in signatures] + tags + stages),
    )
    return entry, signatures


def load_generated(count: int) -> float:
    """Bulk-insert ``count`` entries and their signatures, index them in one UPDATE; returns seconds."""
    from django.db import connection, transaction

    from migrator.notebook.models import Entry, Signature

    started, rng = time.perf_counter(), random.Random(6)
    pairs = [generated_entry(i, rng) for i in range(count)]
    with transaction.atomic():
        entries = Entry.objects.bulk_create([entry for entry, _ in pairs], batch_size=1000)
        for entry, (_, signatures) in zip(entries, pairs):
            for signature in signatures:
                signature.entry = entry
        Signature.objects.bulk_create([s for _, signatures in pairs for s in signatures], batch_size=2000)
        update_all_search_vectors()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return time.perf_counter() - started


def update_all_search_vectors() -> None:
    """The expression of ``notebook.actions.refresh_search_vector``, for all rows in one UPDATE."""
    from django.contrib.postgres.search import SearchVector

    from migrator.notebook.models import Entry

    vector = (
        SearchVector("title", weight="A", config="english")
        + SearchVector("symptom", "search_extra", weight="B", config="english")
        + SearchVector("cause", "fix", weight="C", config="english")
    )
    Entry.objects.update(search_vector=vector)


def query_set() -> list[tuple[str, str]]:
    return [("word", q) for q in WORDS] + [("phrase", q) for q in PHRASES] + [("pasted", q) for q in PASTED]


def time_queries(repeats: int) -> dict[str, list[tuple[float, str]]]:
    """Seconds per call of ``search_entries``, by kind (and "all"), each with its query text."""
    from migrator.notebook.search import search_entries

    times: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for _ in range(repeats):
        for kind, text in query_set():
            started = time.perf_counter()
            search_entries(text)
            elapsed = time.perf_counter() - started
            times[kind].append((elapsed, text))
            times["all"].append((elapsed, text))
    return times


def first_call_costs() -> tuple[float, float, int]:
    """Compile time of the signature matcher, first pasted-line search after it, signature count."""
    from migrator.notebook import matching
    from migrator.notebook.models import Signature
    from migrator.notebook.search import search_entries

    matching._cache["fingerprint"] = None  # as in a fresh process
    started = time.perf_counter()
    matching.current_matcher()
    compile_s = time.perf_counter() - started
    matching._cache["fingerprint"] = None
    started = time.perf_counter()
    search_entries(PASTED[0])
    return compile_s, time.perf_counter() - started, Signature.objects.count()


def breakdown(text: str, repeats: int = 20) -> dict[str, float]:
    """Median seconds of each part of one search: fingerprint query, matcher, full-text query."""
    from migrator.notebook import matching, search
    from migrator.notebook.models import Entry

    parts: dict[str, Callable[[], object]] = {
        "fingerprint query (2 aggregates)": lambda: matching._fingerprint(),
        "matcher (fingerprint + match)": lambda: matching.current_matcher().match(text),
        "full-text query + headline": lambda: search._text_hits(Entry.objects.all(), text, 20),
        "search_entries total": lambda: search.search_entries(text),
    }
    result: dict[str, float] = {}
    for label, call in parts.items():
        samples = []
        for _ in range(repeats):
            started = time.perf_counter()
            call()
            samples.append(time.perf_counter() - started)
        result[label] = percentile(samples, 0.5)
    return result


def explain(text: str) -> str:
    """EXPLAIN ANALYZE of the full-text query that ``search_entries`` sends for ``text``."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from migrator.notebook.search import search_entries

    with CaptureQueriesContext(connection) as queries:
        search_entries(text)
    sql = next(q["sql"] for q in queries.captured_queries if "ts_rank" in q["sql"])
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
        return "\n".join(row[0] for row in cursor.fetchall())


def stats(samples: list[tuple[float, str]]) -> tuple[float, float, float]:
    ms = [s * 1000 for s, _ in samples]
    return percentile(ms, 0.5), percentile(ms, 0.95), max(ms)


def report(columns: dict[str, dict[str, list[tuple[float, str]]]]) -> None:
    """One row per query kind and statistic, one column per database state, in ms."""
    widths = [max(14, len(name)) for name in columns]
    print("\n" + f"{'queries':22}" + "  ".join(f"{name:>{w}}" for name, w in zip(columns, widths)))
    for kind in ("word", "phrase", "pasted", "all"):
        cells = [stats(times[kind]) for times in columns.values()]
        count = len(next(iter(columns.values()))[kind])
        for index, label in enumerate(("p50 ms", "p95 ms", "max ms")):
            head = f"{kind} (n={count})" if index == 0 else ""
            row = "  ".join(f"{cell[index]:>{w}.2f}" for cell, w in zip(cells, widths))
            print(f"{head:15}{label:7}{row}")


def slowest(times: dict[str, list[tuple[float, str]]], count: int = 5) -> list[tuple[float, str]]:
    """The queries with the highest median time, slowest first."""
    by_text: dict[str, list[float]] = defaultdict(list)
    for seconds, text in times["all"]:
        by_text[text].append(seconds)
    ranked = sorted(((percentile(v, 0.5), text) for text, v in by_text.items()), reverse=True)
    return ranked[:count]


def vacuum_analyze() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE notebook_entry")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=10_000, help="total entries, seed included")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--explain", action="store_true", help="print EXPLAIN ANALYZE of the slowest query")
    args = parser.parse_args()
    print(load_note())
    with scratch_django("search", broker_db=6, cache_db=5):
        from migrator.notebook.actions import load_seed
        from migrator.notebook.models import Entry

        load_seed()
        time_queries(1)  # warm-up: connection, matcher compile for the seed
        columns = {"20 seed": time_queries(args.repeats)}
        loaded_s = load_generated(args.entries - Entry.objects.count())
        total = Entry.objects.count()
        print(f"{total} entries loaded ({loaded_s:.1f} s for the generated ones, one UPDATE for the vectors, ANALYZE)")
        compile_s, first_s, signatures = first_call_costs()
        print(f"first call after a change: matcher compile over {signatures} signatures {compile_s * 1000:.0f} ms; "
              f"first pasted-line search {first_s * 1000:.0f} ms (compile included)")
        time_queries(1)
        columns[f"{total} ANALYZEd"] = time_queries(args.repeats)
        vacuum_analyze()  # merges the GIN pending list, as autovacuum eventually does
        time_queries(1)
        columns[f"{total} VACUUMed"] = large = time_queries(args.repeats)
        report(columns)
        print(f"\nslowest queries, {total} entries after VACUUM (median of {args.repeats}):")
        for seconds, text in slowest(large):
            print(f"  {seconds * 1000:7.2f} ms  {text[:90]}")
        worst = slowest(large, 1)[0][1]
        print(f"\nbreakdown (median of 20) for {worst[:70]!r}:")
        for label, seconds in breakdown(worst).items():
            print(f"  {label:36} {seconds * 1000:7.2f} ms")
        p95 = stats(large["all"])[1]
        print(f"\ntarget: p95 < 30 ms over {total} entries; measured p95 {p95:.2f} ms ({p95 / 30:.2f} of the target)")
        if args.explain or p95 > 30:
            print(f"\nEXPLAIN ANALYZE of the full-text query for {worst[:70]!r}:\n{explain(worst)}")
    print(load_note())


if __name__ == "__main__":
    main()
