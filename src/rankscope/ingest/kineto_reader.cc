#include "rankscope/ingest/kineto_reader.h"

#include "rankscope/ingest/byte_source.h"
#include "rankscope/ingest/kineto_reader_impl.h"

namespace rankscope {
namespace {

// simdjson's haswell kernel needs AVX2, BMI1/2 and PCLMULQDQ.
bool CpuHasHaswellFeatures() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("pclmul");
#else
  return false;
#endif
}

const bool kUseHaswell = CpuHasHaswellFeatures();

StatusOr<TraceModel> ReadFrom(ByteSource* source, const std::string& name, const ReaderOptions& options) {
  TraceModel model;
  model.path = name;
  Status status = kUseHaswell ? haswell::ReadTraceInto(source, options, &model)
                              : generic::ReadTraceInto(source, options, &model);
  if (!status.ok()) return status.WithContext(name);
  model.stats.gzip = source->is_gzip();
  model.stats.file_bytes = source->raw_bytes_consumed();
  model.info.time_origin_ns = model.info.base_time_ns.value_or(0);
  return model;
}

}  // namespace

const char* ReaderTargetName() { return kUseHaswell ? "haswell" : "generic"; }

StatusOr<TraceModel> ReadKinetoTrace(const std::string& path, const ReaderOptions& options) {
  RANKSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenTraceFile(path));
  return ReadFrom(source.get(), path, options);
}

StatusOr<TraceModel> ReadKinetoTraceBytes(std::string_view data, const std::string& name,
                                          const ReaderOptions& options) {
  std::unique_ptr<ByteSource> source = OpenTraceBytes(data);
  return ReadFrom(source.get(), name, options);
}

}  // namespace rankscope
