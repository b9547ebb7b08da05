// Stands in for NVIDIA's NVTX (nvToolsExt.h) on ROCm's roctx (roctracer/roctx.h; link with -lroctx64).
// The calls with a roctx counterpart are renamed where they are used (nvtxRangePushA -> roctxRangePushA,
// nvtxRangePop, nvtxMarkA, nvtxRangeStartA, nvtxRangeEnd -> roctxRangeStop). What roctx lacks is
// built here: event attributes (only the ASCII message is kept: roctx has no colours or payloads) and
// domains (a domain's ranges and marks carry its name as a prefix, "domain: message"). Naming OS
// threads, streams, events and devices has no roctx call and does nothing.
#include <roctracer/roctx.h>
#include <cstdint>
#include <string>
#define NVTX_VERSION 3
#define NVTX_EVENT_ATTRIB_STRUCT_SIZE ((uint16_t)sizeof(nvtxEventAttributes_t))
typedef roctx_range_id_t nvtxRangeId_t;
enum nvtxColorType_t { NVTX_COLOR_UNKNOWN = 0, NVTX_COLOR_ARGB = 1 };
enum nvtxMessageType_t { NVTX_MESSAGE_UNKNOWN = 0, NVTX_MESSAGE_TYPE_ASCII = 1, NVTX_MESSAGE_TYPE_UNICODE = 2,
                         NVTX_MESSAGE_TYPE_REGISTERED = 3 };
enum nvtxPayloadType_t { NVTX_PAYLOAD_UNKNOWN = 0, NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 = 1, NVTX_PAYLOAD_TYPE_INT64 = 2,
                         NVTX_PAYLOAD_TYPE_DOUBLE = 3, NVTX_PAYLOAD_TYPE_UNSIGNED_INT32 = 4, NVTX_PAYLOAD_TYPE_INT32 = 5,
                         NVTX_PAYLOAD_TYPE_FLOAT = 6 };
union nvtxMessageValue_t { const char* ascii; const wchar_t* unicode; const void* registered; };
struct nvtxEventAttributes_t {
  uint16_t version; uint16_t size; uint32_t category; int32_t colorType; uint32_t color;
  int32_t payloadType; int32_t reserved0;
  union { uint64_t ullValue; int64_t llValue; double dValue; uint32_t uiValue; int32_t iValue; float fValue; } payload;
  int32_t messageType; nvtxMessageValue_t message;
};
struct nvtxDomainRegistration_st { std::string name; };
typedef nvtxDomainRegistration_st* nvtxDomainHandle_t;
namespace hip_port {
inline std::string nvtx_message(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  const char* text = attributes != nullptr && attributes->messageType == NVTX_MESSAGE_TYPE_ASCII
                         ? attributes->message.ascii : nullptr;
  std::string message = text != nullptr ? text : "";
  return domain != nullptr ? domain->name + ": " + message : message;
}
}  // namespace hip_port
inline int nvtxRangePushEx(const nvtxEventAttributes_t* a) { return roctxRangePushA(hip_port::nvtx_message(nullptr, a).c_str()); }
inline void nvtxMarkEx(const nvtxEventAttributes_t* a) { roctxMarkA(hip_port::nvtx_message(nullptr, a).c_str()); }
inline nvtxRangeId_t nvtxRangeStartEx(const nvtxEventAttributes_t* a) {
  return roctxRangeStartA(hip_port::nvtx_message(nullptr, a).c_str());
}
inline nvtxDomainHandle_t nvtxDomainCreateA(const char* name) { return new nvtxDomainRegistration_st{name ? name : ""}; }
inline void nvtxDomainDestroy(nvtxDomainHandle_t domain) { delete domain; }
inline int nvtxDomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return roctxRangePushA(hip_port::nvtx_message(d, a).c_str());
}
inline int nvtxDomainRangePop(nvtxDomainHandle_t) { return roctxRangePop(); }
inline void nvtxDomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  roctxMarkA(hip_port::nvtx_message(d, a).c_str());
}
inline nvtxRangeId_t nvtxDomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return roctxRangeStartA(hip_port::nvtx_message(d, a).c_str());
}
inline void nvtxDomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) { roctxRangeStop(id); }
inline void nvtxNameOsThreadA(uint32_t, const char*) {}
template <typename T> inline void nvtxNameCudaStreamA(T, const char*) {}
template <typename T> inline void nvtxNameCudaEventA(T, const char*) {}
inline void nvtxNameCudaDeviceA(int, const char*) {}
inline void nvtxNameCategoryA(uint32_t, const char*) {}
