#include "rankscope/cluster/layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "rankscope/base/parse_int.h"
#include "rankscope/cluster/collective_matching.h"

namespace rankscope {
namespace {

// The words of a group description: "mesh_dp_shard" -> {mesh, dp, shard}.
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::string w;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!w.empty()) {
      words.push_back(std::move(w));
      w.clear();
    }
  }
  if (!w.empty()) words.push_back(std::move(w));
  return words;
}

// What the names PyTorch, Megatron and torchtitan give their groups say about them.
GroupRole RoleFromDescription(std::string_view desc) {
  for (const std::string& w : Words(desc)) {
    if (w == "pp" || w == "pipe" || w == "pipeline") return GroupRole::kPipeline;
    if (w == "dp" || w == "data" || w == "ddp" || w == "fsdp" || w == "shard" || w == "replicate") {
      return GroupRole::kData;
    }
    if (w == "tp" || w == "tensor" || w == "mp") return GroupRole::kTensor;
    if (w == "cp" || w == "context" || w == "sp") return GroupRole::kContext;
    if (w == "ep" || w == "expert" || w == "moe") return GroupRole::kExpert;
    if (w == "default") return GroupRole::kWorld;
  }
  return GroupRole::kUnknown;
}

bool IsPointToPoint(std::string_view op) {
  return op.find("send") != std::string_view::npos || op.find("recv") != std::string_view::npos;
}

struct GroupKey {
  std::string name;
  std::vector<int64_t> ranks;
  auto operator<=>(const GroupKey&) const = default;
};

struct GroupFacts {
  std::string desc;
  std::set<std::string> ops;  // collectives seen in the group
};

// Every group any trace names, with the collectives the traces saw in it.
std::map<GroupKey, GroupFacts> CollectGroups(const std::vector<RankSummary>& ranks, std::vector<std::string>* notes) {
  std::map<GroupKey, GroupFacts> groups;
  std::map<std::string, std::vector<int64_t>> by_name;
  auto add = [&](const ProcessGroupRef& g) -> GroupFacts* {
    std::vector<int64_t> members = ParseRankList(g.ranks);
    std::sort(members.begin(), members.end());
    if (members.empty()) return nullptr;
    auto [it, inserted] = by_name.try_emplace(g.name, members);
    if (!inserted && it->second != members && !g.name.empty()) {
      notes->push_back(fmt::format("process group {} has different members in different traces ({} and {}); "
                                   "both are kept", g.name, fmt::join(it->second, ","), fmt::join(members, ",")));
    }
    GroupFacts& f = groups[{g.name, members}];
    if (f.desc.empty()) f.desc = g.desc;
    return &f;
  };
  for (const RankSummary& r : ranks) {
    for (const ProcessGroupRef& g : r.pg_config) add(g);
    std::vector<GroupFacts*> used(r.process_groups.size(), nullptr);
    for (size_t i = 0; i < r.process_groups.size(); ++i) used[i] = add(r.process_groups[i]);
    for (const CollectiveInstance& c : r.collectives) {
      if (c.group < used.size() && used[c.group] && c.type < r.collective_types.size()) {
        used[c.group]->ops.insert(r.collective_types[c.type].op);
      }
    }
  }
  return groups;
}

GroupRole RoleFromCollectives(const std::set<std::string>& ops) {
  if (ops.empty()) return GroupRole::kUnknown;
  if (std::all_of(ops.begin(), ops.end(), [](const std::string& op) { return IsPointToPoint(op); })) {
    return GroupRole::kPipeline;
  }
  if (ops.count("all_to_all") || ops.count("all_to_allv")) return GroupRole::kExpert;
  return GroupRole::kUnknown;
}

// Groups of one role must partition the ranks they cover; a rank in two pipeline groups is a
// contradiction: the second is dropped and said so.
void DropOverlapping(GroupRole role, std::vector<LayoutGroup>* groups, std::vector<std::string>* notes) {
  std::set<int64_t> seen;
  for (LayoutGroup& g : *groups) {
    if (g.role != role) continue;
    bool overlaps = std::any_of(g.ranks.begin(), g.ranks.end(), [&](int64_t r) { return seen.count(r) > 0; });
    if (overlaps) {
      notes->push_back(fmt::format("{} group {} [{}] overlaps another {} group; it is not used for the layout",
                                   GroupRoleName(role), g.name, fmt::join(g.ranks, ","), GroupRoleName(role)));
      g.role = GroupRole::kUnknown;
      g.classified_by.clear();
      continue;
    }
    seen.insert(g.ranks.begin(), g.ranks.end());
  }
}

// Two roles make a 2-D layout: unknown groups of equal size that partition the job orthogonally
// to a known role take the other one (pipeline <-> data).
void ClassifyByElimination(int64_t world, std::vector<LayoutGroup>* groups) {
  bool has_pp = false, has_dp = false;
  for (const LayoutGroup& g : *groups) {
    has_pp |= g.role == GroupRole::kPipeline;
    has_dp |= g.role == GroupRole::kData;
  }
  if (has_pp == has_dp) return;
  const GroupRole other = has_pp ? GroupRole::kData : GroupRole::kPipeline;
  int64_t covered = 0;
  std::vector<LayoutGroup*> unknown;
  for (LayoutGroup& g : *groups) {
    if (g.role == GroupRole::kUnknown && static_cast<int64_t>(g.ranks.size()) < world) {
      unknown.push_back(&g);
      covered += static_cast<int64_t>(g.ranks.size());
    }
  }
  if (unknown.empty() || covered != world) return;
  for (LayoutGroup* g : unknown) {
    g->role = other;
    g->classified_by = "elimination";
  }
}

std::vector<LayoutGroup> GroupsFromSpec(const LayoutSpec& spec, std::vector<std::string>* notes) {
  std::map<std::string, int64_t> size = {{"tp", spec.tp}, {"cp", spec.cp}, {"dp", spec.dp}, {"pp", spec.pp}};
  const std::map<std::string, GroupRole> role = {{"tp", GroupRole::kTensor}, {"cp", GroupRole::kContext},
                                                 {"dp", GroupRole::kData}, {"pp", GroupRole::kPipeline}};
  int64_t world = 1;
  std::map<std::string, int64_t> stride;
  for (const std::string& d : spec.order) {
    stride[d] = world;
    world *= size[d];
  }
  std::vector<LayoutGroup> groups;
  for (const std::string& d : spec.order) {
    if (size[d] <= 1) continue;
    std::set<int64_t> done;
    for (int64_t r = 0; r < world; ++r) {
      const int64_t base = r - ((r / stride[d]) % size[d]) * stride[d];
      if (!done.insert(base).second) continue;
      LayoutGroup g;
      g.role = role.at(d);
      g.classified_by = "--layout";
      for (int64_t i = 0; i < size[d]; ++i) g.ranks.push_back(base + i * stride[d]);
      groups.push_back(std::move(g));
    }
  }
  (void)notes;
  return groups;
}

std::vector<LayoutGroup> GroupsFromTraces(const std::vector<RankSummary>& ranks, int64_t world,
                                          std::vector<std::string>* notes) {
  std::vector<LayoutGroup> groups;
  for (const auto& [key, facts] : CollectGroups(ranks, notes)) {
    LayoutGroup g;
    g.name = key.name;
    g.desc = facts.desc;
    g.ranks = key.ranks;
    // A description wins over the size: a 4-stage pipeline of 4 ranks spans the world.
    if (GroupRole r = RoleFromDescription(g.desc); r != GroupRole::kUnknown) {
      g.role = r;
      g.classified_by = "description";
    } else if (static_cast<int64_t>(g.ranks.size()) >= world && world > 1) {
      g.role = GroupRole::kWorld;
      g.classified_by = "size";
    } else if (GroupRole c = RoleFromCollectives(facts.ops); c != GroupRole::kUnknown) {
      g.role = c;
      g.classified_by = "collectives";
    }
    groups.push_back(std::move(g));
  }
  ClassifyByElimination(world, &groups);
  return groups;
}

}  // namespace

std::string_view GroupRoleName(GroupRole r) {
  switch (r) {
    case GroupRole::kUnknown: return "unknown";
    case GroupRole::kWorld: return "world";
    case GroupRole::kData: return "data";
    case GroupRole::kTensor: return "tensor";
    case GroupRole::kContext: return "context";
    case GroupRole::kExpert: return "expert";
    case GroupRole::kPipeline: return "pipeline";
  }
  return "unknown";
}

StatusOr<LayoutSpec> ParseLayoutSpec(std::string_view text) {
  LayoutSpec spec;
  bool any = false;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) return InvalidArgument("--layout: '{}' is not KEY=VALUE", item);
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "order") {
      std::vector<std::string> order;
      for (const std::string& w : Words(value)) order.push_back(w);
      std::vector<std::string> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      if (sorted != std::vector<std::string>{"cp", "dp", "pp", "tp"}) {
        return InvalidArgument("--layout: order '{}' must name tp, cp, dp and pp once each", value);
      }
      spec.order = std::move(order);
      continue;
    }
    int64_t* field = key == "dp" ? &spec.dp : key == "pp" ? &spec.pp : key == "tp" ? &spec.tp : key == "cp" ? &spec.cp : nullptr;
    if (!field) return InvalidArgument("--layout: unknown dimension '{}' (dp, pp, tp, cp, order)", key);
    std::optional<int64_t> n = ParseInt(value);
    if (!n || *n < 1) return InvalidArgument("--layout: {}='{}' is not a positive integer", key, value);
    *field = *n;
    any = true;
  }
  if (!any) return InvalidArgument("--layout: give at least one size, e.g. dp=2,pp=2");
  return spec;
}

JobLayout InferLayout(const std::vector<RankSummary>& ranks, const LayoutSpec* spec) {
  JobLayout layout;
  std::map<int64_t, uint32_t> index;
  for (uint32_t i = 0; i < ranks.size(); ++i) index[ranks[i].rank.rank] = i;
  int64_t world = static_cast<int64_t>(ranks.size());
  for (const RankSummary& r : ranks) world = std::max(world, r.world_size.value_or(0));
  if (spec) {
    layout.source = "--layout";
    layout.groups = GroupsFromSpec(*spec, &layout.notes);
    const int64_t size = spec->dp * spec->pp * spec->tp * spec->cp;
    if (size != world) {
      layout.notes.push_back(fmt::format("--layout describes {} ranks; the traces say the world has {}", size, world));
    }
  } else {
    layout.groups = GroupsFromTraces(ranks, world, &layout.notes);
    layout.source = layout.groups.empty() ? "none" : "traces";
    if (layout.groups.empty()) {
      layout.notes.push_back("the traces name no process groups: every rank is compared with every other "
                             "(give --layout when the job is pipelined)");
    }
  }
  DropOverlapping(GroupRole::kPipeline, &layout.groups, &layout.notes);
  DropOverlapping(GroupRole::kData, &layout.groups, &layout.notes);

  layout.stage.assign(ranks.size(), 0);
  layout.data_index.assign(ranks.size(), -1);
  std::set<int64_t> depths;
  for (LayoutGroup& g : layout.groups) {
    for (int64_t r : g.ranks) {
      if (!index.count(r)) g.untraced.push_back(r);
    }
    if (!g.untraced.empty() && g.role != GroupRole::kWorld) {
      layout.notes.push_back(fmt::format("{} group [{}] names ranks without a trace ({}): compared with the ranks there are",
                                         GroupRoleName(g.role), fmt::join(g.ranks, ","), fmt::join(g.untraced, ",")));
    }
    for (size_t pos = 0; pos < g.ranks.size(); ++pos) {
      auto it = index.find(g.ranks[pos]);
      if (it == index.end()) continue;
      if (g.role == GroupRole::kPipeline) layout.stage[it->second] = static_cast<int64_t>(pos);
      if (g.role == GroupRole::kData) layout.data_index[it->second] = static_cast<int64_t>(pos);
    }
    if (g.role == GroupRole::kPipeline) depths.insert(static_cast<int64_t>(g.ranks.size()));
    if (g.role == GroupRole::kData) layout.data_parallel = std::max<int64_t>(layout.data_parallel, g.ranks.size());
  }
  if (!depths.empty()) layout.stages = *depths.rbegin();
  if (depths.size() > 1) {
    layout.notes.push_back(fmt::format("pipeline groups of different sizes ({}): stages are numbered within each",
                                       fmt::join(depths, ", ")));
  }
  std::vector<int64_t> unknown;
  for (const LayoutGroup& g : layout.groups) {
    if (g.role == GroupRole::kUnknown) unknown.insert(unknown.end(), g.ranks.begin(), g.ranks.end());
  }
  if (!unknown.empty() && layout.source == "traces") {
    layout.notes.push_back("some process groups could not be classified (no telling description or collectives); "
                           "give --layout to say what they are");
  }
  return layout;
}

std::vector<std::vector<uint32_t>> RanksByStage(const JobLayout& layout) {
  std::vector<std::vector<uint32_t>> by_stage(static_cast<size_t>(std::max<int64_t>(layout.stages, 1)));
  for (uint32_t i = 0; i < layout.stage.size(); ++i) {
    const int64_t s = std::clamp<int64_t>(layout.stage[i], 0, static_cast<int64_t>(by_stage.size()) - 1);
    by_stage[static_cast<size_t>(s)].push_back(i);
  }
  return by_stage;
}

}  // namespace rankscope
