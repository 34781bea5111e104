// ParallelFor: run fn(i) for i in [0, n) on up to `threads` threads.
//
// Work items are claimed from an atomic counter, so long and short items balance themselves.
// This is the only threading primitive the engine needs: per-file and per-rank work is
// independent, and results are written to per-item slots by the caller.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace rankscope {

inline unsigned DefaultThreadCount() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

template <typename Fn>
void ParallelFor(size_t n, unsigned threads, Fn&& fn) {
  if (n == 0) return;
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(n)));
  if (threads == 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

}  // namespace rankscope
