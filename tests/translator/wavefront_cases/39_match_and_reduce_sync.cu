__global__ void dedupe_counts(const int* keys, int* counts, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int key = i < n ? keys[i] : -1;
  unsigned peers = __match_any_sync(0xffffffff, key);  // expect: full-mask-32, ballot-32bit
  int total = __reduce_add_sync(0xffffffff, key >= 0 ? 1 : 0);  // expect: full-mask-32
  if (i < n && (threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&counts[key], total);  // expect: lane-id-32, popc-ballot
}
