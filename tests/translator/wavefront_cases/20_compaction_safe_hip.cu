// The same compaction written for any wavefront: 64-bit ballot, __popcll, __lanemask_lt()
__global__ void compact_hip(const float* in, float* out, int* count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  bool keep = i < n && in[i] > 0.f;
  unsigned long long ballot = __ballot(keep);
  int rank = __popcll(ballot & __lanemask_lt());
  int base = 0;
  if (__lane_id() == 0) base = atomicAdd(count, __popcll(ballot));
  base = __shfl(base, 0);
  if (keep) out[base + rank] = in[i];
}
