from __future__ import annotations

from worker.scanning.cuda_refs import scan_source

KERNELS = """
extern "C" __global__ void plain(int* x) {}
template <int N>
__global__ void __launch_bounds__(128, 2) bounded(float* y) {}
__global__ static void
split_line(float* z) {}
void host(cudaStream_t s) {
    plain<<<1, 32, 0, s>>>(nullptr);
    bounded<64> <<<dim3(4), dim3(128)>>>(nullptr);
    void* args[] = {nullptr};
    cudaLaunchKernel((void*)split_line, dim3(1), dim3(1), args, 0, s);
}
"""


def test_it_finds_kernels_in_their_usual_spellings() -> None:
    refs = scan_source("k.cu", KERNELS)
    assert [(k.name, k.line) for k in refs.kernels] == [("plain", 2), ("bounded", 4), ("split_line", 5)]


def test_it_finds_chevron_and_api_launches() -> None:
    refs = scan_source("k.cu", KERNELS)
    assert [(k.name, k.line) for k in refs.launches] == [("plain", 8), ("bounded", 9), ("cudaLaunchKernel", 11)]


def test_it_only_counts_cuda_prefixed_api_names() -> None:
    text = "CudaProducer p; xcudaMalloc(); my_cudaFree(); cudaMalloc(&d, 4); NCCL_DEBUG; CUBLAS_OP_N; nvtxRangePop();"
    assert dict(scan_source("a.cu", text).identifiers) == {
        "cudaMalloc": 1, "NCCL_DEBUG": 1, "CUBLAS_OP_N": 1, "nvtxRangePop": 1}


def test_it_notes_inline_ptx_and_tensor_cores_but_leaves_warp_size_to_the_wavefront_scan() -> None:
    text = ('asm volatile("bar.sync 0;");\nunsigned m = __activemask();\nint v = __shfl_xor_sync(0xffffffff, x, 1);\n'
            "wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc; wmma::fill_fragment(acc, 0.f);\n"
            "// asm(\"in a comment\") and wmma::mma_sync in prose\n")
    refs = scan_source("w.cu", text)
    assert dict(refs.constructs) == {"inline-ptx": 1, "tensor-cores": 1}
    assert [(site.name, site.line) for site in refs.construct_sites] == [("inline-ptx", 1), ("tensor-cores", 4)]
