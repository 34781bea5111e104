#include "rankscope/ingest/kineto/kineto_format.h"

#include <array>

#include "rankscope/base/cpu_target.h"
#include "rankscope/ingest/kineto/kineto_reader_impl.h"

namespace rankscope::kineto {
namespace {

// JSON text: an object (the Kineto form, with "traceEvents") or a bare array of events (the
// Chrome trace form), after an optional UTF-8 byte order mark and whitespace.
bool LooksLikeJsonTrace(std::string_view head) {
  if (head.starts_with("\xEF\xBB\xBF")) head.remove_prefix(3);
  const size_t first = head.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (head[first] == '{' || head[first] == '[');
}

class KinetoFormat final : public TraceFormat {
 public:
  std::string_view name() const override { return "kineto"; }

  std::span<const std::string_view> file_suffixes() const override { return kSuffixes; }

  bool Sniff(std::string_view head, std::string_view /*file_name*/) const override {
    return LooksLikeJsonTrace(head);
  }

  Status Read(ByteSource* source, const ReaderOptions& options, TraceModel* model) const override {
    // The JSON hot path is compiled twice (CMakeLists.txt); this CPU runs the faster one it can.
    RANKSCOPE_RETURN_IF_ERROR(CpuRunsHaswellCode() ? haswell::ReadTraceInto(source, options, model)
                                                   : generic::ReadTraceInto(source, options, model));
    // Kineto writes ts relative to baseTimeNanoseconds when it has one.
    model->info.time_origin_ns = model->info.base_time_ns.value_or(0);
    return OkStatus();
  }

 private:
  static constexpr std::array<std::string_view, 2> kSuffixes = {".json", ".json.gz"};
};

}  // namespace

const TraceFormat& Format() {
  static const KinetoFormat format;
  return format;
}

}  // namespace rankscope::kineto
