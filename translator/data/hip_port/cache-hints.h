// Stands in for CUDA's cache-hinted loads and stores (__ldcs, __ldcg, __ldca, __ldlu, __ldcv, __stcs,
// __stcg, __stwb, __stwt), which HIP does not declare. AMD GPUs take no per-access cache operator from
// HIP source: the streaming hints (.cs "evict first", .lu "last use") become non-temporal accesses, which
// the AMDGPU backend issues with its streaming cache policy; .cg/.ca/.wb/.wt become plain accesses (the
// line stays in L2, as with .cg); .cv ("fetch again") becomes a volatile read. Vector types (float4, int2,
// ...) load and store their whole native vector; other types (__half, structs) use plain accesses.
#if defined(__HIPCC__)
#include <type_traits>
namespace hip_port {
template <typename T>
__device__ __forceinline__ typename std::enable_if<std::is_arithmetic<T>::value, T>::type nt_load(const T* p) {
  return __builtin_nontemporal_load(p);
}
template <typename T>
__device__ __forceinline__ typename std::enable_if<!std::is_arithmetic<T>::value, T>::type nt_load(const T* p) {
  return *p;
}
template <typename T>
__device__ __forceinline__ typename std::enable_if<std::is_arithmetic<T>::value>::type nt_store(T* p, T value) {
  __builtin_nontemporal_store(value, p);
}
template <typename T>
__device__ __forceinline__ typename std::enable_if<!std::is_arithmetic<T>::value>::type nt_store(T* p, T value) {
  *p = value;
}
// HIP's vector types hold one native vector (three-element ones a struct, accessed plainly).
template <bool Plain> struct vector_access {
  template <typename T, unsigned int N> __device__ static HIP_vector_type<T, N> load(const HIP_vector_type<T, N>* p) {
    using Native = typename HIP_vector_base<T, N>::Native_vec_;
    HIP_vector_type<T, N> value;
    *reinterpret_cast<Native*>(&value) = __builtin_nontemporal_load(reinterpret_cast<const Native*>(p));
    return value;
  }
  template <typename T, unsigned int N> __device__ static void store(HIP_vector_type<T, N>* p, HIP_vector_type<T, N> v) {
    using Native = typename HIP_vector_base<T, N>::Native_vec_;
    __builtin_nontemporal_store(*reinterpret_cast<const Native*>(&v), reinterpret_cast<Native*>(p));
  }
};
template <> struct vector_access<true> {
  template <typename T, unsigned int N> __device__ static HIP_vector_type<T, N> load(const HIP_vector_type<T, N>* p) {
    return *p;
  }
  template <typename T, unsigned int N> __device__ static void store(HIP_vector_type<T, N>* p, HIP_vector_type<T, N> v) {
    *p = v;
  }
};
template <typename T, unsigned int N>
__device__ __forceinline__ HIP_vector_type<T, N> nt_load(const HIP_vector_type<T, N>* p) {
  return vector_access<N == 3>::load(p);
}
template <typename T, unsigned int N>
__device__ __forceinline__ void nt_store(HIP_vector_type<T, N>* p, HIP_vector_type<T, N> value) {
  vector_access<N == 3>::store(p, value);
}
}  // namespace hip_port

template <typename T> __device__ __forceinline__ T __ldcs(const T* p) { return hip_port::nt_load(p); }
template <typename T> __device__ __forceinline__ T __ldlu(const T* p) { return hip_port::nt_load(p); }
template <typename T> __device__ __forceinline__ T __ldcg(const T* p) { return *p; }
template <typename T> __device__ __forceinline__ T __ldca(const T* p) { return *p; }
template <typename T> __device__ __forceinline__ T __ldcv(const T* p) { return *const_cast<const volatile T*>(p); }
template <typename T> __device__ __forceinline__ void __stcs(T* p, T value) { hip_port::nt_store(p, value); }
template <typename T> __device__ __forceinline__ void __stcg(T* p, T value) { *p = value; }
template <typename T> __device__ __forceinline__ void __stwb(T* p, T value) { *p = value; }
template <typename T> __device__ __forceinline__ void __stwt(T* p, T value) { *p = value; }
#endif  // __HIPCC__
