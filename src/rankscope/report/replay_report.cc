#include "rankscope/report/replay_report.h"

#include <fmt/format.h>

#include <cmath>

#include "rankscope/report/text_format.h"

namespace rankscope {
namespace {

// `text` folded at 96 columns, the first line `first` columns shorter.
std::string Wrapped(const std::string& text, size_t first) {
  std::string out, line;
  size_t width = 96 - first;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n    ";
      line.clear();
      width = 92;
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return out + line;
}

// Lines of what-ifs worth a line: at least 1 % of the step saved.
bool Worth(const ReplayWhatIf& w) { return w.step_ns > 0 && w.saving_ns >= 0.01 * w.step_ns; }

std::string Line(const std::string& what, const ReplayWhatIf& w, const std::string& per) {
  const double share = w.step_ns > 0 ? 100 * w.saving_ns / w.step_ns : 0;
  return fmt::format("    {:<42} saves {}{} ({:.1f} %)\n", what, FormatNs(w.saving_ns), per, share);
}

nlohmann::json WhatIfJson(const ReplayWhatIf& w) {
  nlohmann::json j = {{"what", w.what},
                      {"step_ns", std::llround(w.step_ns)},
                      {"estimated_step_ns", std::llround(w.estimated_step_ns)},
                      {"saving_ns", std::llround(w.saving_ns)}};
  if (!w.op.empty()) j["op"] = w.op;
  if (w.rank >= 0) j["rank"] = w.rank;
  if (w.stage >= 0) j["stage"] = w.stage;
  return j;
}

nlohmann::json List(const std::vector<ReplayWhatIf>& v) {
  nlohmann::json out = nlohmann::json::array();
  for (const ReplayWhatIf& w : v) out.push_back(WhatIfJson(w));
  return out;
}

}  // namespace

std::string ReplayText(const StepReplay& r, const std::string& per) {
  if (!r.built) return r.not_built.empty() ? "" : "  not replayed: " + Wrapped(r.not_built, 16) + "\n";
  std::string out = fmt::format("  {} rank(s) x {} step(s): {} compute segments, {} collective barriers\n", r.ranks,
                                r.steps, r.segments, r.barriers);
  out += fmt::format("  {} asynchronous participation(s)\n", r.asynchronous);
  if (r.unpaired) out += fmt::format("  {} point-to-point transfer(s) without a known peer, left in the segments\n", r.unpaired);
  out += fmt::format("  fidelity: replayed step {}{} against measured {}{}\n", FormatNs(r.replayed_step_ns), per,
                     FormatNs(r.measured_step_ns), per);
  out += fmt::format("    largest step error {:.2f} %, mean {:.2f} %{}\n", 100 * r.max_step_error,
                     100 * r.mean_step_error, r.faithful() ? ": faithful, findings about ranks and stages cost from it" : "");
  if (!r.faithful()) {
    out += r.unpaired  ? "    not faithful: transfers are missing from the graph; findings keep their own costs\n"
           : r.acausal ? fmt::format("    not faithful: {} receive(s) end before their sender starts (the spans do not\n"
                                     "    bound the transfers); findings keep their own costs\n",
                                     r.acausal)
                       : fmt::format("    not faithful: above {:.0f} %; findings keep their own costs\n", 100 * kReplayFidelity);
  }
  out += "  if every operation ran no slower than its peers' median:\n";
  out += Line("all operations (S)", r.all, per);
  out += Line("compute only", r.compute, per);
  for (const ReplayWhatIf& w : r.communication) {
    if (Worth(w)) out += Line("transfers of " + w.op + " only", w, per);
  }
  for (const ReplayWhatIf& w : r.stage_workers) {
    if (Worth(w)) out += Line(fmt::format("stage {}'s ranks like their stage peers", w.stage), w, per);
  }
  for (const ReplayWhatIf& w : r.stage_balance) {
    if (Worth(w)) out += Line(fmt::format("stage {} as fast as the other stages", w.stage), w, per);
  }
  for (const ReplayWhatIf& w : r.by_rank) {
    if (Worth(w)) out += Line(fmt::format("rank {} like its peers", w.rank), w, per);
  }
  return out;
}

nlohmann::json ReplayJson(const StepReplay& r) {
  if (!r.built) return {{"built", false}, {"not_built", r.not_built}};
  return {{"built", true},
          {"ranks", r.ranks},
          {"steps", r.steps},
          {"segments", r.segments},
          {"barriers", r.barriers},
          {"asynchronous", r.asynchronous},
          {"unpaired", r.unpaired},
          {"acausal", r.acausal},
          {"measured_step_ns", std::llround(r.measured_step_ns)},
          {"replayed_step_ns", std::llround(r.replayed_step_ns)},
          {"max_step_error", r.max_step_error},
          {"mean_step_error", r.mean_step_error},
          {"faithful", r.faithful()},
          {"all", WhatIfJson(r.all)},
          {"compute", WhatIfJson(r.compute)},
          {"communication", List(r.communication)},
          {"by_rank", List(r.by_rank)},
          {"stage_workers", List(r.stage_workers)},
          {"stage_balance", List(r.stage_balance)}};
}

}  // namespace rankscope
