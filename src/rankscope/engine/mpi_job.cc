#include "rankscope/engine/mpi_job.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <queue>

#include "rankscope/engine/job_files.h"
#include "rankscope/summary/summary_codec.h"

#ifdef RANKSCOPE_HAVE_MPI
#include <mpi.h>
#endif

namespace rankscope {

std::vector<int> BalanceBySize(const std::vector<uint64_t>& sizes, int processes) {
  std::vector<size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  using Load = std::pair<uint64_t, int>;  // bytes so far, process: the least loaded, then the lowest
  std::priority_queue<Load, std::vector<Load>, std::greater<>> loads;
  for (int p = 0; p < processes; ++p) loads.push({0, p});
  std::vector<int> owner(sizes.size(), 0);
  for (size_t i : order) {
    auto [bytes, p] = loads.top();
    loads.pop();
    owner[i] = p;
    loads.push({bytes + sizes[i], p});
  }
  return owner;
}

#ifndef RANKSCOPE_HAVE_MPI

bool MpiAvailable() { return false; }
MpiSession::MpiSession() = default;
MpiSession::~MpiSession() = default;
StatusOr<std::optional<JobReport>> AnalyzeJobMpi(const MpiSession&, const JobInputs&, const AnalyzeOptions&,
                                                 Progress*) {
  return FailedPrecondition("--mpi: this rankscope was built without MPI (install libopenmpi-dev and rebuild)");
}

#else

namespace {

// One mapped file on the wire: index, error code and message, warning, path, encoded summary.
void PutU64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
void PutString(std::string& out, std::string_view s) {
  PutU64(out, s.size());
  out += s;
}

void AppendMapped(std::string& out, size_t index, const MappedFile& m) {
  PutU64(out, index);
  PutU64(out, static_cast<uint64_t>(m.error.code()));
  PutString(out, m.error.message());
  PutString(out, m.warning);
  summary::SummaryFile file;
  if (m.summary) {
    file.summary = *m.summary;
    PutString(out, m.summary->path);
    PutString(out, summary::EncodeSummary(file));
  } else {
    PutString(out, "");
    PutString(out, "");
  }
}

class WireReader {
 public:
  explicit WireReader(std::string_view in) : in_(in) {}
  bool done() const { return pos_ == in_.size(); }
  StatusOr<uint64_t> U64() {
    if (in_.size() - pos_ < 8) return MakeError(StatusCode::kInternal, "MPI message cut short");
    uint64_t v;
    std::memcpy(&v, in_.data() + pos_, 8);
    pos_ += 8;
    return v;
  }
  StatusOr<std::string_view> String() {
    RANKSCOPE_ASSIGN_OR_RETURN(uint64_t n, U64());
    if (in_.size() - pos_ < n) return MakeError(StatusCode::kInternal, "MPI message cut short");
    std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

Status ReadMapped(std::string_view message, std::vector<MappedFile>* mapped) {
  WireReader r(message);
  while (!r.done()) {
    RANKSCOPE_ASSIGN_OR_RETURN(uint64_t index, r.U64());
    RANKSCOPE_ASSIGN_OR_RETURN(uint64_t code, r.U64());
    RANKSCOPE_ASSIGN_OR_RETURN(std::string_view error, r.String());
    RANKSCOPE_ASSIGN_OR_RETURN(std::string_view warning, r.String());
    RANKSCOPE_ASSIGN_OR_RETURN(std::string_view path, r.String());
    RANKSCOPE_ASSIGN_OR_RETURN(std::string_view encoded, r.String());
    if (index >= mapped->size()) return MakeError(StatusCode::kInternal, "MPI message names file {} of {}", index, mapped->size());
    MappedFile& m = (*mapped)[index];
    m.warning = std::string(warning);
    if (code != 0) {
      m.error = Status(static_cast<StatusCode>(code), std::string(error));
    } else {
      auto file = summary::DecodeSummary(encoded);
      if (!file.ok()) return MakeError(StatusCode::kInternal, "summary of {} from another process: {}", path, file.status().message());
      m.summary = std::move(file->summary);
      m.summary->path = std::string(path);
    }
  }
  return OkStatus();
}

// Sizes first, then the bytes in pieces MPI's int counts can hold.
constexpr uint64_t kPiece = 1ull << 30;

void SendBytes(const std::string& bytes) {
  uint64_t n = bytes.size();
  MPI_Send(&n, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD);
  for (uint64_t at = 0; at < n; at += kPiece) {
    MPI_Send(bytes.data() + at, static_cast<int>(std::min(kPiece, n - at)), MPI_BYTE, 0, 1, MPI_COMM_WORLD);
  }
}

std::string ReceiveBytes(int source) {
  uint64_t n = 0;
  MPI_Recv(&n, 1, MPI_UINT64_T, source, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  std::string bytes(n, '\0');
  for (uint64_t at = 0; at < n; at += kPiece) {
    MPI_Recv(bytes.data() + at, static_cast<int>(std::min(kPiece, n - at)), MPI_BYTE, source, 1, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
  }
  return bytes;
}

std::vector<uint64_t> FileSizes(const std::vector<std::string>& files) {
  std::vector<uint64_t> sizes;
  for (const std::string& f : files) {
    std::error_code ec;
    const auto n = std::filesystem::file_size(f, ec);
    sizes.push_back(ec ? 0 : n);
  }
  return sizes;
}

}  // namespace

bool MpiAvailable() { return true; }

MpiSession::MpiSession() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

StatusOr<std::optional<JobReport>> AnalyzeJobMpi(const MpiSession& mpi, const JobInputs& inputs,
                                                 const AnalyzeOptions& options, Progress* progress) {
  RANKSCOPE_ASSIGN_OR_RETURN(std::vector<std::string> files, DiscoverJobFiles(inputs.paths));
  RANKSCOPE_RETURN_IF_ERROR(CommPatterns::Compile(options.comm_patterns).status());
  if (!inputs.hosts_file.empty()) RANKSCOPE_RETURN_IF_ERROR(ReadHostMap(inputs.hosts_file).status());
  const std::vector<int> owner = BalanceBySize(FileSizes(files), mpi.size());
  std::vector<size_t> mine;
  for (size_t i = 0; i < files.size(); ++i) {
    if (owner[i] == mpi.rank()) mine.push_back(i);
  }
  std::vector<std::string> my_files;
  for (size_t i : mine) my_files.push_back(files[i]);
  RANKSCOPE_ASSIGN_OR_RETURN(std::vector<MappedFile> my_mapped,
                             MapJobFiles(my_files, options, mpi.rank() == 0 ? progress : nullptr));
  if (mpi.rank() != 0) {
    std::string message;
    for (size_t k = 0; k < mine.size(); ++k) AppendMapped(message, mine[k], my_mapped[k]);
    SendBytes(message);
    return std::optional<JobReport>();
  }
  std::vector<MappedFile> mapped(files.size());
  for (size_t k = 0; k < mine.size(); ++k) mapped[mine[k]] = std::move(my_mapped[k]);
  for (int source = 1; source < mpi.size(); ++source) {
    RANKSCOPE_RETURN_IF_ERROR(ReadMapped(ReceiveBytes(source), &mapped));
  }
  RANKSCOPE_ASSIGN_OR_RETURN(JobReport report, ReduceJob(inputs, options, files, std::move(mapped)));
  return std::optional<JobReport>(std::move(report));
}

#endif

}  // namespace rankscope
