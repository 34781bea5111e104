#include "rankscope/analysis/comm_kernel_name.h"

#include <array>

namespace rankscope {
namespace {

constexpr std::array<std::string_view, 4> kPrefixes = {"ncclDevKernel_", "ncclKernel_", "rcclKernel_",
                                                       "ncclDevFunc_"};
constexpr std::array<std::string_view, 8> kAlgorithms = {
    "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS_TREE", "COLLNET", "NVLS", "RING", "TREE", "PAT"};
constexpr std::array<std::string_view, 3> kProtocols = {"LL128", "LL", "SIMPLE"};
constexpr std::array<std::string_view, 6> kReductions = {"Sum", "Prod", "Max", "Min", "PreMulSum",
                                                         "SumPostDiv"};
constexpr std::array<std::string_view, 27> kDtypes = {
    "int8_t", "uint8_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "half", "float", "double",
    "__nv_bfloat16", "hip_bfloat16", "rccl_bfloat16", "i8", "u8", "i32", "u32", "i64", "u64",
    "f16", "f32", "f64", "bf16", "f8e4m3", "f8e5m2", "fp8_e4m3", "fp8_e5m2", "__nv_fp8_e4m3"};

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

template <size_t N>
bool TakeOne(std::string_view rest, const std::array<std::string_view, N>& words, std::string* out,
             size_t* consumed) {
  for (std::string_view w : words) {
    if (StartsWith(rest, w) && (rest.size() == w.size() || rest[w.size()] == '_')) {
      *out = std::string(w);
      *consumed = w.size();
      return true;
    }
  }
  return false;
}

}  // namespace

bool IsBuiltinCommKernelName(std::string_view name) {
  return StartsWith(name, "nccl") || StartsWith(name, "rccl") || StartsWith(name, "hccl") ||
         name.find("ncclKernel") != std::string_view::npos ||
         name.find("ncclDevKernel") != std::string_view::npos;
}

bool DecodeCommKernelName(std::string_view name, CommKernelName* out) {
  *out = CommKernelName{};
  // "void ncclKernel_..." in some demangled forms; drop a return type and the parameter list.
  if (StartsWith(name, "void ")) name.remove_prefix(5);
  if (const size_t paren = name.find('('); paren != std::string_view::npos) name = name.substr(0, paren);
  if (const size_t angle = name.find('<'); angle != std::string_view::npos) name = name.substr(0, angle);
  std::string_view rest;
  for (std::string_view p : kPrefixes) {
    if (StartsWith(name, p)) {
      rest = name.substr(p.size());
      break;
    }
  }
  if (rest.empty()) return false;
  const size_t op_end = rest.find('_');
  out->op = std::string(rest.substr(0, op_end));
  rest = op_end == std::string_view::npos ? std::string_view() : rest.substr(op_end + 1);
  while (!rest.empty()) {
    size_t n = 0;
    if (!(out->algorithm.empty() && TakeOne(rest, kAlgorithms, &out->algorithm, &n)) &&
        !(out->protocol.empty() && TakeOne(rest, kProtocols, &out->protocol, &n)) &&
        !(out->reduction.empty() && TakeOne(rest, kReductions, &out->reduction, &n)) &&
        !(out->dtype.empty() && TakeOne(rest, kDtypes, &out->dtype, &n))) {
      n = rest.find('_');  // an unknown word: skip it
      if (n == std::string_view::npos) n = rest.size();
    }
    rest.remove_prefix(n);
    if (!rest.empty() && rest.front() == '_') rest.remove_prefix(1);
  }
  return true;
}

std::string CanonicalCollectiveName(std::string_view name) {
  std::string lower;
  for (char c : name) lower.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  std::string_view s = lower;
  while (!s.empty() && s.front() == '_') s.remove_prefix(1);
  for (std::string_view suffix : {"_base", "_coalesced", "_tensor_coalesced", "_into_tensor"}) {
    if (s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix) s.remove_suffix(suffix.size());
  }
  std::string squashed;
  for (char c : s) {
    if (c != '_') squashed.push_back(c);
  }
  static constexpr std::pair<std::string_view, std::string_view> kCanonical[] = {
      {"allreduce", "all_reduce"},         {"allgather", "all_gather"},
      {"reducescatter", "reduce_scatter"}, {"alltoall", "all_to_all"},
      {"alltoallv", "all_to_all"},         {"alltoallsingle", "all_to_all"},
      {"sendrecv", "send_recv"},           {"broadcast", "broadcast"},
      {"reduce", "reduce"},                {"barrier", "barrier"},
      {"gather", "gather"},                {"scatter", "scatter"},
      {"send", "send"},                    {"recv", "recv"},
  };
  for (const auto& [from, to] : kCanonical) {
    if (squashed == from) return std::string(to);
  }
  return std::string(s);
}

}  // namespace rankscope
