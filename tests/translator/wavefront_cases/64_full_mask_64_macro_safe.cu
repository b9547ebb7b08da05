#define FULL_MASK 0xffffffffffffffffULL
__device__ float bcast0(float v) { return __shfl_sync(FULL_MASK, v, 0); }
__device__ bool all_true(bool p) { return __all_sync(FULL_MASK, p); }
