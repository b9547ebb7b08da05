// Radix-32 FFT step: indices split into 32-point groups; not lanes
__global__ void fft32_stage(const float2* in, float2* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  int group = t >> 5;
  int k = t & 31;
  float ang = -2.f * 3.14159265f * k / 32.f;
  float2 v = in[t], w = make_float2(cosf(ang), sinf(ang));
  out[group * 32 + k] = make_float2(v.x * w.x - v.y * w.y, v.x * w.y + v.y * w.x);
}
