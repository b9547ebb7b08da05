#include <cuda_runtime.h>
__global__ void stream_copy(const float* __restrict__ in, float* __restrict__ out, const float4* in4, float4* out4,
                            const int2* ii, int2* oi, const double* d, double* od, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = __ldcs(in + i);
  float b = __ldcg(&in[i]);
  float c = __ldca(in + i) + __ldlu(in + i) + __ldcv(in + i);
  __stcs(out + i, a + b + c);
  __stcg(out + i, a);
  __stwb(out + i, b);
  __stwt(out + i, c);
  float4 v = __ldcs(in4 + i);
  __stcs(out4 + i, v);
  __stcg(reinterpret_cast<int4*>(out4) + i, __ldcg(reinterpret_cast<const int4*>(in4) + i));
  __stcs(oi + i, __ldcs(ii + i));
  __stwt(od + i, __ldcs(d + i) * 2.0);
}
