// NVML (libnvidia-ml.so.1), loaded at run time with dlopen: rankscoped must start on nodes
// without an NVIDIA driver, and must not link against a library only the driver installs.
// Only the handful of entry points the GPU monitor calls are declared here, with the ABI of
// nvml.h (stable since NVML 10; the _v2/_v3 names are the ones current drivers export).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "rankscope/base/status.h"

namespace rankscope::telemetry::nvml {

using Return = int;  // nvmlReturn_t
inline constexpr Return kSuccess = 0;
inline constexpr Return kInsufficientSize = 7;
using Device = struct DeviceOpaque*;  // nvmlDevice_t

struct Utilization {
  unsigned int gpu, memory;  // percent over the driver's last sample period
};
struct Memory {
  unsigned long long total, free, used;  // bytes
};
union Value {
  double d;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  int si;
  unsigned short us;
};
struct FieldValue {
  unsigned int field_id;
  unsigned int scope_id;  // for NVLink counters: the link, or UINT_MAX for all links summed
  long long timestamp;
  long long latency_us;
  int value_type;
  Return nvml_return;
  Value value;
};
struct ProcessInfo {  // nvmlProcessInfo_t (the v2/v3 layout)
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id, compute_instance_id;
};

inline constexpr unsigned int kClockSm = 1, kClockMem = 2;          // nvmlClockType_t
inline constexpr unsigned int kTemperatureGpu = 0;                  // nvmlTemperatureSensors_t
inline constexpr unsigned int kPcieTxBytes = 0, kPcieRxBytes = 1;   // nvmlPcieUtilCounter_t
inline constexpr unsigned int kFieldNvlinkDataTx = 138, kFieldNvlinkDataRx = 139;  // KiB counters
inline constexpr int kValueTypeDouble = 0, kValueTypeUnsignedInt = 1, kValueTypeUnsignedLong = 2,
                     kValueTypeUnsignedLongLong = 3, kValueTypeSignedLongLong = 4, kValueTypeSignedInt = 5;

// The loaded library and its entry points. Optional entry points (missing in old drivers) are
// null; the monitor skips what they would have given.
class Library {
 public:
  // dlopen(path) then nvmlInit_v2. Fails (with dlerror's or NVML's reason) when there is no
  // driver: the caller reports "unavailable", never an error.
  static StatusOr<std::unique_ptr<Library>> Load(const std::string& path);
  ~Library();

  std::string ErrorString(Return r) const;

  Return (*DeviceGetCount)(unsigned int*) = nullptr;
  Return (*DeviceGetHandleByIndex)(unsigned int, Device*) = nullptr;
  Return (*DeviceGetName)(Device, char*, unsigned int) = nullptr;
  Return (*DeviceGetUUID)(Device, char*, unsigned int) = nullptr;
  Return (*DeviceGetUtilizationRates)(Device, Utilization*) = nullptr;
  Return (*DeviceGetMemoryInfo)(Device, Memory*) = nullptr;
  Return (*DeviceGetPowerUsage)(Device, unsigned int*) = nullptr;                  // milliwatts
  Return (*DeviceGetClockInfo)(Device, unsigned int, unsigned int*) = nullptr;     // MHz
  Return (*DeviceGetTemperature)(Device, unsigned int, unsigned int*) = nullptr;   // Celsius
  Return (*DeviceGetPcieThroughput)(Device, unsigned int, unsigned int*) = nullptr;  // KB/s
  Return (*DeviceGetFieldValues)(Device, int, FieldValue*) = nullptr;
  Return (*DeviceGetComputeRunningProcesses)(Device, unsigned int*, ProcessInfo*) = nullptr;

 private:
  Library() = default;
  void* handle_ = nullptr;
  Return (*shutdown_)() = nullptr;
  const char* (*error_string_)(Return) = nullptr;
};

}  // namespace rankscope::telemetry::nvml
