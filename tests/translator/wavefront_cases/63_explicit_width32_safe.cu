// Deliberate 32-wide segments (explicit width) with a 64-bit mask: correct on wave32 and wave64.
__device__ float segment32_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffffffffffull, v, o, 32);
  return v;
}
