// The SIMD block scanner must agree with a byte-at-a-time reference on arbitrary input,
// including escapes that straddle 64-byte blocks.
#include "rankscope/ingest/kineto/json_block_scanner.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace rankscope::kineto::RANKSCOPE_TARGET_NS {
namespace {

// Byte-at-a-time reference with simdjson's stage-1 semantics: a backslash escapes the next
// byte wherever it is (outside strings it is invalid JSON anyway, and the chunk parser will
// reject it); only unescaped quotes open and close strings.
struct Reference {
  bool in_string = false;
  bool escaped = false;
  // Classifies byte c: returns 'o', 'c', ',' for structural bytes outside strings, else 0.
  char Step(char c) {
    const bool is_escaped = escaped;
    escaped = c == '\\' && !is_escaped;
    if (c == '"' && !is_escaped) {
      in_string = !in_string;
      return 0;
    }
    if (in_string) return 0;
    if (c == '{' || c == '[') return 'o';
    if (c == '}' || c == ']') return 'c';
    if (c == ',') return ',';
    return 0;
  }
};

void CheckAgainstReference(const std::string& text) {
  ASSERT_EQ(text.size() % 64, 0u);
  ScanCarry carry;
  Reference ref;
  for (size_t block = 0; block < text.size(); block += 64) {
    const BlockMasks m = ScanBlock(reinterpret_cast<const uint8_t*>(text.data() + block), carry);
    for (int i = 0; i < 64; ++i) {
      const char kind = ref.Step(text[block + i]);
      const uint64_t bit = uint64_t{1} << i;
      ASSERT_EQ((m.open & bit) != 0, kind == 'o') << "byte " << block + i << " of: " << text;
      ASSERT_EQ((m.close & bit) != 0, kind == 'c') << "byte " << block + i;
      ASSERT_EQ((m.comma & bit) != 0, kind == ',') << "byte " << block + i;
    }
  }
}

TEST(BlockScannerTest, RandomStructuralSoup) {
  std::mt19937 rng(7);
  const std::string alphabet = "\"\\\\{}[],:ab \n";
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text(64 * (1 + rng() % 4), ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    CheckAgainstReference(text);
  }
}

TEST(BlockScannerTest, LongBackslashRunsAcrossBlocks) {
  for (int run = 1; run < 140; ++run) {
    for (int start = 50; start < 70; ++start) {
      std::string text(192, 'x');
      text[start - 1] = '"';
      for (int i = 0; i < run && start + i < 190; ++i) text[start + i] = '\\';
      if (start + run < 191) text[start + run] = '"';
      text[191] = '}';
      CheckAgainstReference(text);
    }
  }
}

TEST(BlockScannerTest, BracketsInsideStringsAreNotStructural) {
  std::string text = R"({"name": "a}b{c]d[e,f", "x": [1,2]})";
  text.resize(64, ' ');
  ScanCarry carry;
  const BlockMasks m = ScanBlock(reinterpret_cast<const uint8_t*>(text.data()), carry);
  EXPECT_EQ(std::popcount(m.open), 2);   // '{' and '['
  EXPECT_EQ(std::popcount(m.close), 2);  // ']' and '}'
  EXPECT_EQ(std::popcount(m.comma), 2);
}

}  // namespace
}  // namespace rankscope::kineto::RANKSCOPE_TARGET_NS
