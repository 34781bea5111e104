#include "rankscope/web/job_store.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "rankscope/report/view_data.h"
#include "rankscope/engine/analyze_job.h"
#include "rankscope/hang/hang_analysis.h"
#include "rankscope/report/hang_report.h"
#include "rankscope/report/analysis_report.h"
#include "rankscope/report/compare_view_json.h"

namespace rankscope::web {
namespace {

// What identifies the job's content: its files and their times (a capture gains traces).
std::string Fingerprint(const JobEntry& e) {
  return fmt::format("{}:{}:{}:{}", e.files.size(), e.modified_unix_s, e.files.empty() ? "" : e.files.back(),
                     e.comparison);
}

StatusOr<nlohmann::json> ReadReportJson(const std::string& path) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return IoError("cannot read {}: {}", path, ec.message());
  if (size > JobStore::kMaxReportBytes) {
    return OutOfRange("{} is {} bytes: larger than the {} a report JSON may have here", path, size,
                      JobStore::kMaxReportBytes);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open {}", path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return DataLoss("{} is not valid JSON", path);
  const auto schema_it = j.find("schema");
  const std::string schema = schema_it != j.end() && schema_it->is_string() ? schema_it->get<std::string>() : "";
  if (schema.rfind("rankscope.report/", 0) != 0) return InvalidArgument("{} is not a rankscope report (schema '{}')", path, schema);
  return j;
}

std::string Dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// A snapshot's first document, in the overview's shape so that the page opens it like any job:
// its findings are the hang findings, `hang` the whole hang report.
nlohmann::json HangOverview(const nlohmann::json& hang) {
  nlohmann::json errors = nlohmann::json::array();
  for (const auto& p : hang.value("problems", nlohmann::json::array())) {
    errors.push_back({{"path", p.value("path", "")}, {"error", p.value("message", p.dump())}});
  }
  const size_t ranks = hang.value("ranks", nlohmann::json::array()).size();
  return {{"schema", hang.value("schema", "")},
          {"job", {{"files", ranks}, {"ranks_analysed", ranks}, {"world_size", hang.value("world_size", nlohmann::json())},
                   {"backend", ""}}},
          {"ranks", nlohmann::json::array()},
          {"cluster", nullptr},
          {"findings", hang.value("findings", nlohmann::json::array())},
          {"telemetry", nullptr},
          {"warnings", hang.value("warnings", nlohmann::json::array())},
          {"errors", errors},
          {"overview", true},
          {"hang", hang}};
}

}  // namespace

StatusOr<std::shared_ptr<const AnalyzedJob>> JobStore::Get(const std::string& id) {
  const std::optional<JobEntry> entry = catalog_->Find(id);
  if (!entry) return NotFound("no job {} (the list of jobs is at /api/jobs)", id);
  const std::string fp = Fingerprint(*entry);
  {
    std::lock_guard lock(mu_);
    if (auto it = cache_.find(id); it != cache_.end() && it->second.fingerprint == fp) {
      lru_.remove(id);
      lru_.push_front(id);
      if (it->second.job) return it->second.job;
      return it->second.error;
    }
  }
  std::lock_guard analysis(analysis_mu_);
  {
    std::lock_guard lock(mu_);  // another request may have analysed it meanwhile
    if (auto it = cache_.find(id); it != cache_.end() && it->second.fingerprint == fp) {
      if (it->second.job) return it->second.job;
      return it->second.error;
    }
  }
  auto job = Analyze(*entry);
  std::lock_guard lock(mu_);
  Cached& c = cache_[id];
  c.fingerprint = fp;
  c.job = job.ok() ? *job : nullptr;
  c.error = job.ok() ? Status() : job.status();
  lru_.remove(id);
  lru_.push_front(id);
  while (lru_.size() > max_cached_) {
    cache_.erase(lru_.back());
    lru_.pop_back();
  }
  return job;
}

StatusOr<std::shared_ptr<const AnalyzedJob>> JobStore::Analyze(const JobEntry& entry) {
  auto job = std::make_shared<AnalyzedJob>();
  job->entry = entry;
  const auto t0 = std::chrono::steady_clock::now();
  if (entry.kind == JobKind::kSnapshot) {
    RANKSCOPE_ASSIGN_OR_RETURN(hang::HangAnalysis analysis, hang::AnalyzeHang({entry.path}, hang::HangOptions{}));
    job->hang_json = HangReportJson(analysis);
  } else if (entry.kind == JobKind::kReport) {
    RANKSCOPE_ASSIGN_OR_RETURN(job->report_json, ReadReportJson(entry.path));
  } else if (entry.kind == JobKind::kComparison) {
    RANKSCOPE_ASSIGN_OR_RETURN(job->compare_json, ReadComparisonJson(entry.path, kMaxComparisonBytes));
  } else {
    if (entry.files.empty()) return NotFound("{}: no trace file yet", entry.name);
    AnalyzeOptions options;
    if (threads_ > 0) options.threads = threads_;
    RANKSCOPE_ASSIGN_OR_RETURN(job->report, AnalyzeJob(JobInputs{entry.files, "", ""}, options));
  }
  job->analysis_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return std::shared_ptr<const AnalyzedJob>(std::move(job));
}

StatusOr<std::string> JobStore::Document(const AnalyzedJob& job, const std::string& kind, std::optional<int64_t> arg) {
  if (kind == "report") {  // large at many ranks: written when asked, not kept
    if (job.hang_json) return Dump(*job.hang_json);
    if (job.report_json) return Dump(*job.report_json);
    if (job.compare_json) return Dump(*job.compare_json);
    std::ostringstream out;
    WriteAnalysisReportJson(*job.report, out);
    return std::move(out).str();
  }
  const std::string key = arg ? fmt::format("{}:{}", kind, *arg) : kind;
  std::lock_guard lock(job.mu);
  if (auto it = job.docs.find(key); it != job.docs.end()) return it->second;

  nlohmann::json doc;
  if (job.compare_json) {
    if (kind == "overview") doc = CompareOverviewJson(*job.compare_json);
    else if (kind == "compare") doc = *job.compare_json;
    else return FailedPrecondition("this job is a comparison JSON: the {} view needs traces", kind);
  } else if (kind == "compare") {
    if (job.entry.comparison.empty()) {
      return FailedPrecondition("this job has no comparison: `rankscope compare BASE NEW --json FILE` writes one to "
                                "serve, and the daemon compares an automatic capture with its job's baseline");
    }
    RANKSCOPE_ASSIGN_OR_RETURN(doc, ReadComparisonJson(job.entry.comparison, kMaxComparisonBytes));
  } else if (job.hang_json) {
    if (kind == "overview") doc = HangOverview(*job.hang_json);
    else if (kind == "hang") doc = *job.hang_json;
    else return FailedPrecondition("this job is a stack snapshot: the {} view needs traces", kind);
  } else if (job.report_json) {
    const nlohmann::json& r = *job.report_json;
    if (kind == "overview") {
      doc = ReportOverviewFromReport(r);
    } else if (kind == "rank") {
      const auto ranks = r.find("ranks");
      if (ranks != r.end() && ranks->is_array()) {
        for (const auto& rank : *ranks) {
          const auto number = rank.is_object() ? rank.find("rank") : rank.end();
          if (number != rank.end() && number->is_number_integer() && arg && number->get<int64_t>() == *arg) doc = rank;
        }
      }
      if (doc.is_null()) return NotFound("the report has no rank {}", arg.value_or(-1));
    } else {
      return FailedPrecondition("this job is a report JSON: the {} view needs the traces it was made from "
                                "(serve the trace or capture directory instead)", kind);
    }
  } else {
    const JobReport& rep = *job.report;
    const ClusterDiagnosis* cluster = rep.cluster ? &*rep.cluster : nullptr;
    std::vector<std::string> sidecars;
    for (const auto& n : rep.telemetry) sidecars.push_back(n.source);
    if (kind == "overview") {
      doc = ReportOverviewJson(ReportHeadJson(rep), rep.ranks, rep.options.flag_share);
      doc["analysis_s"] = job.analysis_s;
      if (!job.entry.comparison.empty()) doc["comparison"] = ComparisonMarkerJson("baseline", nullptr);
    } else if (kind == "rank") {
      for (const RankSummary& r : rep.ranks) {
        if (r.rank.rank == arg.value_or(INT64_MIN)) doc = RankSummaryToJson(r, rep.options.flag_share);
      }
      if (doc.is_null()) return NotFound("the job has no rank {}", arg.value_or(-1));
    } else if (kind == "telemetry") {
      doc = TelemetrySeriesJson(sidecars, rep.ranks);
    } else if (!cluster) {
      return FailedPrecondition("the {} view compares ranks: this job has {} rank(s)", kind, rep.ranks.size());
    } else if (kind == "timeline") {
      doc = TimelineJson(rep.ranks, *cluster, arg);
    } else if (kind == "matrix") {
      doc = CommMatrixJson(rep.ranks, *cluster);
    } else if (kind == "functions") {
      doc = FunctionSpreadJson(rep.ranks, *cluster);
    } else {
      return NotFound("no view {}", kind);
    }
  }
  std::string text = Dump(doc);
  if (job.docs.size() < kMaxDocsPerJob) job.docs[key] = text;
  return text;
}

}  // namespace rankscope::web
