// The pickle reader (hang/pickle_reader.h) on pickles written by Python's pickle at protocols 2
// to 5 and by PyTorch 2.13's Flight Recorder (tests/data/pickles/make_pickles.py made them), on
// every truncation of them, on refused opcodes, and at its limits.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "rankscope/hang/flight_recorder.h"
#include "rankscope/hang/pickle_reader.h"

namespace rankscope::hang {
namespace {

using namespace std::string_literals;

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(RANKSCOPE_SOURCE_DIR) + "/tests/data/pickles/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Pickle, PlainDataAtEveryProtocol) {
  for (int protocol = 2; protocol <= 5; ++protocol) {
    const std::string data = Fixture(fmt::format("plain_p{}.pickle", protocol));
    ASSERT_TRUE(LooksLikePickle(data));
    auto j = ReadPickle(data);
    ASSERT_TRUE(j.ok()) << protocol << ": " << j.status().message();
    EXPECT_EQ((*j)["version"], "2.10");
    EXPECT_EQ((*j)["pg_config"]["0"]["ranks"], "[0, 1]");
    EXPECT_EQ((*j)["pg_status"]["0"]["last_started_collective"], -1);
    const auto& e = (*j)["entries"][0];
    EXPECT_EQ(e["process_group"], nlohmann::json::array({"0", "default_pg"}));  // a tuple
    EXPECT_EQ(e["time_created_ns"].get<int64_t>(), 1795417709612868840);       // LONG1
    EXPECT_EQ(e["input_sizes"], nlohmann::json::parse("[[4, 2]]"));
    EXPECT_TRUE(e["time_discovered_started_ns"].is_null());
    EXPECT_DOUBLE_EQ(e["duration_ms"].get<double>(), 1.25);
    EXPECT_EQ(e["retired"], false);
    EXPECT_EQ(e["timeout_ms"], 600000);
    EXPECT_EQ(e["frames"][0]["line"], 3245);
  }
}

TEST(Pickle, MemoReferencesKeysBigIntsBytesSetsAndUtf8) {
  auto j = ReadPickle(Fixture("shared.pickle"));
  ASSERT_TRUE(j.ok()) << j.status().message();
  EXPECT_EQ((*j)["a"], nlohmann::json::array({1, 2}));
  EXPECT_EQ((*j)["b"], (*j)["a"]);  // the same list, filled after it was memoized
  EXPECT_EQ((*j)["3"], "int key");
  EXPECT_EQ((*j)["[1,2]"], "tuple key");
  EXPECT_EQ((*j)["neg"].get<int64_t>(), -(int64_t{1} << 40));
  EXPECT_EQ((*j)["u"].get<uint64_t>(), (uint64_t{1} << 63) + 1);
  EXPECT_DOUBLE_EQ((*j)["big"].get<double>(), 18446744073709551621.0);
  EXPECT_TRUE((*j)["bytes"].is_binary());
  EXPECT_EQ((*j)["set"], nlohmann::json::array({7}));
  EXPECT_EQ((*j)["\xc3\xa9"], "\xc3\xbcn\xc3\xaf");
}

TEST(Pickle, RealFlightRecorderDumpOfPyTorch) {
  const std::string data = Fixture("torch_fr.pickle");
  auto d = ParseFlightRecorder(data, "nccl_trace_rank_0", 0);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->version, "2.10");
  EXPECT_EQ(d->rank, 0);
  ASSERT_EQ(d->entries.size(), 3u);
  EXPECT_EQ(d->entries[0].pg_name, "0");
  EXPECT_EQ(d->entries[0].pg_desc, "default_pg");
  EXPECT_EQ(d->entries[0].profiling_name, "gloo:all_reduce");
  EXPECT_EQ(d->entries[0].input_sizes, (std::vector<std::vector<int64_t>>{{4}}));
  EXPECT_EQ(d->entries[0].input_dtypes, (std::vector<std::string>{"Float"}));
  EXPECT_TRUE(d->entries[0].completed());  // gloo: retired
  EXPECT_GT(d->entries[0].time_created_ns, 1'700'000'000'000'000'000);
  EXPECT_EQ(d->entries[1].pg_name, "1");  // the metrics group
  EXPECT_EQ(d->entries[1].collective_seq_id, 1);
  EXPECT_EQ(d->entries[2].profiling_name, "gloo:barrier");
  EXPECT_EQ(d->entries[2].collective_seq_id, 2);
}

TEST(Pickle, EveryTruncationIsAClearError) {
  for (const char* name : {"plain_p2.pickle", "plain_p5.pickle", "shared.pickle", "torch_fr.pickle"}) {
    const std::string data = Fixture(name);
    for (size_t n = 0; n < data.size(); ++n) {
      auto j = ReadPickle(std::string_view(data).substr(0, n));
      ASSERT_FALSE(j.ok()) << name << " cut at " << n;
    }
  }
  const std::string data = Fixture("torch_fr.pickle");
  auto d = ParseFlightRecorder(std::string_view(data).substr(0, data.size() / 2), "nccl_trace_rank_3", 3);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("nccl_trace_rank_3: a pickle cut off"), std::string::npos) << d.status().message();
  EXPECT_NE(d.status().message().find("truncated"), std::string::npos);
}

TEST(Pickle, NeverLoadsClassesOrCallsFunctions) {
  auto j = ReadPickle(Fixture("class.pickle"));
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("GLOBAL datetime.date"), std::string::npos) << j.status().message();
  // The classic: os.system("...") through GLOBAL + REDUCE, protocol 0 and 2.
  auto sys0 = ReadPickle("cos\nsystem\n(S'touch /tmp/pwned'\ntR."s);
  ASSERT_FALSE(sys0.ok());
  EXPECT_NE(sys0.status().message().find("GLOBAL os.system at byte 0"), std::string::npos) << sys0.status().message();
  auto stack_global = ReadPickle("\x80\x04\x8c\x02os\x8c\x06system\x93"s);
  ASSERT_FALSE(stack_global.ok());
  EXPECT_NE(stack_global.status().message().find("STACK_GLOBAL"), std::string::npos);
  // REDUCE on plain values, BUILD, a persistent id: refused too, never applied.
  for (std::string op : {"R", "b", "Q", "\x81"}) {
    auto r = ReadPickle("\x80\x02K\x01K\x02"s + op + ".");
    ASSERT_FALSE(r.ok()) << op;
    EXPECT_NE(r.status().message().find("never loads classes"), std::string::npos);
  }
  EXPECT_FALSE(ReadPickle("\x80\x06N."s).ok());  // an unknown protocol
}

TEST(Pickle, MalformedStacksAreErrors) {
  EXPECT_FALSE(ReadPickle("\x80\x02" "a."s).ok());             // APPEND on nothing
  EXPECT_FALSE(ReadPickle("\x80\x02" "K\x01" "a."s).ok());     // APPEND to an int
  EXPECT_FALSE(ReadPickle("\x80\x02" ")K\x01" "a."s).ok());    // APPEND to a tuple
  EXPECT_FALSE(ReadPickle("\x80\x02" "}K\x01" "s."s).ok());    // SETITEM without a value
  EXPECT_FALSE(ReadPickle("\x80\x02" "e."s).ok());             // APPENDS without MARK
  EXPECT_FALSE(ReadPickle("\x80\x02" "h\x05."s).ok());         // a memo never stored
  EXPECT_FALSE(ReadPickle("\x80\x02" "X\xff\xff\xff\x7f" "ab."s).ok());  // a length beyond the end
  EXPECT_FALSE(ReadPickle("\x80\x02(."s).ok());                // STOP with only a MARK
  auto ok = ReadPickle("\x80\x02" "]q\x00(K\x01K\x02" "e0h\x00."s);  // POP, then the memo
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(*ok, nlohmann::json::array({1, 2}));
}

TEST(Pickle, LimitsHold) {
  // A list that holds itself: refused at the depth limit, not followed forever.
  auto self = ReadPickle("\x80\x02" "]q\x00h\x00" "a."s);
  ASSERT_FALSE(self.ok());
  EXPECT_NE(self.status().message().find("deeper than"), std::string::npos);
  // Doubling through the memo: 40 levels of [x, x] is 2^40 values once written out.
  std::string bomb = "\x80\x02N"s;
  for (int i = 0; i < 40; ++i) bomb += "q\x00h\x00\x86"s;  // x -> (x, x)
  bomb += ".";
  auto b = ReadPickle(bomb, PickleLimits{.max_values = 100000, .max_depth = 64});
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("expands to more than 100000"), std::string::npos) << b.status().message();
  // Many values: refused past the limit.
  std::string many = "\x80\x02]q\x00("s;
  for (int i = 0; i < 2000; ++i) many += "K\x01";
  many += "e.";
  EXPECT_TRUE(ReadPickle(many).ok());
  auto m = ReadPickle(many, PickleLimits{.max_values = 1000});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("more than 1000 values"), std::string::npos);
  // Integers of thousands of bytes are not integers of a dump.
  std::string long4 = "\x80\x02\x8b\x00\x10\x00\x00"s + std::string(4096, '\x01') + ".";
  EXPECT_FALSE(ReadPickle(long4).ok());
}

TEST(Pickle, InvalidUtf8AndNanStayWritable) {
  // BINUNICODE with a lone surrogate (Python's surrogatepass) and a bare 0xff byte.
  auto j = ReadPickle("\x80\x02X\x05\x00\x00\x00" "\xed\xa0\x80" "a\xff."s);
  ASSERT_TRUE(j.ok()) << j.status().message();
  EXPECT_EQ(j->get<std::string>(), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "a\xef\xbf\xbd");
  EXPECT_NO_THROW((void)j->dump());
  // A dump whose sizes and times are NaN floats and 1e300: read, clamped, never a crash.
  const std::string nan = "\x7f\xf8\x00\x00\x00\x00\x00\x00"s, huge = "\x7e\x37\xe4\x3c\x88\x00\x75\x9c"s;
  std::string dump = "\x80\x02}(X\x07\x00\x00\x00" "entries](}(X\x0d\x00\x00\x00" "process_group" "X\x01\x00\x00\x00" "0"
                     "X\x0f\x00\x00\x00" "time_created_ns" "G"s + nan +
                     "X\x0b\x00\x00\x00" "input_sizes" "](](G"s + huge + "ee" "ueu."s;
  auto d = ParseFlightRecorder(dump, "nccl_trace_rank_1", 1);
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->entries.size(), 1u);
  EXPECT_EQ(d->entries[0].time_created_ns, 0);
  EXPECT_EQ(d->entries[0].input_sizes, (std::vector<std::vector<int64_t>>{{INT64_MAX}}));
}

}  // namespace
}  // namespace rankscope::hang
