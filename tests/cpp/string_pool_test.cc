#include "rankscope/base/string_pool.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rankscope {
namespace {

TEST(StringPoolTest, EmptyStringIsIdZero) {
  StringPool pool;
  EXPECT_EQ(pool.Intern(""), StringPool::kEmptyId);
  EXPECT_EQ(pool.Get(0), "");
}

TEST(StringPoolTest, SameStringSameIdAcrossGrowth) {
  StringPool pool;
  std::vector<StringId> ids;
  for (int i = 0; i < 50000; ++i) ids.push_back(pool.Intern("name_" + std::to_string(i)));
  for (int i = 0; i < 50000; ++i) {
    const std::string s = "name_" + std::to_string(i);
    EXPECT_EQ(pool.Intern(s), ids[i]);
    EXPECT_EQ(pool.Find(s), ids[i]);
    EXPECT_EQ(pool.Get(ids[i]), s);
  }
  EXPECT_EQ(pool.size(), 50001u);
  EXPECT_EQ(pool.Find("missing"), StringPool::kNotFound);
}

TEST(StringPoolTest, ViewsStayValidAndBigStringsWork) {
  StringPool pool;
  const std::string big(100000, 'k');
  const StringId a = pool.Intern("short");
  const StringId b = pool.Intern(big);
  const std::string_view view = pool.Get(a);
  for (int i = 0; i < 10000; ++i) pool.Intern(std::to_string(i) + big.substr(0, i % 300));
  EXPECT_EQ(view, "short");  // not moved by later interning
  EXPECT_EQ(pool.Get(b), big);
  EXPECT_EQ(pool.Intern(big), b);
}

TEST(StringPoolTest, EmbeddedNulsAndBinary) {
  StringPool pool;
  const std::string a("a\0b", 3), b("a\0c", 3);
  EXPECT_NE(pool.Intern(a), pool.Intern(b));
  EXPECT_EQ(pool.Get(pool.Intern(a)), a);
}

}  // namespace
}  // namespace rankscope
