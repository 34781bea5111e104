// Talking to many rankscoped daemons at once: host lists, parallel HTTP calls, per-host results.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rankscope/base/status.h"

namespace CLI { class App; }

namespace rankscope::cli {

struct DaemonHost {
  std::string host;
  int port = 8383;
  std::string Label() const;
};

struct HostOptions {
  std::vector<std::string> hosts;  // host or host:port
  std::string hostfile;            // one host[:port] per line, '#' comments
  int port = 8383;
  std::string token_file;          // else $RANKSCOPE_TOKEN
  int timeout_s = 10;
  void AddTo(CLI::App* cmd);
};

struct HostReply {
  DaemonHost host;
  Status status;        // transport or HTTP error, with the daemon's message
  nlohmann::json body;  // the JSON reply when ok
};

class DaemonClient {
 public:
  static StatusOr<DaemonClient> FromOptions(const HostOptions& opt);
  const std::vector<DaemonHost>& hosts() const { return hosts_; }
  const std::string& token() const { return token_; }
  int timeout_s() const { return timeout_s_; }

  // One call per host, in parallel; replies in host order. body null = GET.
  std::vector<HostReply> Call(const std::string& path, const nlohmann::json& body = nullptr) const;
  // Different calls per host: path(host index), body(host index) (null function or null JSON = GET).
  std::vector<HostReply> CallEach(const std::function<std::string(size_t)>& path,
                                  const std::function<nlohmann::json(size_t)>& body = nullptr) const;

 private:
  HostReply One(const DaemonHost& h, const std::string& path, const nlohmann::json& body) const;
  std::vector<DaemonHost> hosts_;
  std::string token_;
  int timeout_s_ = 10;
};

StatusOr<DaemonHost> ParseHost(const std::string& text, int default_port);

}  // namespace rankscope::cli
