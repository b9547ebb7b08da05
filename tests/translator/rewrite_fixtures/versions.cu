#include <cuda_runtime.h>
#include <cuda.h>
__device__ float warp_sum(float v) {
#if (CUDART_VERSION >= 9000)
  for (int o = warpSize / 2; o > 0; o >>= 1) v += __shfl_down_sync(__activemask(), v, o);
#else
  for (int o = warpSize / 2; o > 0; o >>= 1) v += __shfl_down(v, o);
#endif
  return v;
}
#if defined(CUDA_VERSION) && CUDA_VERSION >= 13000
#define HAS_NEW_API 1
#else
#define HAS_NEW_API 0
#endif
__global__ void k(float* x) { x[0] = warp_sum(x[threadIdx.x]) + HAS_NEW_API; }

int launch(float* x, cudaStream_t stream) {
#if CUDART_VERSION >= 11080
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(1);
  config.blockDim = dim3(64);
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, k, x) != cudaSuccess;
#else
  k<<<1, 64, 0, stream>>>(x);
  return cudaGetLastError() != cudaSuccess;
#endif
}
