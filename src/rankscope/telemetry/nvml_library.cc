#include "rankscope/telemetry/nvml_library.h"

#include <dlfcn.h>

namespace rankscope::telemetry::nvml {
namespace {

template <typename Fn>
void Bind(void* handle, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(::dlsym(handle, name));
}

}  // namespace

StatusOr<std::unique_ptr<Library>> Library::Load(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    return NotFound("no NVIDIA driver: cannot load {} ({})", path, why ? why : "unknown reason");
  }
  std::unique_ptr<Library> lib(new Library());
  lib->handle_ = handle;
  Return (*init)() = nullptr;
  Bind(handle, "nvmlInit_v2", &init);
  if (!init) Bind(handle, "nvmlInit", &init);
  Bind(handle, "nvmlShutdown", &lib->shutdown_);
  Bind(handle, "nvmlErrorString", &lib->error_string_);
  Bind(handle, "nvmlDeviceGetCount_v2", &lib->DeviceGetCount);
  if (!lib->DeviceGetCount) Bind(handle, "nvmlDeviceGetCount", &lib->DeviceGetCount);
  Bind(handle, "nvmlDeviceGetHandleByIndex_v2", &lib->DeviceGetHandleByIndex);
  if (!lib->DeviceGetHandleByIndex) Bind(handle, "nvmlDeviceGetHandleByIndex", &lib->DeviceGetHandleByIndex);
  if (!init || !lib->DeviceGetCount || !lib->DeviceGetHandleByIndex) {
    return NotFound("{} does not export nvmlInit/nvmlDeviceGetCount/nvmlDeviceGetHandleByIndex", path);
  }
  Bind(handle, "nvmlDeviceGetName", &lib->DeviceGetName);
  Bind(handle, "nvmlDeviceGetUUID", &lib->DeviceGetUUID);
  Bind(handle, "nvmlDeviceGetUtilizationRates", &lib->DeviceGetUtilizationRates);
  Bind(handle, "nvmlDeviceGetMemoryInfo", &lib->DeviceGetMemoryInfo);
  Bind(handle, "nvmlDeviceGetPowerUsage", &lib->DeviceGetPowerUsage);
  Bind(handle, "nvmlDeviceGetClockInfo", &lib->DeviceGetClockInfo);
  Bind(handle, "nvmlDeviceGetTemperature", &lib->DeviceGetTemperature);
  Bind(handle, "nvmlDeviceGetPcieThroughput", &lib->DeviceGetPcieThroughput);
  Bind(handle, "nvmlDeviceGetFieldValues", &lib->DeviceGetFieldValues);
  Bind(handle, "nvmlDeviceGetComputeRunningProcesses_v3", &lib->DeviceGetComputeRunningProcesses);
  if (const Return r = init(); r != kSuccess) {
    const std::string why = lib->ErrorString(r);
    lib->shutdown_ = nullptr;  // not initialized: nothing to shut down
    return NotFound("NVML is installed but did not initialize: {} (error {})", why, r);
  }
  return lib;
}

Library::~Library() {
  if (shutdown_) shutdown_();
  // The library stays mapped: the driver's NVML keeps threads that may outlive shutdown.
}

std::string Library::ErrorString(Return r) const {
  const char* s = error_string_ ? error_string_(r) : nullptr;
  return s ? s : "NVML error";
}

}  // namespace rankscope::telemetry::nvml
