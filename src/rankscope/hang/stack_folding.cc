#include "rankscope/hang/stack_folding.h"

#include <algorithm>
#include <map>

#include "rankscope/hang/thread_roles.h"

namespace rankscope::hang {
namespace {

std::string FoldKey(const ThreadStack& t) {
  std::string key;
  for (const Frame* f : t.PythonFrames()) {
    key += f->Key();
    key.push_back('\n');
  }
  return key;
}

int RoleOrder(const std::string& role) {
  if (role == "main") return 0;
  if (role == "autograd") return 1;
  if (role == "dataloader") return 2;
  return 3;
}

}  // namespace

std::vector<RoleGroups> FoldStacks(const std::vector<RankStacks>& ranks) {
  // role -> fold key -> group
  std::map<std::string, std::map<std::string, StackGroup>> by_role;
  std::map<std::string, std::vector<int64_t>> role_ranks;
  for (const RankStacks& r : ranks) {
    for (const ThreadStack& t : r.threads) {
      const std::string role = ThreadRole(t);
      if (role == "collector") continue;
      StackGroup& g = by_role[role][FoldKey(t)];
      if (g.threads == 0) {
        for (const Frame* f : t.PythonFrames()) g.frames.push_back(*f);
      }
      // Prefer an example with native frames: it says where in C the thread is.
      const bool has_native = std::any_of(t.frames.begin(), t.frames.end(), [](const Frame& f) { return f.native; });
      const bool example_has_native =
          std::any_of(g.example.begin(), g.example.end(), [](const Frame& f) { return f.native; });
      if (g.threads == 0 || (has_native && !example_has_native)) {
        g.example = t.frames;
        g.example_rank = r.rank;
      }
      g.ranks.push_back(r.rank);
      ++g.threads;
      role_ranks[role].push_back(r.rank);
    }
  }
  std::vector<RoleGroups> out;
  for (auto& [role, groups] : by_role) {
    RoleGroups rg;
    rg.role = role;
    rg.ranks = role_ranks[role];
    std::sort(rg.ranks.begin(), rg.ranks.end());
    rg.ranks.erase(std::unique(rg.ranks.begin(), rg.ranks.end()), rg.ranks.end());
    for (auto& [key, g] : groups) {
      std::sort(g.ranks.begin(), g.ranks.end());
      g.ranks.erase(std::unique(g.ranks.begin(), g.ranks.end()), g.ranks.end());
      rg.groups.push_back(std::move(g));
    }
    std::sort(rg.groups.begin(), rg.groups.end(), [](const StackGroup& a, const StackGroup& b) {
      if (a.ranks.size() != b.ranks.size()) return a.ranks.size() > b.ranks.size();
      return a.ranks.front() < b.ranks.front();
    });
    out.push_back(std::move(rg));
  }
  std::stable_sort(out.begin(), out.end(), [](const RoleGroups& a, const RoleGroups& b) {
    return RoleOrder(a.role) < RoleOrder(b.role);
  });
  return out;
}

}  // namespace rankscope::hang
