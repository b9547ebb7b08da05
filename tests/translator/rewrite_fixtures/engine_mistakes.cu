#include <stdio.h>
#ifdef __cplusplus
extern "C" {
#endif
#include <cuda_runtime.h>
void c_api(float* p);
#ifdef __cplusplus
}
#endif
#include <cublas_v2.h>
#include <cufft.h>
#include <nvrtc.h>
#include <cuda.h>

#ifdef CUBLAS_API_H_
static const char* _cudaGetErrorEnum(cublasStatus_t error) {
  switch (error) { case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS"; default: return "<unknown>"; }
}
#endif
#ifdef _CUFFT_H_
static const char* _cudaGetErrorEnum(cufftResult error) {
  switch (error) { case CUFFT_SUCCESS: return "CUFFT_SUCCESS"; default: return "<unknown>"; }
}
#endif
static const char* _cudaGetErrorEnum(cudaError_t error) { return cudaGetErrorName(error); }
static const char* _cudaGetErrorEnum(CUresult error) {
  static char unknown[] = "<unknown>";
  const char* ret = NULL;
  cuGetErrorName(error, &ret);
  return ret ? ret : unknown;
}
template <typename T> void check(T result, const char* func) {
  if (result) printf("error %s in %s\n", _cudaGetErrorEnum(result), func);
}

__global__ void kern(float* x) { x[threadIdx.x] += 1.0f; }

void launch(float* d, cudaStream_t s) {
  kern << < 1, 32 >> > (d);
  kern << <dim3(1), dim3(32), 0, s >> > (d);
}

int compile(const char* src) {
  nvrtcProgram prog;
  nvrtcCreateProgram(&prog, src, "k.cu", 0, NULL, NULL);
  char* opts[] = {(char*)"--gpu-architecture=compute_80", (char*)"-default-device"};
  if (nvrtcCompileProgram(prog, 2, opts) != NVRTC_SUCCESS) return 1;
  return 0;
}
