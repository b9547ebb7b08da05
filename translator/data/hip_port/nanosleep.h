// Stands in for CUDA's __nanosleep(ns), which HIP does not declare. CUDA promises a sleep of roughly
// [0, 2 * ns]; here the wave waits on the constant-rate wall clock (wall_clock64, 100 MHz on gfx90a,
// gfx942 and gfx11: 10 ns a tick), sleeping in s_sleep slots (64 clocks each) between reads.
#if defined(__HIPCC__)
__device__ __forceinline__ void __nanosleep(unsigned int ns) {
  const long long start = wall_clock64();
  const long long ticks = ns / 10 + 1;
  while (wall_clock64() - start < ticks) __builtin_amdgcn_s_sleep(1);
}
#endif  // __HIPCC__
