// Hand-written traces pin what the reader makes of each construct of the Kineto format.
#include <gtest/gtest.h>

#include <algorithm>

#include "rankscope/ingest/read_trace.h"
#include "test_util.h"

namespace rankscope {
namespace {

TraceModel Read(const std::string& json, ReaderOptions options = {}) {
  auto model = ReadTraceBytes(json, "test.json", options);
  EXPECT_TRUE(model.ok()) << model.status().message();
  return model.ok() ? std::move(model).value() : TraceModel{};
}

const char* kMixed = R"J({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA A100", "totalGlobalMem": 42297524224,
                        "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8,
                      "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 8, "ranks": [0,1,2,3,4,5,6,7]}]},
  "traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "python3"}},
    {"ph": "M", "name": "thread_name", "pid": 7, "tid": 8, "args": {"name": "thread 8 (python)"}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 8, "ts": 100.5, "dur": 10.25,
     "args": {"External id": 5, "Input Dims": [[2, 2], [2, 2]], "Ev Idx": 1}},
    {"name": "cudaLaunchKernel", "ph": "X", "cat": "cuda_runtime", "pid": 7, "tid": 8, "ts": 101, "dur": 3,
     "args": {"correlation": 42, "External id": 5}},
    {"ph": "X", "cat": "kernel", "name": "sgemm {with} \"braces\" [and, commas]", "pid": 0, "tid": 7,
     "ts": 104.001, "dur": 20, "args": {"device": 0, "stream": 7, "correlation": 42, "External id": 5,
     "grid": [4, 2, 1], "block": [128, 1, 1], "registers per thread": 32, "shared memory": 1024}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": "stream 9",
     "ts": 130, "dur": 2, "args": {"bytes": 4096}},
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 7, "tid": 8, "ts": 140, "dur": 5,
     "args": {"Collective name": "allreduce", "dtype": "Float", "In msg nelems": 1024, "Out msg nelems": 1024,
              "Group size": 8, "Process Group Name": "0", "Process Group Ranks": [0, 1, 2, 3], "Seq": 17}},
    {"ph": "X", "cat": "python_function", "name": "train.py(10): step", "pid": 7, "tid": 8, "ts": 90, "dur": 60,
     "args": {"Python id": 2, "Python parent id": null}},
    {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 7, "tid": 8, "ts": 100.6,
     "args": {"Total Reserved": 2097152, "Total Allocated": 512, "Bytes": 512, "Device Id": 0, "Device Type": 1,
              "Addr": 18446744073709551615}},
    {"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": 200},
    {"ph": "s", "id": 42, "pid": 7, "tid": 8, "ts": 101, "cat": "ac2g", "name": "ac2g"},
    {"ph": "f", "id": 42, "pid": 0, "tid": 7, "ts": 104.001, "cat": "ac2g", "name": "ac2g", "bp": "e"}
  ],
  "traceName": "x.json",
  "baseTimeNanoseconds": 1700000000000000000
})J";

TEST(ReaderTest, ReadsEveryConstruct) {
  TraceModel m = Read(kMixed);
  EXPECT_EQ(m.info.schema_version, 1);
  EXPECT_EQ(m.info.base_time_ns, 1700000000000000000);
  EXPECT_EQ(m.info.time_origin_ns, 1700000000000000000);
  ASSERT_EQ(m.info.devices.size(), 1u);
  EXPECT_EQ(m.info.devices[0].name, "NVIDIA A100");
  EXPECT_EQ(m.info.devices[0].num_sms, 108);
  EXPECT_EQ(m.info.distributed.rank, 3);
  EXPECT_EQ(m.info.distributed.world_size, 8);
  EXPECT_EQ(m.info.distributed.backend, "nccl");
  ASSERT_EQ(m.info.distributed.pg_config.size(), 1u);
  EXPECT_EQ(m.info.distributed.pg_config[0].ranks.size(), 8u);
  EXPECT_EQ(m.info.trace_name, "x.json");

  EXPECT_EQ(m.stats.elements, 12u);
  EXPECT_EQ(m.stats.skipped.total(), 0u);
  ASSERT_EQ(m.slices.size(), 6u);
  EXPECT_EQ(m.slices.ts[0], 100500);
  EXPECT_EQ(m.slices.dur[0], 10250);
  EXPECT_EQ(m.slices.external_id[0], 5);
  EXPECT_EQ(m.slices.kind[1], ActivityKind::kRuntimeCall);
  EXPECT_EQ(m.slices.correlation[1], 42);

  // The kernel: braces, quotes and commas inside the name must not cut the event.
  EXPECT_EQ(m.Str(m.slices.name[2]), "sgemm {with} \"braces\" [and, commas]");
  EXPECT_EQ(m.slices.ts[2], 104001);
  const GpuActivityInfo* k = m.GpuInfo(2);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->stream, 7);
  EXPECT_EQ(k->grid[0], 4);
  EXPECT_EQ(k->grid[1], 2);
  EXPECT_EQ(k->block[0], 128);
  EXPECT_EQ(k->registers_per_thread, 32);
  EXPECT_EQ(k->shared_memory, 1024);

  // The memcpy has no args.stream/device: taken from pid and the "stream 9" tid.
  const GpuActivityInfo* c = m.GpuInfo(3);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->device, 0);
  EXPECT_EQ(c->stream, 9);
  EXPECT_EQ(c->bytes, 4096);

  ASSERT_EQ(m.collectives.size(), 1u);
  const CollectiveInfo& ci = m.collectives[0];
  EXPECT_EQ(ci.slice, 4u);
  EXPECT_EQ(m.Str(ci.collective_name), "allreduce");
  EXPECT_EQ(m.Str(ci.dtype), "Float");
  EXPECT_EQ(ci.in_msg_nelems, 1024);
  EXPECT_EQ(ci.group_size, 8);
  EXPECT_EQ(ci.seq, 17);
  EXPECT_EQ(m.Str(ci.pg_ranks), "[0, 1, 2, 3]");

  EXPECT_EQ(m.slices.kind[5], ActivityKind::kPythonFrame);
  ASSERT_NE(m.slices.detail[5], kNoDetail);
  EXPECT_EQ(m.python[m.slices.detail[5]].python_id, 2);
  EXPECT_EQ(m.python[m.slices.detail[5]].parent_id, kNoId);

  ASSERT_EQ(m.memory.size(), 1u);
  EXPECT_EQ(m.memory[0].ts, 100600);
  EXPECT_EQ(m.memory[0].total_allocated, 512);
  EXPECT_EQ(m.memory[0].total_reserved, 2097152);
  EXPECT_EQ(m.memory[0].addr, 18446744073709551615ull);
  ASSERT_EQ(m.instants.size(), 1u);
  EXPECT_EQ(m.Str(m.instants.name[0]), "Record Window End");
  ASSERT_EQ(m.flows.size(), 2u);
  EXPECT_EQ(m.flows[0].kind, FlowKind::kHostToDevice);
  EXPECT_TRUE(m.flows[1].binds_enclosing);

  // Names from metadata.
  const Track& t = m.tracks[m.slices.track[0]];
  EXPECT_EQ(m.Str(t.thread_name), "thread 8 (python)");
  bool found = false;
  for (const Process& p : m.processes) found |= !p.pid.is_string && p.pid.value == 7 && m.Str(p.name) == "python3";
  EXPECT_TRUE(found);
  // pid "" and tid "" are strings, not 0.
  EXPECT_TRUE(m.tracks[m.instants.track[0]].pid.is_string);
}

// Cutting the array into chunks must not change anything, whatever the chunk size.
TEST(ReaderTest, ChunkingIsInvisible) {
  const TraceModel whole = Read(kMixed);
  for (size_t chunk : {1, 7, 64, 100, 333, 4096}) {
    ReaderOptions options;
    options.chunk_bytes = chunk;
    const TraceModel m = Read(kMixed, options);
    ASSERT_EQ(m.slices.size(), whole.slices.size()) << chunk;
    EXPECT_EQ(m.slices.ts, whole.slices.ts);
    EXPECT_EQ(m.slices.dur, whole.slices.dur);
    for (size_t i = 0; i < m.slices.size(); ++i) EXPECT_EQ(m.Str(m.slices.name[i]), whole.Str(whole.slices.name[i]));
    EXPECT_EQ(m.flows.size(), whole.flows.size());
    EXPECT_EQ(m.memory.size(), whole.memory.size());
    EXPECT_EQ(m.stats.elements, whole.stats.elements);
  }
}

// Guessed chunk ends ("}" then "," then "{") that are wrong: inside a string, or closing an
// object nested in args. Each must be caught and cut exactly, at every chunk size.
TEST(ReaderTest, WrongGuessesAtChunkEndsChangeNothing) {
  std::string json = "{\"traceEvents\": [\n";
  for (int i = 0; i < 40; ++i) {
    if (i > 0) json += ",\n";
    json += "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k<{lambda()#1}, {x}>},{" + std::to_string(i) +
            "\", \"pid\": 0, \"tid\": 7, \"ts\": " + std::to_string(100 + i) +
            ", \"dur\": 1, \"args\": {\"pg\": [{\"a\": 1},{\"b\": 2}, {\"c\": 3}], \"correlation\": " +
            std::to_string(i) + "}}";
  }
  json += "\n], \"deviceProperties\": [{\"id\": 0},{\"id\": 1}]}";
  const TraceModel whole = Read(json);
  ASSERT_EQ(whole.slices.size(), 40u);
  ASSERT_EQ(whole.info.devices.size(), 2u);
  uint64_t missed = 0;
  for (size_t chunk = 1; chunk < 400; chunk += 3) {
    ReaderOptions options;
    options.chunk_bytes = chunk;
    const TraceModel m = Read(json, options);
    ASSERT_EQ(m.slices.size(), 40u) << chunk;
    EXPECT_EQ(m.slices.ts, whole.slices.ts) << chunk;
    EXPECT_EQ(m.slices.correlation, whole.slices.correlation) << chunk;
    EXPECT_EQ(m.stats.elements, 40u) << chunk;
    EXPECT_EQ(m.stats.skipped.total(), 0u) << chunk;
    EXPECT_EQ(m.info.devices.size(), 2u) << chunk;
    for (size_t i = 0; i < m.slices.size(); ++i) {
      EXPECT_EQ(m.Str(m.slices.name[i]), whole.Str(whole.slices.name[i]));
    }
    missed += m.stats.chunk_guesses_missed;
  }
  EXPECT_GT(missed, 100u);  // the exact fallback really ran
}

TEST(ReaderTest, BareArrayFormAndBom) {
  TraceModel m = Read("\xEF\xBB\xBF[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}]");
  ASSERT_EQ(m.slices.size(), 1u);
  EXPECT_FALSE(m.info.base_time_ns.has_value());
  EXPECT_EQ(m.info.time_origin_ns, 0);
}

TEST(ReaderTest, FieldOrderAndWhitespaceDoNotMatter) {
  TraceModel m = Read(
      "{\"traceEvents\":[{\"dur\":2,\"args\":{\"correlation\":9},\"tid\":3,\"ts\":\"5\",\"name\":\"k\","
      "\"pid\":-1,\"cat\":\"Kernel\",\"ph\":\"X\"},{\"ph\":\"X\",\"name\":\"b\",\"ts\":1e1,\"dur\":0,\"pid\":1,"
      "\"tid\":1}]}");
  ASSERT_EQ(m.slices.size(), 2u);
  EXPECT_EQ(m.slices.ts[0], 5000);
  EXPECT_EQ(m.slices.kind[0], ActivityKind::kDeviceKernel);
  EXPECT_EQ(m.slices.correlation[0], 9);
  EXPECT_EQ(m.tracks[m.slices.track[0]].pid.value, -1);
  EXPECT_EQ(m.slices.ts[1], 10000);
}

// "Input Dims" is hashed on CPU ops (the steps' work signature) and gives a collective
// annotation's message size, whether "args" comes after "name" (Kineto's order) or before it
// (sorted keys), and with or without keep_op_shapes: the same hashes every way.
TEST(ReaderTest, ShapesAreReadBeforeOrAfterTheName) {
  const std::string after =
      R"J({"traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 5, "dur": 10,
       "args": {"Input Dims": [[4, 8], [8, 8]], "Input type": ["float", "float"]}},
      {"ph": "X", "cat": "user_annotation", "name": "gloo:all_reduce", "pid": 1, "tid": 1, "ts": 20, "dur": 10,
       "args": {"Input Dims": [[1024], []], "Input type": ["float"]}}]})J";
  const std::string before =
      R"J({"traceEvents": [
      {"args": {"Input Dims": [[4, 8], [8, 8]], "Input type": ["float", "float"]}, "cat": "cpu_op",
       "dur": 10, "name": "aten::mm", "ph": "X", "pid": 1, "tid": 1, "ts": 5},
      {"args": {"Input Dims": [[1024], []], "Input type": ["float"]}, "cat": "user_annotation",
       "dur": 10, "name": "gloo:all_reduce", "ph": "X", "pid": 1, "tid": 1, "ts": 20}]})J";
  ReaderOptions keep;
  keep.keep_op_shapes = true;
  std::vector<uint32_t> hashes;
  for (const TraceModel& m : {Read(after), Read(before), Read(after, keep), Read(before, keep)}) {
    ASSERT_EQ(m.op_work.size(), 1u);  // the CPU op only, not the annotation
    EXPECT_EQ(m.op_work[0].slice, 0u);
    hashes.push_back(m.op_work[0].hash);
    ASSERT_EQ(m.collectives.size(), 1u);
    EXPECT_EQ(m.collectives[0].in_msg_nelems, 1024);
  }
  EXPECT_EQ(std::count(hashes.begin(), hashes.end(), hashes[0]), 4);
}

TEST(ReaderTest, OldCategoryNamesAndStringIds) {
  TraceModel m = Read(R"J({"traceEvents":[
    {"ph":"X","cat":"Operator","name":"aten::add","pid":"host","tid":"main","ts":1,"dur":1,"args":{"external id":3}},
    {"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":1,"args":{"correlation":4,"external id":3}},
    {"ph":"X","cat":"Memset","name":"Memset (Device)","pid":0,"tid":"stream 7","ts":3,"dur":1,"args":{"correlation":4}},
    {"ph":"s","id":4,"pid":1,"tid":1,"ts":1,"cat":"async","name":"launch"},
    {"ph":"f","id":"0x2a","pid":0,"tid":"stream 7","ts":3,"cat":"async_gpu","name":"launch"}]})J");
  ASSERT_EQ(m.slices.size(), 3u);
  EXPECT_EQ(m.slices.kind[0], ActivityKind::kHostOp);
  EXPECT_EQ(m.slices.external_id[0], 3);
  EXPECT_EQ(m.slices.kind[2], ActivityKind::kDeviceMemset);
  EXPECT_EQ(m.GpuInfo(2)->stream, 7);
  EXPECT_EQ(m.stats.by_category.at("Operator"), 1u);
  ASSERT_EQ(m.flows.size(), 2u);
  EXPECT_EQ(m.flows[1].kind, FlowKind::kHostToDevice);
  EXPECT_TRUE(m.tracks[m.slices.track[0]].pid.is_string);
}

TEST(ReaderTest, UnknownCategoriesAndPhasesAreCountedNotLost) {
  TraceModel m = Read(R"J({"traceEvents":[
    {"ph":"X","cat":"my_cat","name":"a","pid":1,"tid":1,"ts":1,"dur":1},
    {"ph":"C","name":"counter","pid":1,"tid":1,"ts":1,"args":{"v":1}},
    {"ph":"X","name":"no_cat","pid":1,"tid":1,"ts":1,"dur":1}]})J");
  EXPECT_EQ(m.slices.size(), 2u);
  EXPECT_EQ(m.stats.by_category.at("my_cat"), 1u);
  EXPECT_EQ(m.stats.without_category, 2u);  // the counter has no cat either
  EXPECT_EQ(m.stats.skipped.by_reason.at("unsupported phase \"C\"").count, 1u);
}

// Device work and host runtime calls of accelerators other than CUDA/ROCm GPUs, under the
// categories Kineto writes for them, become the same kinds as a GPU's.
TEST(ReaderTest, OtherAcceleratorCategoriesAreDeviceActivityAndRuntimeCalls) {
  TraceModel m = Read(R"J({"traceEvents":[
    {"ph":"X","cat":"mtia_runtime","name":"runFunction - job_prep_and_submit_for_execution","pid":30,"tid":30,"ts":1,"dur":1,"args":{"correlation":5}},
    {"ph":"X","cat":"mtia_ccp_events","name":"fc-dtype_Float","pid":9,"tid":4,"ts":2,"dur":3,"args":{"correlation":5,"stream":1}},
    {"ph":"X","cat":"mtia_ccp_events","name":"dma_request","pid":9,"tid":801,"ts":6,"dur":1,"args":{"direction":"DEVICE_TO_HOST","size":16}},
    {"ph":"X","cat":"mtia_ccp_events","name":"hccl::all_reduce","pid":9,"tid":4,"ts":8,"dur":1,"args":{"stream":1}},
    {"ph":"X","cat":"xpu_runtime","name":"zeCommandListAppendLaunchKernel","pid":30,"tid":30,"ts":1,"dur":1},
    {"ph":"X","cat":"xpu_driver","name":"zeEventHostSynchronize","pid":30,"tid":30,"ts":1,"dur":1},
    {"ph":"X","cat":"privateuse1_runtime","name":"aclrtLaunchKernel","pid":30,"tid":30,"ts":1,"dur":1},
    {"ph":"X","cat":"privateuse1_driver","name":"drvLaunch","pid":30,"tid":30,"ts":1,"dur":1},
    {"ph":"X","cat":"hpu_op","name":"synLaunch","pid":30,"tid":30,"ts":1,"dur":1},
    {"ph":"X","cat":"glow_runtime","name":"glowRun","pid":30,"tid":30,"ts":1,"dur":1},
    {"ph":"X","cat":"collective_comm","name":"xccl::allreduce","pid":30,"tid":30,"ts":1,"dur":1},
    {"ph":"X","cat":"xpu_sync","name":"zeEventHostSynchronize","pid":-1,"tid":30,"ts":1,"dur":1}]})J");
  ASSERT_EQ(m.slices.size(), 12u);
  const ActivityKind expected[] = {
      ActivityKind::kRuntimeCall, ActivityKind::kDeviceKernel, ActivityKind::kDeviceMemcpy,
      ActivityKind::kDeviceKernel, ActivityKind::kRuntimeCall, ActivityKind::kDriverCall,
      ActivityKind::kRuntimeCall, ActivityKind::kDriverCall, ActivityKind::kRuntimeCall,
      ActivityKind::kRuntimeCall, ActivityKind::kRuntimeCall,
      ActivityKind::kOther};  // a host-side XPU sync has no device stream: not interpreted
  for (size_t i = 0; i < m.slices.size(); ++i) {
    EXPECT_EQ(m.slices.kind[i], expected[i]) << "slice " << i << ": " << ActivityKindName(m.slices.kind[i]);
  }
  ASSERT_NE(m.GpuInfo(1), nullptr);
  EXPECT_EQ(m.GpuInfo(1)->device, 9);  // the pid
  EXPECT_EQ(m.GpuInfo(1)->stream, 1);
  EXPECT_EQ(m.GpuInfo(2)->stream, 801);  // no stream arg: the tid, as for GPUs
  EXPECT_EQ(m.slices.correlation[1], m.slices.correlation[0]);
  // The spellings are counted as written.
  EXPECT_EQ(m.stats.by_category.at("mtia_ccp_events"), 3u);
  EXPECT_EQ(m.stats.by_category.at("xpu_sync"), 1u);
}

TEST(ReaderTest, GzipMultiMemberAndTrailingZeros) {
  const std::string a = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1},";
  const std::string b = "{\"ph\":\"X\",\"name\":\"b\",\"ts\":3,\"dur\":2,\"pid\":1,\"tid\":1}]}";
  std::string gz = testing::Gzip(a) + testing::Gzip(b) + std::string(16, '\0');
  TraceModel m = Read(gz);
  EXPECT_TRUE(m.stats.gzip);
  EXPECT_EQ(m.slices.size(), 2u);
  EXPECT_EQ(m.stats.json_bytes, a.size() + b.size());
}

}  // namespace
}  // namespace rankscope
