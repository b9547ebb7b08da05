// Warp-aggregated atomic increment (the well-known pattern)
__device__ int atomicAggInc(int* ctr) {
  unsigned int active = __activemask();  // expect: ballot-32bit
  int leader = __ffs(active) - 1;  // expect: popc-ballot
  int change = __popc(active);  // expect: popc-ballot
  int lane_mask_lt = (1 << (threadIdx.x & 31)) - 1;  // expect: lane-mask-32, lane-id-32
  unsigned int rank = __popc(active & lane_mask_lt);  // expect: popc-ballot
  int warp_res;
  if (rank == 0) warp_res = atomicAdd(ctr, change);
  warp_res = __shfl_sync(active, warp_res, leader);
  return warp_res + rank;
}

__global__ void filter_k(int* dst, int* nres, const int* src, int n) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < n && src[i] > 0) dst[atomicAggInc(nres)] = src[i];
}
