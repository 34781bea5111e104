#include "rankscope/base/student_t.h"

#include <utility>

namespace rankscope {
namespace {

struct Row {
  size_t degrees_of_freedom;
  double quantile;
};

// Between tabulated rows, the next smaller degrees of freedom: the larger, safer quantile.
template <size_t N>
double Lookup(const Row (&table)[N], size_t degrees_of_freedom, double normal_limit) {
  if (degrees_of_freedom > table[N - 1].degrees_of_freedom) return normal_limit;
  double q = table[0].quantile;
  for (const Row& row : table) {
    if (row.degrees_of_freedom > degrees_of_freedom) break;
    q = row.quantile;
  }
  return q;
}

}  // namespace

double StudentT975(size_t degrees_of_freedom) {
  static constexpr Row kTable[] = {
      {1, 12.706}, {2, 4.303}, {3, 3.182}, {4, 2.776}, {5, 2.571}, {6, 2.447}, {7, 2.365},
      {8, 2.306},  {9, 2.262}, {10, 2.228}, {12, 2.179}, {15, 2.131}, {20, 2.086}, {30, 2.042},
      {60, 2.000}, {120, 1.980}};
  return Lookup(kTable, degrees_of_freedom, 1.960);
}

double StudentTThreeSigma(size_t degrees_of_freedom) {
  static constexpr Row kTable[] = {
      {1, 235.801}, {2, 19.207}, {3, 9.219}, {4, 6.620},  {5, 5.507},  {6, 4.904},  {7, 4.530},
      {8, 4.277},   {9, 4.094},  {10, 3.957}, {11, 3.850}, {12, 3.764}, {13, 3.694}, {14, 3.636},
      {15, 3.586},  {16, 3.544}, {17, 3.507}, {18, 3.475}, {19, 3.447}, {20, 3.422}, {25, 3.330},
      {30, 3.270},  {40, 3.199}, {60, 3.130}, {120, 3.064}};
  return Lookup(kTable, degrees_of_freedom, 3.0);
}

double WelchDegreesOfFreedom(double variance_a, size_t n_a, double variance_b, size_t n_b) {
  double sum = 0, denominator = 0;
  for (auto [variance, n] : {std::pair{variance_a, n_a}, std::pair{variance_b, n_b}}) {
    if (n < 2 || variance <= 0) continue;
    const double term = variance / static_cast<double>(n);
    sum += term;
    denominator += term * term / static_cast<double>(n - 1);
  }
  return denominator > 0 ? sum * sum / denominator : 1e9;
}

}  // namespace rankscope
