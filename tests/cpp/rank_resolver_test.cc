#include "rankscope/ingest/rank_resolver.h"

#include <gtest/gtest.h>

namespace rankscope {
namespace {

TEST(RankResolverTest, FileNamePatterns) {
  EXPECT_EQ(RankFromFileName("/x/rank-3.json"), 3);
  EXPECT_EQ(RankFromFileName("rank3.pt.trace.json.gz"), 3);
  EXPECT_EQ(RankFromFileName("trainer_rank_12_step5.json"), 12);
  EXPECT_EQ(RankFromFileName("RANK7.json"), 7);
  EXPECT_EQ(RankFromFileName("rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"), 34);
  EXPECT_EQ(RankFromFileName("/ranks/worker0.1623143089861.pt.trace.json.gz"), std::nullopt);  // dir ignored
  EXPECT_EQ(RankFromFileName("ranking.json"), std::nullopt);
  EXPECT_EQ(RankFromFileName("rank12345678901.json"), std::nullopt);
}

TEST(RankResolverTest, DistributedInfoWinsOverFileName) {
  std::vector<std::string> warnings;
  auto r = ResolveRanks({{"rank5.json", 2}}, &warnings);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].rank, 2);
  EXPECT_EQ((*r)[0].source, RankSource::kDistributedInfo);
}

TEST(RankResolverTest, LoneFileWithoutRankIsRankZeroWithWarning) {
  std::vector<std::string> warnings;
  auto r = ResolveRanks({{"trace.json", std::nullopt}}, &warnings);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].rank, 0);
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(RankResolverTest, SetWithoutRankIsAnError) {
  std::vector<std::string> warnings;
  auto r = ResolveRanks({{"rank0.json", std::nullopt}, {"trace.json", std::nullopt}}, &warnings);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("trace.json: cannot tell which rank"), std::string::npos);
}

TEST(RankResolverTest, DuplicateRankNamesBothFiles) {
  std::vector<std::string> warnings;
  auto r = ResolveRanks({{"a/rank1.json", std::nullopt}, {"b/x.json", 1}}, &warnings);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("two files claim rank 1: a/rank1.json (from file name) and b/x.json (from distributedInfo)"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace rankscope
