#include <cuda.h>
#include <cstdio>
#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { printf("error %d at %d\n", (int)r_, __LINE__); return 1; } } while (0)

int run(CUmodule module, CUdeviceptr a, CUdeviceptr b, int n, float scale, CUstream stream) {
  CUfunction f;
  CHECK(cuModuleGetFunction(&f, module, "compare"));
  CHECK(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_L1));
  int offset = 0;
  CHECK(cuParamSetv(f, offset, &a, sizeof(a)));
  offset += sizeof(a);
  CHECK(cuParamSetv(f, offset, &b, sizeof(b)));
  offset += sizeof(b);
  CHECK(cuParamSeti(f, offset, n));
  offset += sizeof(int);
  CHECK(cuParamSetf(f, offset, scale));
  offset += sizeof(float);
  CHECK(cuParamSetSize(f, offset));
  CHECK(cuFuncSetBlockShape(f, 256, 1, 1));
  CHECK(cuFuncSetSharedSize(f, 1024));
  CHECK(cuLaunchGridAsync(f, (n + 255) / 256, 1, stream));
  CHECK(cuLaunchGrid(f, 1, 1));
  CHECK(cuLaunch(f));
  return 0;
}
