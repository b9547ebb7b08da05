// Copies a KV block; each warp moves one head, lanes stride over the head dimension
__global__ void copy_kv(const float* src, float* dst, int heads, int head_dim) {
  const int warps_per_block = blockDim.x / 32;  // expect: warp-id-32
  const int head = blockIdx.x * warps_per_block + threadIdx.x / 32;  // expect: warp-id-32
  const int lane = threadIdx.x & 31;  // expect: lane-id-32
  if (head >= heads) return;
  for (int d = lane; d < head_dim; d += 32) dst[head * head_dim + d] = src[head * head_dim + d];
}
