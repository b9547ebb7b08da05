__global__ void append_hits(const int* flags, int* queue, int* tail, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int hit = i < n && flags[i];
  unsigned int votes = __ballot_sync(0xFFFFFFFF, hit);  // expect: ballot-32bit, full-mask-32
  if (!votes) return;
  int leader = __ffs(votes) - 1;  // expect: popc-ballot
  int laneId = threadIdx.x & 0x1f;  // expect: lane-id-32
  int start = 0;
  if (laneId == leader) start = atomicAdd(tail, __popc(votes));  // expect: popc-ballot
  start = __shfl_sync(0xFFFFFFFF, start, leader);  // expect: full-mask-32
  if (hit) queue[start + __popc(votes & ((1u << laneId) - 1))] = i;  // expect: popc-ballot, lane-mask-32
}
