#include "rankscope/hang/suspects.h"

#include <algorithm>
#include <map>
#include <set>

#include "rankscope/hang/hang_analysis.h"
#include "rankscope/hang/rank_ranges.h"
#include "rankscope/hang/thread_roles.h"

namespace rankscope::hang {
namespace {

std::string GroupLabel(const GroupMatch& g) {
  return g.desc.empty() || g.desc == "undefined" ? g.name : fmt::format("{} ({})", g.name, g.desc);
}

std::string CallText(const CollectiveCall& c) {
  std::string text = c.op;
  if (!c.sizes.empty()) text += " " + c.SizesText();
  if (!c.dtypes.empty()) text += " " + c.DtypesText();
  return text;
}

constexpr size_t kNativeFramesShown = 4;

bool Has(const std::vector<int64_t>& v, int64_t r) { return std::find(v.begin(), v.end(), r) != v.end(); }

// One anomaly of the flight recorder, before it becomes a finding.
struct Anomaly {
  enum Kind { kMismatch, kMissing, kAllInside } kind;
  const GroupMatch* group = nullptr;
  const Mismatch* mismatch = nullptr;
  const OpenCollective* open = nullptr;
  int64_t time_ns = 0;
  std::vector<int64_t> culprits;
};

class Rules {
 public:
  explicit Rules(const HangAnalysis& a) : a_(a) {
    for (const RankStacks& s : a.files.stacks) stacks_[s.rank] = &s;
    for (size_t i = 0; i < a.roles.size(); ++i) {
      if (a.roles[i].role == "main") main_ = i;
    }
  }

  std::vector<Finding> Run() {
    std::vector<Finding> out;
    std::set<int64_t> named;
    for (const Anomaly& an : Anomalies()) {
      if (!a_.stalled && an.kind != Anomaly::kMismatch) continue;
      Finding f = an.kind == Anomaly::kMismatch  ? MismatchFinding(an)
                  : an.kind == Anomaly::kMissing ? MissingFinding(an)
                                                 : AllInsideFinding(an);
      for (int64_t r : an.culprits) named.insert(r);
      out.push_back(std::move(f));
    }
    if (a_.stalled) {
      for (const RankOverview& o : a_.ranks) {
        if (named.count(o.rank) || !o.has_stacks || o.source != StackSource::kPySpy) continue;
        Finding f;
        f.kind = FindingKind::kHangUnresponsiveRank;
        f.severity = Severity::kCritical;
        f.ranks = {o.rank};
        AddWaitingFor(o.rank, &f);
        AddRankEvidence(o.rank, &f);
        SubjectFromNative(o.rank, &f);
        f.next = {NextStepKind::kHangNativeCall, f.subject, ""};
        named.insert(o.rank);
        out.push_back(std::move(f));
      }
      StackOutliers(named, &out);
    }
    if (!out.empty()) AddHosts(&out);
    return out;
  }

 private:
  // Flight-recorder anomalies in the order they began; consequences dropped.
  std::vector<Anomaly> Anomalies() const {
    std::vector<Anomaly> all;
    for (const GroupMatch& g : a_.fr.groups) {
      if (!g.mismatches.empty()) {
        const Mismatch& m = g.mismatches.front();
        Anomaly an{Anomaly::kMismatch, &g, &m, nullptr, m.time_created_ns, {}};
        if (!m.tie) {
          for (const CallGroup& odd : m.odd) an.culprits.insert(an.culprits.end(), odd.ranks.begin(), odd.ranks.end());
        }
        all.push_back(std::move(an));
      }
      if (g.open && !g.open->missing.empty()) {
        Anomaly an{Anomaly::kMissing, &g, nullptr, &*g.open, g.open->time_created_ns, g.open->missing};
        all.push_back(std::move(an));
      } else if (g.open && g.open->unknown.empty() && g.open->completed.empty() && g.mismatches.empty() &&
                 g.open->entered.size() == g.members.size()) {
        all.push_back({Anomaly::kAllInside, &g, nullptr, &*g.open, g.open->time_created_ns, {}});
      }
    }
    std::stable_sort(all.begin(), all.end(), [](const Anomaly& x, const Anomaly& y) {
      const int64_t tx = x.time_ns > 0 ? x.time_ns : INT64_MAX, ty = y.time_ns > 0 ? y.time_ns : INT64_MAX;
      return tx < ty;
    });
    // A rank that waits in an earlier open collective cannot enter a later one: a later anomaly
    // whose missing ranks all wait earlier is a consequence.
    std::vector<Anomaly> kept;
    std::set<int64_t> waiting;  // ranks waiting inside an anomaly already kept
    for (Anomaly& an : all) {
      if (an.kind == Anomaly::kMissing &&
          std::all_of(an.culprits.begin(), an.culprits.end(), [&](int64_t r) { return waiting.count(r) > 0; })) {
        continue;
      }
      if (an.open) {
        for (int64_t r : an.open->entered) {
          if (!Has(an.open->completed, r)) waiting.insert(r);
        }
      }
      if (an.mismatch) {
        for (int64_t r : an.mismatch->majority.ranks) waiting.insert(r);
      }
      kept.push_back(std::move(an));
    }
    return kept;
  }

  Finding MismatchFinding(const Anomaly& an) const {
    const Mismatch& m = *an.mismatch;
    Finding f;
    f.kind = FindingKind::kHangCollectiveMismatch;
    f.severity = a_.stalled ? Severity::kCritical : Severity::kWarning;
    f.ranks = an.culprits;
    f.subject = m.majority.call.op;
    f.subject_kind = "collective";
    f.subject_detail = m.field;
    Evidence maj;
    maj.kind = EvidenceKind::kCollectiveCall;
    maj.ranks = m.majority.ranks;
    maj.subject = CallText(m.majority.call);
    maj.subject_kind = "majority";
    maj.detail = GroupLabel(*an.group);
    maj.Set("seq", m.seq);
    f.evidence.push_back(std::move(maj));
    for (const CallGroup& odd : m.odd) {
      Evidence e;
      e.kind = EvidenceKind::kCollectiveCall;
      e.ranks = odd.ranks;
      e.subject = CallText(odd.call);
      e.subject_kind = "odd";
      e.detail = GroupLabel(*an.group);
      e.Set("seq", m.seq);
      f.evidence.push_back(std::move(e));
    }
    for (int64_t r : f.ranks) AddRankEvidence(r, &f);
    f.next = {NextStepKind::kHangCollectiveCallSites, m.majority.call.op, m.field};
    return f;
  }

  Finding MissingFinding(const Anomaly& an) const {
    const OpenCollective& open = *an.open;
    Finding f;
    f.severity = Severity::kCritical;
    f.ranks = open.missing;
    f.subject = open.call.op;
    f.subject_kind = "collective";
    const bool all_unresponsive = std::all_of(f.ranks.begin(), f.ranks.end(), [&](int64_t r) { return PySpy(r); });
    const bool all_dataloader = std::all_of(f.ranks.begin(), f.ranks.end(), [&](int64_t r) { return InDataLoader(r); });
    f.kind = all_unresponsive ? FindingKind::kHangUnresponsiveRank
             : all_dataloader ? FindingKind::kHangDataLoaderWait
                              : FindingKind::kHangMissingFromCollective;
    Evidence wait;
    wait.kind = EvidenceKind::kCollectiveWaiting;
    for (int64_t r : open.entered) {
      if (!Has(open.completed, r)) wait.ranks.push_back(r);
    }
    wait.subject = CallText(open.call);
    wait.subject_kind = "collective";
    wait.detail = GroupLabel(*an.group);
    wait.Set("seq", open.seq);
    wait.Set("members", an.group->members.size());
    if (open.pending_s >= 0) wait.Set("pending_s", open.pending_s);
    f.evidence.push_back(std::move(wait));
    for (int64_t r : open.missing) {
      Evidence miss;
      miss.kind = EvidenceKind::kCollectiveMissing;
      miss.rank = r;
      miss.detail = GroupLabel(*an.group);
      for (const MemberState& m : an.group->states) {
        if (m.rank != r) continue;
        miss.Set("seq", open.seq);
        miss.Set("last_entered", m.last_entered);
        miss.Set("last_completed", m.last_completed);
        if (m.last_completed_call) miss.subject = CallText(*m.last_completed_call);
      }
      f.evidence.push_back(std::move(miss));
      OtherCollective(r, *an.group, &f);
    }
    if (!open.unknown.empty()) {
      Evidence unk;
      unk.kind = EvidenceKind::kCollectiveUnknown;
      unk.ranks = open.unknown;
      unk.detail = GroupLabel(*an.group);
      f.evidence.push_back(std::move(unk));
    }
    for (int64_t r : f.ranks) AddRankEvidence(r, &f);
    if (f.kind == FindingKind::kHangUnresponsiveRank) {
      SubjectFromNative(f.ranks.front(), &f);
      f.next = {NextStepKind::kHangNativeCall, f.subject, ""};
    } else if (f.kind == FindingKind::kHangDataLoaderWait) {
      for (int64_t r : f.ranks) AddWorkerEvidence(r, &f);
      const Evidence* worker = nullptr;
      for (const Evidence& e : f.evidence) {
        if (!worker && e.kind == EvidenceKind::kStackFrame && e.subject_kind == "dataloader_worker") worker = &e;
      }
      f.next = {NextStepKind::kHangDataLoaderWorkers, worker ? worker->subject : "", ""};
    } else {
      const Frame* where = Innermost(f.ranks.front());
      f.next = {NextStepKind::kHangFrame, where ? where->Key() : "", open.call.op};
    }
    return f;
  }

  Finding AllInsideFinding(const Anomaly& an) const {
    Finding f;
    f.kind = FindingKind::kHangStuckInCollective;
    f.severity = Severity::kWarning;
    f.ranks = an.open->entered;
    f.subject = an.open->call.op;
    f.subject_kind = "collective";
    Evidence wait;
    wait.kind = EvidenceKind::kCollectiveWaiting;
    wait.ranks = an.open->entered;
    wait.subject = CallText(an.open->call);
    wait.subject_kind = "collective";
    wait.detail = GroupLabel(*an.group);
    wait.Set("seq", an.open->seq);
    wait.Set("members", an.group->members.size());
    if (an.open->pending_s >= 0) wait.Set("pending_s", an.open->pending_s);
    f.evidence.push_back(std::move(wait));
    f.next = {NextStepKind::kHangTransport, an.open->call.op, ""};
    return f;
  }

  // The collectives whose members wait while `rank` left no dump (it could not answer).
  void AddWaitingFor(int64_t rank, Finding* f) const {
    for (const GroupMatch& g : a_.fr.groups) {
      if (!g.open || !Has(g.open->unknown, rank)) continue;
      Evidence wait;
      wait.kind = EvidenceKind::kCollectiveWaiting;
      for (int64_t r : g.open->entered) {
        if (!Has(g.open->completed, r)) wait.ranks.push_back(r);
      }
      if (wait.ranks.empty()) continue;
      wait.subject = CallText(g.open->call);
      wait.subject_kind = "collective";
      wait.detail = GroupLabel(g);
      wait.Set("seq", g.open->seq);
      wait.Set("members", g.members.size());
      if (g.open->pending_s >= 0) wait.Set("pending_s", g.open->pending_s);
      f->evidence.push_back(std::move(wait));
    }
  }

  // A missing rank that meanwhile waits in another group's collective (it skipped one).
  void OtherCollective(int64_t rank, const GroupMatch& except, Finding* f) const {
    for (const GroupMatch& g : a_.fr.groups) {
      if (&g == &except) continue;
      for (const MemberState& m : g.states) {
        if (m.rank != rank || !m.pending_call) continue;
        Evidence e;
        e.kind = EvidenceKind::kCollectiveElsewhere;
        e.rank = rank;
        e.subject = CallText(*m.pending_call);
        e.subject_kind = "collective";
        e.detail = GroupLabel(g);
        e.Set("seq", m.pending_seq);
        if (m.pending_s >= 0) e.Set("pending_s", m.pending_s);
        f->evidence.push_back(std::move(e));
      }
    }
  }

  void StackOutliers(const std::set<int64_t>& named, std::vector<Finding>* out) const {
    if (main_ >= a_.verdicts.size()) return;
    const RoleVerdict& v = a_.verdicts[main_];
    const RoleGroups& rg = a_.roles[main_];
    if (!v.has_majority) return;
    for (const Divergence& d : v.odd) {
      std::vector<int64_t> ranks;
      for (int64_t r : d.ranks) {
        if (!named.count(r)) ranks.push_back(r);
      }
      if (ranks.empty()) continue;
      Finding f;
      f.kind = FindingKind::kHangStackOutlier;
      f.severity = Severity::kWarning;
      f.ranks = ranks;
      const Frame* where = d.odd_frame ? &*d.odd_frame : (rg.groups[d.group].frames.empty() ? nullptr : &rg.groups[d.group].frames.back());
      if (where) {
        f.subject = where->Key();
        f.subject_kind = "python_frame";
      }
      AddDivergenceEvidence(rg, d, ranks, &f);
      f.next = {NextStepKind::kHangFrame, f.subject, ""};
      out->push_back(std::move(f));
    }
  }

  // ---- stacks as evidence
  const ThreadStack* MainThread(int64_t rank) const {
    auto it = stacks_.find(rank);
    if (it == stacks_.end()) return nullptr;
    for (const ThreadStack& t : it->second->threads) {
      if (ThreadRole(t) == "main") return &t;
    }
    return nullptr;
  }

  const Frame* Innermost(int64_t rank) const {
    const ThreadStack* t = MainThread(rank);
    if (!t) return nullptr;
    for (auto it = t->frames.rbegin(); it != t->frames.rend(); ++it) {
      if (!it->native) return &*it;
    }
    return nullptr;
  }

  bool PySpy(int64_t rank) const {
    auto it = stacks_.find(rank);
    return it != stacks_.end() && it->second->source == StackSource::kPySpy;
  }

  bool InDataLoader(int64_t rank) const {
    const ThreadStack* t = MainThread(rank);
    return t && hang::InDataLoader(*t);
  }

  static Evidence FrameEvidence(const Frame& fr, int64_t rank, std::vector<int64_t> ranks, const char* role) {
    Evidence e;
    e.kind = EvidenceKind::kStackFrame;
    e.rank = rank;
    e.ranks = std::move(ranks);
    e.subject = fr.Key();
    e.subject_kind = role;
    e.detail = fr.code;
    return e;
  }

  // Where a rank is: the frame where its main thread parts from the majority's, the innermost
  // Python frame, and for a stack taken from outside the innermost native frames.
  void AddRankEvidence(int64_t rank, Finding* f) const {
    auto it = stacks_.find(rank);
    if (it == stacks_.end()) {
      Evidence e;
      e.kind = EvidenceKind::kNoStack;
      e.rank = rank;
      for (const RankOverview& o : a_.ranks) {
        if (o.rank == rank) e.detail = o.how;
      }
      f->evidence.push_back(std::move(e));
      return;
    }
    const RankStacks& s = *it->second;
    Evidence how;
    how.kind = EvidenceKind::kStackTaken;
    how.rank = rank;
    how.subject = std::string(StackSourceName(s.source));
    how.detail = s.source_detail;
    if (s.steps_completed >= 0) how.Set("steps_completed", s.steps_completed);
    if (s.seconds_since_last_step >= 0) how.Set("seconds_since_last_step", s.seconds_since_last_step);
    f->evidence.push_back(std::move(how));
    if (main_ < a_.verdicts.size() && a_.verdicts[main_].has_majority) {
      const RoleGroups& rg = a_.roles[main_];
      for (const Divergence& d : a_.verdicts[main_].odd) {
        if (Has(d.ranks, rank)) AddDivergenceEvidence(rg, d, {rank}, f);
      }
    }
    const ThreadStack* t = MainThread(rank);
    if (!t) return;
    if (const Frame* inner = Innermost(rank)) f->evidence.push_back(FrameEvidence(*inner, rank, {}, "innermost"));
    // Below the innermost Python frame: the C calls it is in (named ones, innermost last).
    size_t natives = 0;
    for (auto fr = t->frames.rbegin(); fr != t->frames.rend() && fr->native && natives < kNativeFramesShown; ++fr) {
      if (fr->function.rfind("0x", 0) == 0) continue;
      f->evidence.push_back(FrameEvidence(*fr, rank, {}, "native"));
      ++natives;
    }
    for (const ThreadStack& other : s.threads) {
      if (other.owns_gil && &other != t && !other.frames.empty()) {
        Evidence e = FrameEvidence(other.frames.back(), rank, {}, "gil");
        e.detail = other.name;
        f->evidence.push_back(std::move(e));
      }
    }
  }

  void AddDivergenceEvidence(const RoleGroups& rg, const Divergence& d, std::vector<int64_t> ranks, Finding* f) const {
    const StackGroup& majority = rg.groups[a_.verdicts[main_].majority_group];
    if (d.common_frame) f->evidence.push_back(FrameEvidence(*d.common_frame, -1, rg.ranks, "common"));
    if (d.odd_frame) f->evidence.push_back(FrameEvidence(*d.odd_frame, -1, ranks, "odd"));
    if (d.majority_frame) f->evidence.push_back(FrameEvidence(*d.majority_frame, -1, majority.ranks, "majority"));
    if (!majority.frames.empty() && !(d.majority_frame && majority.frames.back() == *d.majority_frame)) {
      f->evidence.push_back(FrameEvidence(majority.frames.back(), -1, majority.ranks, "majority_innermost"));
    }
  }

  // Where each DataLoader worker of `rank` is (their stacks were taken by the daemon because the
  // rank's main thread waits on its DataLoader): the innermost Python frame of the worker's
  // main thread, which is where it is stuck when the rank waits for it.
  void AddWorkerEvidence(int64_t rank, Finding* f) const {
    for (const RankStacks& w : a_.files.worker_stacks) {
      if (w.rank != rank) continue;
      const ThreadStack* main = nullptr;
      for (const ThreadStack& t : w.threads) {
        if (!main || t.kind == "main") main = &t;
        if (t.kind == "main") break;
      }
      const Frame* inner = nullptr;
      if (main) {
        for (auto it = main->frames.rbegin(); it != main->frames.rend() && !inner; ++it) {
          if (!it->native) inner = &*it;
        }
      }
      Evidence e;
      e.kind = EvidenceKind::kStackFrame;
      e.subject_kind = "dataloader_worker";
      e.rank = rank;
      e.subject = inner ? inner->Key() : "(no Python frame)";
      e.detail = inner ? inner->code : "";
      e.Set("pid", static_cast<double>(w.pid));
      f->evidence.push_back(std::move(e));
    }
  }

  // The thread that holds the GIL if py-spy saw one, else the main thread.
  const ThreadStack* StuckThread(int64_t rank) const {
    auto it = stacks_.find(rank);
    if (it != stacks_.end()) {
      for (const ThreadStack& th : it->second->threads) {
        if (th.owns_gil) return &th;
      }
    }
    return MainThread(rank);
  }

  // The subject of an unresponsive rank: the innermost named native frame of the stuck thread
  // (the C call it blocks in), else its innermost Python frame.
  void SubjectFromNative(int64_t rank, Finding* f) const {
    const ThreadStack* t = StuckThread(rank);
    if (!t) return;
    const Frame* chosen = nullptr;
    for (auto fr = t->frames.rbegin(); fr != t->frames.rend() && !chosen; ++fr) {
      if (fr->native && fr->function.rfind("0x", 0) != 0) chosen = &*fr;
    }
    for (auto fr = t->frames.rbegin(); fr != t->frames.rend() && !chosen; ++fr) {
      if (!fr->native) chosen = &*fr;
    }
    if (!chosen) return;
    f->subject = chosen->Key();
    f->subject_kind = chosen->native ? "native_frame" : "python_frame";
  }

  void AddHosts(std::vector<Finding>* out) const {
    for (Finding& f : *out) {
      std::set<std::string> hosts;
      for (int64_t r : f.ranks) {
        for (const RankOverview& o : a_.ranks) {
          if (o.rank == r && !o.host.empty()) hosts.insert(o.host);
        }
      }
      f.hosts.assign(hosts.begin(), hosts.end());
    }
  }

  const HangAnalysis& a_;
  std::map<int64_t, const RankStacks*> stacks_;
  size_t main_ = SIZE_MAX;
};

}  // namespace

std::vector<Finding> FindSuspects(const HangAnalysis& analysis) { return Rules(analysis).Run(); }

}  // namespace rankscope::hang
