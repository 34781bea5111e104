// Every trace in ../shared/traces reads cleanly, with the event counts SOURCES.md records.
#include <gtest/gtest.h>

#include "rankscope/ingest/byte_source.h"
#include "rankscope/ingest/read_trace.h"
#include "test_util.h"

namespace rankscope {
namespace {

struct Expected {
  const char* path;
  uint64_t events;    // len(traceEvents)
  uint64_t complete;  // ph X
  std::optional<int64_t> rank;
  std::optional<int64_t> world;
};

// From ../shared/traces/SOURCES.md ("events (X)" and "rank/world" columns).
const Expected kCorpus[] = {
    {"hta/amd_mi250/mi250_minitoy_train_ROCm6_2_kineto.json.gz", 220, 113, {}, {}},
    {"hta/call_stack_backward_thread/backward_thread.json.gz", 7, 7, 0, {}},
    {"hta/cpu_only_gloo/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 30, 16, 34, 300},
    {"hta/cuda_event_sync_a100/event_sync_trace.json.gz", 92, 33, 0, {}},
    {"hta/distinfo_unavailable/distributed_info_not_found.json.gz", 2467, 2467, {}, {}},
    {"hta/nccl_2rank_a100/nccl_data.json.gz", 40573, 26933, 0, 2},
    {"hta/negative_queue_len_a100/rank0.json.gz", 108936, 67217, 0, 16},
    {"hta/ns_resolution_v100/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 68692, 45420, 0, 1},
    {"hta/old_cat_names/inference_rank_1.json.gz", 54, 13, 1, {}},
    {"hta/rank_unavailable/rank_not_found.json.gz", 2467, 2467, {}, {}},
    {"hta/trace_diff_control_a100/control.json.gz", 109123, 74937, 3, 8},
    {"hta/trace_diff_test_v100/test.json.gz", 105167, 68324, 1, 2},
    {"hta/triton_a100/triton_example.json.gz", 71, 8, {}, {}},
    {"kineto/resnet50_workers0/worker0.1623143089861.pt.trace.json.gz", 75718, 44666, {}, {}},
    {"kineto/resnet50_workers4/worker0.1623212756351.pt.trace.json.gz", 71424, 41906, {}, {}},
    {"tracelens/mi210_gpu_only/gpu_only_trace.json.gz", 2443, 1194, {}, {}},
};

class RealTraceTest : public ::testing::TestWithParam<Expected> {};

TEST_P(RealTraceTest, CountsMatchSources) {
  const Expected& e = GetParam();
  auto model = ReadTrace(testing::TracePath(e.path));
  ASSERT_TRUE(model.ok()) << model.status().message();
  const TraceModel& m = *model;
  EXPECT_EQ(m.stats.elements, e.events);
  EXPECT_EQ(m.stats.by_phase[static_cast<int>('X')], e.complete);
  EXPECT_EQ(m.stats.skipped.total(), 0u);
  EXPECT_EQ(m.stats.chunk_guesses_missed, 0u);  // Kineto's layout: every guessed chunk end holds
  EXPECT_EQ(m.slices.size(), e.complete);  // every X event is a slice
  EXPECT_EQ(m.info.distributed.rank, e.rank);
  EXPECT_EQ(m.info.distributed.world_size, e.world);
  EXPECT_TRUE(m.stats.gzip);
  for (size_t i = 0; i < m.slices.size(); ++i) {
    if (const GpuActivityInfo* g = m.GpuInfo(i)) {
      ASSERT_GE(g->device, 0) << m.Str(m.slices.name[i]);
    }
  }
}

// The same bytes uncompressed, cut into small chunks, give the identical model.
TEST_P(RealTraceTest, PlainAndSmallChunksGiveTheSameModel) {
  const Expected& e = GetParam();
  auto gz = ReadTrace(testing::TracePath(e.path));
  ASSERT_TRUE(gz.ok());
  auto source = OpenTraceFile(testing::TracePath(e.path));
  ASSERT_TRUE(source.ok());
  std::string json;
  std::string buf(1 << 20, '\0');
  while (true) {
    auto n = (*source)->Read(buf.data(), buf.size());
    ASSERT_TRUE(n.ok());
    if (*n == 0) break;
    json.append(buf.data(), *n);
  }
  ReaderOptions small;
  small.chunk_bytes = 1000;
  auto plain = ReadTraceBytes(json, e.path, small);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->stats.json_bytes, json.size());
  EXPECT_EQ(plain->slices.ts, gz->slices.ts);
  EXPECT_EQ(plain->slices.dur, gz->slices.dur);
  EXPECT_EQ(plain->slices.correlation, gz->slices.correlation);
  EXPECT_EQ(plain->slices.external_id, gz->slices.external_id);
  EXPECT_EQ(plain->flows.size(), gz->flows.size());
  EXPECT_EQ(plain->memory.size(), gz->memory.size());
  EXPECT_EQ(plain->collectives.size(), gz->collectives.size());
}

INSTANTIATE_TEST_SUITE_P(Corpus, RealTraceTest, ::testing::ValuesIn(kCorpus),
                         [](const ::testing::TestParamInfo<Expected>& info) {
                           std::string name = info.param.path;
                           name = name.substr(0, name.find('/', name.find('/') + 1));
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

// Spot values read off the files by hand.
TEST(RealTraceSpotTest, FloatTimestampsRelativeToBase) {
  auto m = ReadTrace(testing::TracePath("hta/nccl_2rank_a100/nccl_data.json.gz"));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->info.base_time_ns, 1711964646000000000);
  // The last event, "Record Window End", "ts": 4458677117099.727
  EXPECT_EQ(m->instants.ts.back(), 4458677117099727);
  EXPECT_EQ(m->AbsoluteNs(m->instants.ts.back()), 1711964646000000000 + 4458677117099727);
}

TEST(RealTraceSpotTest, OldestSchemaStringStreams) {
  auto m = ReadTrace(testing::TracePath("kineto/resnet50_workers0/worker0.1623143089861.pt.trace.json.gz"));
  ASSERT_TRUE(m.ok());
  size_t kernels = 0;
  for (size_t i = 0; i < m->slices.size(); ++i) {
    if (m->slices.kind[i] != ActivityKind::kDeviceKernel) continue;
    ++kernels;
    ASSERT_EQ(m->GpuInfo(i)->stream, 7);
    ASSERT_NE(m->slices.correlation[i], kNoId);
  }
  EXPECT_EQ(kernels, 8772u);
  EXPECT_EQ(m->memory.size(), 12838u);  // 12840 ph:i, two of which are profiler markers
  EXPECT_EQ(m->instants.size(), 2u);
}

}  // namespace
}  // namespace rankscope

namespace rankscope {
namespace {

// Each Kineto variant of docs/ingestion.md ("Formats read"), pinned on the real trace that shows it.
TraceModel MustRead(const std::string& relative) {
  auto m = ReadTrace(testing::TracePath(relative));
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : TraceModel{};
}

TEST(KinetoVariantsTest, AbsoluteFloatMicrosecondsKeepTheirNanoseconds) {
  // "ts": 1712195495519689.047 — a double cannot hold this; the reader keeps every digit.
  TraceModel m = MustRead("hta/ns_resolution_v100/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
  EXPECT_FALSE(m.info.base_time_ns.has_value());
  ASSERT_GE(m.slices.size(), 2u);
  EXPECT_EQ(m.slices.ts[0], 1712195495519689047);
  EXPECT_EQ(m.slices.dur[0], 63813);
  EXPECT_EQ(m.slices.ts[1], 1712195495519695812);
  EXPECT_EQ(m.AbsoluteNs(m.slices.ts[0]), 1712195495519689047);
  // record_param_comms carry "Collective name" (allreduce 25, broadcast 10, wait 10).
  EXPECT_EQ(m.collectives.size(), 45u);
}

TEST(KinetoVariantsTest, IntegerMicrosecondsAbsolute) {
  TraceModel m = MustRead("kineto/resnet50_workers0/worker0.1623143089861.pt.trace.json.gz");
  EXPECT_EQ(m.slices.ts[0], 1623142623460111000);  // "ts": 1623142623460111
  EXPECT_EQ(m.slices.dur[0], 25000);
  EXPECT_EQ(m.stats.by_category.at("Operator"), 23646u);
  EXPECT_EQ(m.stats.by_category.at("async"), 18192u);
}

TEST(KinetoVariantsTest, OldCategoryNamesAndLowercaseExternalId) {
  TraceModel m = MustRead("hta/old_cat_names/inference_rank_1.json.gz");
  size_t kernels = 0, runtime = 0;
  for (size_t i = 0; i < m.slices.size(); ++i) {
    if (m.slices.kind[i] == ActivityKind::kDeviceKernel) {
      ++kernels;
      EXPECT_NE(m.slices.external_id[i], kNoId);  // from "external id"
      EXPECT_NE(m.slices.correlation[i], kNoId);
    }
    runtime += m.slices.kind[i] == ActivityKind::kRuntimeCall;
  }
  EXPECT_EQ(kernels, 4u);
  EXPECT_EQ(runtime, 8u);
  size_t async_gpu = 0;
  for (const FlowEvent& f : m.flows) async_gpu += f.kind == FlowKind::kHostToDevice;
  EXPECT_EQ(async_gpu, 8u);
}

TEST(KinetoVariantsTest, Ac2gAndFwdBwdFlowsAndCollectivesOnKernels) {
  TraceModel m = MustRead("hta/nccl_2rank_a100/nccl_data.json.gz");
  size_t ac2g = 0, fwdbwd = 0;
  for (const FlowEvent& f : m.flows) {
    ac2g += f.kind == FlowKind::kHostToDevice;
    fwdbwd += f.kind == FlowKind::kForwardToBackward;
  }
  EXPECT_EQ(ac2g, 8652u + 3862u);
  EXPECT_EQ(fwdbwd, 543u + 543u);
  // Newer traces copy the collective metadata onto the NCCL kernel itself.
  size_t on_kernels = 0;
  for (const CollectiveInfo& c : m.collectives) {
    if (m.slices.kind[c.slice] != ActivityKind::kDeviceKernel) continue;
    ++on_kernels;
    EXPECT_EQ(m.Str(c.pg_desc), "default_pg");
    EXPECT_EQ(c.group_size, 2);
  }
  EXPECT_EQ(on_kernels, 21u);
}

TEST(KinetoVariantsTest, AsyncCpuToGpuFlowCategory) {
  TraceModel m = MustRead("hta/trace_diff_control_a100/control.json.gz");
  size_t n = 0;
  for (const FlowEvent& f : m.flows) n += f.kind == FlowKind::kHostToDevice;
  EXPECT_EQ(n, 24692u + 9450u);
}

TEST(KinetoVariantsTest, EmptyDevicePropertiesAndGlooDistributedInfo) {
  TraceModel m = MustRead("hta/cpu_only_gloo/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
  EXPECT_TRUE(m.info.has_device_properties);
  EXPECT_TRUE(m.info.devices.empty());
  EXPECT_EQ(m.info.distributed.backend, "gloo");
  EXPECT_EQ(m.info.distributed.pg_count, 10);
  EXPECT_EQ(m.info.base_time_ns, 1719853884000000000);
}

TEST(KinetoVariantsTest, DistributedInfoWithoutRank) {
  TraceModel m = MustRead("hta/rank_unavailable/rank_not_found.json.gz");
  EXPECT_TRUE(m.info.distributed.present);
  EXPECT_EQ(m.info.distributed.backend, "nccl");
  EXPECT_FALSE(m.info.distributed.rank.has_value());
  TraceModel none = MustRead("hta/distinfo_unavailable/distributed_info_not_found.json.gz");
  EXPECT_FALSE(none.info.distributed.present);
  EXPECT_EQ(none.info.devices.size(), 8u);
}

TEST(KinetoVariantsTest, CudaSyncEventsAndHipStreams) {
  TraceModel sync = MustRead("hta/cuda_event_sync_a100/event_sync_trace.json.gz");
  int on_stream = 0, off_stream = 0;
  for (size_t i = 0; i < sync.slices.size(); ++i) {
    if (sync.slices.kind[i] != ActivityKind::kDeviceSync) continue;
    (sync.GpuInfo(i)->stream >= 0 ? on_stream : off_stream)++;
  }
  EXPECT_EQ(on_stream, 1);   // Stream Sync on stream 7
  EXPECT_EQ(off_stream, 3);  // Event Sync x2, Context Sync: stream -1
  TraceModel hip = MustRead("hta/amd_mi250/mi250_minitoy_train_ROCm6_2_kineto.json.gz");
  EXPECT_EQ(hip.stats.ignored_fields.total(), 0u);  // "stream": "0x0" on hip runtime calls
}

TEST(KinetoVariantsTest, DevicePropertiesAndStringPids) {
  TraceModel m = MustRead("hta/triton_a100/triton_example.json.gz");
  ASSERT_EQ(m.info.devices.size(), 8u);
  EXPECT_EQ(m.info.devices[0].name, "NVIDIA A100-PG509-200");
  EXPECT_EQ(m.info.devices[0].num_sms, 108);
  EXPECT_EQ(m.info.extra.at("cupti_version"), "18");
  bool string_pid = false;  // "pid": "Spans" / "Traces" on the profiler's own events
  for (const Track& t : m.tracks) string_pid |= t.pid.is_string;
  EXPECT_TRUE(string_pid);
}

}  // namespace
}  // namespace rankscope

#include "rankscope/ingest/kineto/kineto_reader_impl.h"

namespace rankscope {
namespace {

// The generic (pre-AVX2) build of the hot path only runs on old CPUs, so it is exercised here
// directly: it must build the same model as the variant this machine picks.
TEST_P(RealTraceTest, GenericCodePathGivesTheSameModel) {
  const std::string path = testing::TracePath(GetParam().path);
  auto fast = ReadTrace(path);
  ASSERT_TRUE(fast.ok()) << fast.status().message();
  auto source = OpenTraceFile(path);
  ASSERT_TRUE(source.ok());
  TraceModel generic_model;
  ASSERT_TRUE(kineto::generic::ReadTraceInto(source->get(), ReaderOptions{}, &generic_model).ok());
  EXPECT_EQ(generic_model.stats.elements, fast->stats.elements);
  EXPECT_EQ(generic_model.slices.ts, fast->slices.ts);
  EXPECT_EQ(generic_model.slices.dur, fast->slices.dur);
  EXPECT_EQ(generic_model.slices.correlation, fast->slices.correlation);
  EXPECT_EQ(generic_model.slices.external_id, fast->slices.external_id);
  EXPECT_EQ(generic_model.flows.size(), fast->flows.size());
  EXPECT_EQ(generic_model.memory.size(), fast->memory.size());
  EXPECT_EQ(generic_model.collectives.size(), fast->collectives.size());
  EXPECT_EQ(generic_model.strings.size(), fast->strings.size());
}

}  // namespace
}  // namespace rankscope
