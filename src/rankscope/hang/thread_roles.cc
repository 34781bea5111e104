#include "rankscope/hang/thread_roles.h"

#include <algorithm>
#include <cctype>

namespace rankscope::hang {
namespace {

bool HasFrame(const ThreadStack& t, std::string_view function) {
  for (const Frame& f : t.frames) {
    if (f.function == function || (f.function.size() > function.size() &&
                                   f.function.compare(f.function.size() - function.size(), function.size(), function) == 0 &&
                                   f.function[f.function.size() - function.size() - 1] == '.')) {
      return true;
    }
  }
  return false;
}

bool Contains(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }

// "Thread-12 (_worker)" -> "Thread (_worker)"; "pt_autograd_0" -> "pt_autograd_".
std::string WithoutNumbers(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(name[i])) != 0;
    if (digit) continue;
    if (name[i] == '-' && i + 1 < name.size() && std::isdigit(static_cast<unsigned char>(name[i + 1]))) continue;
    out.push_back(name[i]);
  }
  return out;
}

}  // namespace

std::string ThreadRole(const ThreadStack& t) {
  if (t.name == kCollectorThreadName) return "collector";
  if (t.kind == "main" || t.name == "MainThread") return "main";
  if (Contains(t.name, "autograd")) return "autograd";
  if (Contains(t.name, "pin_memory") || HasFrame(t, "_pin_memory_loop")) return "dataloader";
  return "thread:" + WithoutNumbers(t.name);
}

bool InDataLoader(const ThreadStack& t) {
  return std::any_of(t.frames.begin(), t.frames.end(), [](const Frame& f) {
    return !f.native && Contains(f.file, "torch/utils/data/");
  });
}

bool MainThreadInDataLoader(const RankStacks& s) {
  for (const ThreadStack& t : s.threads) {
    if (ThreadRole(t) == "main") return InDataLoader(t);
  }
  return false;
}

bool IsDataLoaderWorker(const RankStacks& s) {
  for (const ThreadStack& t : s.threads) {
    for (const Frame& f : t.frames) {
      if (!f.native && Contains(f.file, "torch/utils/data/_utils/worker.py")) return true;
    }
  }
  return false;
}

}  // namespace rankscope::hang
