// libFuzzer target for the rank summary format (summary/summary_codec.h). The first byte picks
// the input: 0 a summary file (header, version, hash, payload), 1 a bare payload (reaches the
// field decoder without forging a hash), 2 a trace, analysed and encoded. Whatever decodes must
// survive a round trip unchanged; nothing may crash, hang, leak or allocate beyond the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/ingest/read_trace.h"
#include "rankscope/summary/summary_codec.h"

namespace {

using rankscope::summary::DecodeSummary;
using rankscope::summary::EncodeSummary;
using rankscope::summary::SummaryFile;

void CheckRoundTrip(const SummaryFile& file) {
  const std::string once = EncodeSummary(file);
  auto again = DecodeSummary(once);
  if (!again.ok() || EncodeSummary(*again) != once) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] == 0) {
    if (auto file = DecodeSummary(in); file.ok()) CheckRoundTrip(*file);
  } else if (data[0] == 1) {
    if (auto file = rankscope::summary::DecodeSummaryPayload(in); file.ok()) CheckRoundTrip(*file);
  } else if (data[0] == 2) {
    auto model = rankscope::ReadTraceBytes(in, "fuzz-input", rankscope::ReaderOptions{});
    if (!model.ok()) return 0;
    auto summary = rankscope::AnalyzeRank(*model, rankscope::AnalysisOptions{});
    if (!summary.ok()) return 0;
    SummaryFile file;
    file.summary = std::move(summary).value();
    CheckRoundTrip(file);
  }
  return 0;
}
