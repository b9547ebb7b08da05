// Stream compaction: each warp writes its survivors contiguously
__global__ void compact_positive(const float* in, float* out, int* count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  bool keep = i < n && in[i] > 0.f;
  unsigned ballot = __ballot_sync(0xffffffff, keep);  // expect: ballot-32bit, full-mask-32
  int lane = threadIdx.x % 32;  // expect: lane-id-32
  unsigned lanemask_lt = (1u << lane) - 1;  // expect: lane-mask-32
  int rank = __popc(ballot & lanemask_lt);  // expect: popc-ballot
  int total = __popc(ballot);  // expect: popc-ballot
  int base = 0;
  if (lane == 0) base = atomicAdd(count, total);
  base = __shfl_sync(0xffffffff, base, 0);  // expect: full-mask-32
  if (keep) out[base + rank] = in[i];
}
