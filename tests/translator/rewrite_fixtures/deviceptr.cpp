#include <cuda.h>
#include <stdio.h>
int copy_rows(CUdeviceptr base, size_t pitch, int rows, const float* host) {
  for (int r = 0; r < rows; ++r) {
    CUdeviceptr row = base + r * pitch;
    if (cuMemcpyHtoD(row, host + r * 4, 4 * sizeof(float)) != CUDA_SUCCESS) return 1;
  }
  CUdeviceptr end = base + rows * pitch;
  size_t bytes = end - base;
  if (base % 256 != 0) printf("unaligned %llu\n", (unsigned long long)base);
  CUdeviceptr aligned = (base + 255) & ~(CUdeviceptr)255;
  printf("%zu %llu\n", bytes, (unsigned long long)aligned);
  return 0;
}
int make_ctx(CUdevice dev) {
  CUcontext ctx;
  int vmm = 0;
  cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED, dev);
#if CUDA_VERSION >= 12050
  CUctxCreateParams params = {};
  return cuCtxCreate_v4(&ctx, &params, 0, dev) != CUDA_SUCCESS || !vmm;
#else
  return cuCtxCreate(&ctx, 0, dev) != CUDA_SUCCESS || !vmm;
#endif
}
