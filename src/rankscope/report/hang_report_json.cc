#include "rankscope/hang/rank_ranges.h"
#include "rankscope/report/hang_report.h"

namespace rankscope {
namespace {

using Json = nlohmann::json;

Json FrameJson(const hang::Frame& f) {
  Json j = {{"file", f.file}, {"function", f.function}, {"native", f.native}};
  if (!f.native) j["line"] = f.line;
  if (!f.code.empty()) j["code"] = f.code;
  return j;
}

Json FramesJson(const std::vector<hang::Frame>& frames) {
  Json out = Json::array();
  for (const auto& f : frames) out.push_back(FrameJson(f));
  return out;
}

Json CallJson(const hang::CollectiveCall& c) {
  return {{"op", c.op}, {"sizes", c.sizes}, {"dtypes", c.dtypes}};
}

Json FindingJson(const Finding& f) {
  Json ev = Json::array();
  for (const Evidence& e : f.evidence) {
    Json j = {{"kind", EvidenceKindName(e.kind)}};
    if (e.rank >= 0) j["rank"] = e.rank;
    if (!e.ranks.empty()) j["ranks"] = e.ranks;
    if (!e.subject.empty()) j["subject"] = e.subject;
    if (!e.subject_kind.empty()) j["subject_kind"] = e.subject_kind;
    if (!e.detail.empty()) j["detail"] = e.detail;
    for (const Quantity& q : e.values) j["values"][q.name] = q.value;
    if (!e.text.empty()) j["text"] = e.text;
    ev.push_back(std::move(j));
  }
  return {{"kind", FindingKindId(f.kind)},
          {"severity", SeverityName(f.severity)},
          {"ranks", f.ranks},
          {"hosts", f.hosts},
          {"subject", f.subject},
          {"subject_kind", f.subject_kind},
          {"subject_detail", f.subject_detail},
          {"sentence", HangFindingSentence(f)},
          {"evidence", ev},
          {"next", {{"kind", NextStepKindName(f.next.kind)}, {"subject", f.next.subject}, {"detail", f.next.detail},
                    {"sentence", HangNextStepSentence(f)}}}};
}

}  // namespace

Json HangReportJson(const hang::HangAnalysis& a) {
  Json ranks = Json::array();
  for (const auto& o : a.ranks) {
    // The rank's DataLoader workers whose stacks the daemon took: each thread's frames.
    Json workers = Json::array();
    for (const auto& w : a.files.worker_stacks) {
      if (w.rank != o.rank) continue;
      Json threads = Json::array();
      for (const auto& t : w.threads) {
        threads.push_back({{"name", t.name}, {"kind", t.kind}, {"gil", t.owns_gil}, {"frames", FramesJson(t.frames)}});
      }
      workers.push_back({{"pid", w.pid}, {"file", w.path}, {"threads", threads}});
    }
    ranks.push_back({{"rank", o.rank}, {"host", o.host}, {"pid", o.pid}, {"has_stacks", o.has_stacks},
                     {"has_flight_recorder", o.has_dump},
                     {"stack_taken_by", o.has_stacks ? std::string(hang::StackSourceName(o.source)) : "none"},
                     {"how", o.how}, {"steps_completed", o.steps_completed},
                     {"seconds_since_last_step", o.seconds_since_last_step}, {"stalled", o.stalled},
                     {"dataloader_workers", workers}});
  }
  Json roles = Json::array();
  for (size_t i = 0; i < a.roles.size(); ++i) {
    const auto& rg = a.roles[i];
    const auto& v = a.verdicts[i];
    Json groups = Json::array();
    for (size_t g = 0; g < rg.groups.size(); ++g) {
      groups.push_back({{"ranks", rg.groups[g].ranks}, {"rank_ranges", hang::FormatRankRanges(rg.groups[g].ranks)},
                        {"threads", rg.groups[g].threads}, {"majority", v.has_majority && g == v.majority_group},
                        {"frames", FramesJson(rg.groups[g].frames)}, {"example_rank", rg.groups[g].example_rank},
                        {"example", FramesJson(rg.groups[g].example)}});
    }
    Json odd = Json::array();
    for (const auto& d : v.odd) {
      Json j = {{"ranks", d.ranks}, {"common_depth", d.common_depth}};
      if (d.common_frame) j["common_frame"] = FrameJson(*d.common_frame);
      if (d.odd_frame) j["odd_frame"] = FrameJson(*d.odd_frame);
      if (d.majority_frame) j["majority_frame"] = FrameJson(*d.majority_frame);
      odd.push_back(std::move(j));
    }
    roles.push_back({{"role", rg.role}, {"ranks", rg.ranks}, {"has_majority", v.has_majority}, {"groups", groups},
                     {"odd_ones_out", odd}});
  }
  Json groups = Json::array();
  for (const auto& g : a.fr.groups) {
    Json states = Json::array();
    for (const auto& m : g.states) {
      Json s = {{"rank", m.rank}, {"has_dump", m.has_dump}, {"last_entered", m.last_entered},
                {"last_completed", m.last_completed}, {"first_recorded", m.first_recorded}};
      if (m.last_completed_call) s["last_completed_call"] = CallJson(*m.last_completed_call);
      if (m.pending_call) {
        s["pending_call"] = CallJson(*m.pending_call);
        s["pending_seq"] = m.pending_seq;
        s["pending_s"] = m.pending_s;
      }
      states.push_back(std::move(s));
    }
    Json gj = {{"name", g.name}, {"desc", g.desc}, {"members", g.members}, {"members_known", g.members_known},
               {"members_state", states}, {"mismatches", Json::array()}};
    if (g.open) {
      gj["first_open"] = {{"seq", g.open->seq}, {"call", CallJson(g.open->call)}, {"entered", g.open->entered},
                          {"completed", g.open->completed}, {"missing", g.open->missing}, {"unknown", g.open->unknown},
                          {"pending_s", g.open->pending_s}};
    }
    for (const auto& m : g.mismatches) {
      Json odd = Json::array();
      for (const auto& o : m.odd) odd.push_back({{"ranks", o.ranks}, {"call", CallJson(o.call)}});
      gj["mismatches"].push_back({{"seq", m.seq}, {"field", m.field}, {"tie", m.tie},
                                  {"majority", {{"ranks", m.majority.ranks}, {"call", CallJson(m.majority.call)}}},
                                  {"odd", odd}});
    }
    groups.push_back(std::move(gj));
  }
  Json findings = Json::array();
  for (const auto& f : a.findings) findings.push_back(FindingJson(f));
  Json problems = Json::array();
  for (const auto& p : a.files.problems) problems.push_back({{"path", p.path}, {"message", p.message}});
  return {{"schema", "rankscope.hang/1"},
          {"job", a.files.job},
          {"capture", a.files.capture},
          {"world_size", a.files.world_size},
          {"stalled", a.stalled},
          {"stalled_for_s", a.stalled_for_s},
          {"thresholds", {{"stalled_after_s", a.options.stalled_after_s}, {"stall_step_factor", a.options.stall_step_factor}}},
          {"ranks", ranks},
          {"findings", findings},
          {"thread_roles", roles},
          {"process_groups", groups},
          {"notes", a.fr.notes},
          {"warnings", a.files.warnings},
          {"problems", problems}};
}

}  // namespace rankscope
