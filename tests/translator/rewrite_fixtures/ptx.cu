#include <cuda_runtime.h>
#include <stdint.h>
__device__ __forceinline__ unsigned lane_id() { unsigned r; asm volatile("mov.u32 %0, %%laneid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned warp_id() { unsigned r; asm("mov.u32 %0, %warpid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned long long gtime() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ unsigned clk() { unsigned c; asm volatile("mov.u32 %0, %%clock;" : "=r"(c)); return c; }
__device__ __forceinline__ unsigned long long clk64() { unsigned long long c; asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)); return c; }
__device__ __forceinline__ unsigned bfe(unsigned x, unsigned pos, unsigned len) { unsigned r; asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(pos), "r"(len)); return r; }
__device__ __forceinline__ int bfes(int x, unsigned pos, unsigned len) { int r; asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(pos), "r"(len)); return r; }
__device__ __forceinline__ unsigned prmt(unsigned a, unsigned b, unsigned s) { unsigned r; asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(s)); return r; }
__device__ __forceinline__ unsigned lop3(unsigned a, unsigned b, unsigned c) { unsigned r; asm("lop3.b32 %0, %1, %2, %3, 0xE8;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
__device__ __forceinline__ unsigned smid() { unsigned r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ __forceinline__ float ldnc(const float* p) { float v; asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(p)); return v; }
__device__ __forceinline__ uint32_t ldnc_u(const uint32_t* p) { uint32_t v; asm("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p)); return v; }
__device__ __forceinline__ void fence() { asm volatile("membar.gl;" ::: "memory"); }
__global__ void k(const float* in, unsigned* out) {
  out[threadIdx.x] = lane_id() + warp_id() + (unsigned)gtime() + clk() + (unsigned)clk64() + bfe(1u, 2, 3) + bfes(-1, 1, 4) +
                     prmt(1, 2, 0x3210) + lop3(1, 2, 3) + smid() + (unsigned)ldnc(in) + ldnc_u(out);
  fence();
}
