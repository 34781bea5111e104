// One trace parsed on several threads (ReaderOptions::parse_threads, ingest/kineto/
// parallel_chunk_parser.h) gives the model of the one-thread read: every slice column, every
// interned string in the same order, every table's size, the ingest statistics (skips and
// ignored fields with their first offsets) and the encoded rank summary. Checked on real traces
// and on a hostile one (brackets and "},{" inside strings, corrupt elements, top-level values
// before and after the events, arrays kept as text), at many chunk sizes, so that chunk
// boundaries fall everywhere; and on a truncated trace, whose error and partial model must match.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>

#include "rankscope/analysis/analyze_rank.h"
#include "rankscope/ingest/byte_source.h"
#include "rankscope/ingest/kineto/kineto_format.h"
#include "rankscope/ingest/read_trace.h"
#include "rankscope/summary/summary_codec.h"
#include "test_util.h"

namespace rankscope {
namespace {

std::string Inflated(const std::string& path) {
  auto source = OpenTraceFile(path);
  EXPECT_TRUE(source.ok());
  std::string out, buf(1 << 20, '\0');
  while (true) {
    auto n = (*source)->Read(buf.data(), buf.size());
    EXPECT_TRUE(n.ok());
    if (!n.ok() || *n == 0) return out;
    out.append(buf.data(), *n);
  }
}

std::string Counts(const SkipCounts& counts) {
  std::string out;
  for (const auto& [reason, entry] : counts.by_reason) out += fmt::format("{}: {} from {}\n", reason, entry.count, entry.first_offset);
  return out;
}

std::string EncodedSummary(const TraceModel& m) {
  auto s = AnalyzeRank(m, AnalysisOptions{});
  if (!s.ok()) return "no summary: " + s.status().message();
  summary::SummaryFile f;
  f.summary = std::move(s).value();
  f.summary.analysis_ns = 0;  // wall time of this run
  return summary::EncodeSummary(f);
}

void ExpectSameModel(const TraceModel& a, const TraceModel& b, bool summaries = true) {
  ASSERT_EQ(a.strings.size(), b.strings.size());
  for (StringId i = 0; i < a.strings.size(); ++i) ASSERT_EQ(a.Str(i), b.Str(i)) << i;
  EXPECT_EQ(a.slices.ts, b.slices.ts);
  EXPECT_EQ(a.slices.dur, b.slices.dur);
  EXPECT_EQ(a.slices.name, b.slices.name);
  EXPECT_EQ(a.slices.track, b.slices.track);
  EXPECT_EQ(a.slices.kind, b.slices.kind);
  EXPECT_EQ(a.slices.correlation, b.slices.correlation);
  EXPECT_EQ(a.slices.external_id, b.slices.external_id);
  EXPECT_EQ(a.slices.detail, b.slices.detail);
  EXPECT_EQ(a.instants.ts, b.instants.ts);
  EXPECT_EQ(a.instants.name, b.instants.name);
  EXPECT_EQ(a.forward_ops, b.forward_ops);
  EXPECT_EQ(a.backward_ops, b.backward_ops);
  EXPECT_EQ(a.tracks.size(), b.tracks.size());
  EXPECT_EQ(a.processes.size(), b.processes.size());
  EXPECT_EQ(a.gpu.size(), b.gpu.size());
  EXPECT_EQ(a.python.size(), b.python.size());
  EXPECT_EQ(a.collectives.size(), b.collectives.size());
  EXPECT_EQ(a.op_shapes.size(), b.op_shapes.size());
  EXPECT_EQ(a.p2p_peers.size(), b.p2p_peers.size());
  EXPECT_EQ(a.memory.size(), b.memory.size());
  EXPECT_EQ(a.flows.size(), b.flows.size());
  EXPECT_EQ(a.stats.json_bytes, b.stats.json_bytes);
  EXPECT_EQ(a.stats.elements, b.stats.elements);
  for (int p = 0; p < 128; ++p) EXPECT_EQ(a.stats.by_phase[p], b.stats.by_phase[p]);
  EXPECT_EQ(a.stats.by_category, b.stats.by_category);
  EXPECT_EQ(a.stats.without_category, b.stats.without_category);
  EXPECT_EQ(Counts(a.stats.skipped), Counts(b.stats.skipped));
  EXPECT_EQ(Counts(a.stats.ignored_fields), Counts(b.stats.ignored_fields));
  EXPECT_EQ(a.info.distributed.rank, b.info.distributed.rank);
  EXPECT_EQ(a.info.distributed.pg_config.size(), b.info.distributed.pg_config.size());
  EXPECT_EQ(a.info.base_time_ns, b.info.base_time_ns);
  if (summaries) EXPECT_EQ(EncodedSummary(a), EncodedSummary(b));
}

ReaderOptions Options(unsigned parse_threads, size_t chunk_bytes, bool shapes = false) {
  ReaderOptions o;
  o.parse_threads = parse_threads;
  o.chunk_bytes = chunk_bytes;
  o.keep_op_shapes = shapes;
  return o;
}

TEST(ParallelParseTest, RealTracesGiveTheOneThreadModel) {
  for (const char* path : {"hta/nccl_2rank_a100/nccl_data.json.gz", "hta/trace_diff_control_a100/control.json.gz",
                           "kineto/resnet50_workers0/worker0.1623143089861.pt.trace.json.gz",
                           "hta/amd_mi250/mi250_minitoy_train_ROCm6_2_kineto.json.gz"}) {
    SCOPED_TRACE(path);
    const std::string json = Inflated(testing::TracePath(path));
    auto one = ReadTraceBytes(json, path, Options(1, 256 * 1024, true));
    ASSERT_TRUE(one.ok()) << one.status().message();
    for (unsigned threads : {2u, 5u}) {
      for (size_t chunk : {size_t{700}, size_t{64} * 1024}) {
        SCOPED_TRACE(fmt::format("{} threads, {} B chunks", threads, chunk));
        auto many = ReadTraceBytes(json, path, Options(threads, chunk, true));
        ASSERT_TRUE(many.ok()) << many.status().message();
        ExpectSameModel(*one, *many);
      }
    }
  }
}

TEST(ParallelParseTest, AFileReadThroughTheInflateThreadToo) {
  const std::string path = testing::TracePath("hta/nccl_2rank_a100/nccl_data.json.gz");
  auto one = ReadTrace(path);
  ReaderOptions o;
  o.parse_threads = 3;
  auto many = ReadTrace(path, o);
  ASSERT_TRUE(one.ok() && many.ok());
  EXPECT_TRUE(many->stats.gzip);
  ExpectSameModel(*one, *many);
}

// Events whose strings hold brackets and "},{", corrupt elements, arrays kept as text, and
// top-level values on both sides of traceEvents.
std::string HostileTrace(int events) {
  std::string t = R"({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2,
    "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "ranks": [0, 1]}]},
  "traceEvents": [)";
  for (int i = 0; i < events; ++i) {
    if (i > 0) t += ",\n";
    switch (i % 9) {
      case 0:
        t += fmt::format(R"({{"ph": "X", "cat": "cpu_op", "name": "aten::mm\"}},{{[{}]", "pid": 1, "tid": 2, "ts": {}, "dur": 3, "args": {{"External id": {}, "Input Dims": [[4, 4], [4]], "Input type": ["float", "float"]}}}})", i, 100 + i, i);
        break;
      case 1:
        t += fmt::format(R"({{"ph": "X", "cat": "kernel", "name": "gemm_{}", "pid": 0, "tid": "stream 7", "ts": {}, "dur": 2, "args": {{"correlation": {}, "stream": 7, "device": 0, "grid": [1, 2, 3], "block": [4, 1, 1]}}}})", i % 5, 100 + i, i);
        break;
      case 2:
        t += fmt::format(R"({{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 2, "ts": {}, "dur": 9, "args": {{"Collective name": "all_to_allv", "dtype": "Float", "In msg nelems": 8, "Out msg nelems": 8, "Group size": 2, "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": [0, 1], "In split size": [4, 4], "Out split size": [3, 5], "Seq": {}}}}})", 100 + i, i);
        break;
      case 3:
        t += R"({"ph": "X", "cat": "cpu_op", "name": "broken", "ts": )";  // not JSON: the chunk falls back
        t += "}";
        break;
      case 4:
        t += fmt::format(R"({{"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 2, "ts": {}, "args": {{"Total Allocated": {}, "Bytes": 64, "Addr": 1, "Device Type": 1, "Device Id": 0}}}})", 100 + i, i);
        break;
      case 5:
        t += fmt::format(R"({{"ph": "s", "id": "flow_{}", "pid": 1, "tid": 2, "ts": {}, "cat": "ac2g", "name": "ac2g"}})", i, 100 + i);
        break;
      case 6:
        t += fmt::format(R"({{"ph": "M", "name": "thread_name", "pid": 1, "tid": {}, "args": {{"name": "thread {{{}}}"}}}})", i, i);
        break;
      case 7:
        t += fmt::format(R"({{"ph": "X", "cat": "python_function", "name": "train.py(1): step \\\" [{}", "pid": 1, "tid": 2, "ts": {}, "dur": 1, "args": {{"Python id": {}, "Python parent id": 0, "bogus": {{"nested": ["}},{{"]}}}}}})", i, 100 + i, i + 1);
        break;
      default:
        t += fmt::format(R"({{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{}", "pid": 1, "tid": 2, "ts": {}, "dur": "5.5"}})", i, 100 + i);
        break;
    }
  }
  t += R"(], "deviceProperties": [{"id": 0, "name": "GPU", "totalGlobalMem": 1}], "baseTimeNanoseconds": 1700000000000000000})";
  return t;
}

TEST(ParallelParseTest, AHostileTraceAtManyChunkSizes) {
  const std::string json = HostileTrace(4000);
  auto one = ReadTraceBytes(json, "hostile.json", Options(1, 256 * 1024));
  ASSERT_TRUE(one.ok()) << one.status().message();
  ASSERT_GT(one->stats.skipped.total(), 400u);  // the corrupt elements
  ASSERT_GT(one->collectives.size(), 400u);
  ASSERT_TRUE(one->info.base_time_ns.has_value());
  for (size_t chunk : {size_t{1}, size_t{97}, size_t{1000}, size_t{4096}, size_t{65537}, json.size()}) {
    for (unsigned threads : {2u, 3u, 8u}) {
      SCOPED_TRACE(fmt::format("{} threads, {} B chunks", threads, chunk));
      auto many = ReadTraceBytes(json, "hostile.json", Options(threads, chunk));
      ASSERT_TRUE(many.ok()) << many.status().message();
      ExpectSameModel(*one, *many);
      EXPECT_EQ(many->stats.chunk_guesses_missed, 0u);  // exact cuts only
    }
  }
}

// A chunk made of one 3 MB element among small ones: its memory is given back after it is
// built (ParallelChunkParser), and the chunks that reuse its slot still give the same model.
TEST(ParallelParseTest, AHugeElementAmongSmallOnes) {
  std::string json = HostileTrace(600);
  const std::string huge = fmt::format(
      R"({{"ph": "X", "cat": "cpu_op", "name": "{}", "pid": 1, "tid": 2, "ts": 1, "dur": 1}},)", std::string(3 << 20, 'h'));
  const size_t at = json.find("[") + 1;
  json.insert(json.find(",\n", at + 20000) + 2, huge);
  auto one = ReadTraceBytes(json, "huge.json", Options(1, 4096));
  ASSERT_TRUE(one.ok()) << one.status().message();
  for (unsigned threads : {2u, 3u}) {
    auto many = ReadTraceBytes(json, "huge.json", Options(threads, 4096));
    ASSERT_TRUE(many.ok()) << many.status().message();
    ExpectSameModel(*one, *many);
  }
}

TEST(ParallelParseTest, ATruncatedTraceFailsWithTheSameErrorAndKeepsTheSameEvents) {
  const std::string json = HostileTrace(3000);
  for (size_t cut : {json.size() / 3, json.size() / 2 + 17, json.size() - 40}) {
    SCOPED_TRACE(cut);
    const std::string truncated = json.substr(0, cut);
    TraceModel one, many;
    auto src1 = OpenTraceBytes(truncated);
    auto src2 = OpenTraceBytes(truncated);
    const Status a = kineto::Format().Read(src1.get(), Options(1, 1000), &one);
    const Status b = kineto::Format().Read(src2.get(), Options(4, 1000), &many);
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.code(), b.code());
    EXPECT_EQ(a.message(), b.message());
    ExpectSameModel(one, many, /*summaries=*/false);
  }
}

}  // namespace
}  // namespace rankscope
