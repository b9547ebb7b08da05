#define WARP_SIZE 32
#define NUM_THREADS 128
#define NUM_WARPS (NUM_THREADS / WARP_SIZE)  // expect: warp-id-32

template <int HEAD_SIZE>
__global__ void paged_attention_qk(const float* q, const float* k, float* logits, int ctx_len) {
  const int thread_idx = threadIdx.x;
  const int warp_idx = thread_idx / WARP_SIZE;  // expect: warp-id-32
  const int lane = thread_idx % WARP_SIZE;  // expect: lane-id-32
  __shared__ float red_smem[2 * NUM_WARPS];
  float qk = 0.f;
  for (int t = warp_idx; t < ctx_len; t += NUM_WARPS) {
    for (int d = lane; d < HEAD_SIZE; d += WARP_SIZE) qk += q[d] * k[t * HEAD_SIZE + d];
#pragma unroll
    for (int mask = WARP_SIZE / 2; mask >= 1; mask /= 2) qk += __shfl_xor_sync(uint32_t(-1), qk, mask);  // expect: reduction-offset-16, full-mask-32
    if (lane == 0) logits[t] = qk;
  }
  if (lane == 0) red_smem[warp_idx] = qk;
}
