// The endpoint of rankscope's own Python collector: one JSON object per datagram, both ways.
//
//   collector -> daemon   {"op":"hello"|"beat", rank, local_rank, world_size, job, host,
//                          step, step_ms, busy, cmd}        (every ~2 s; the first registers)
//                         {"op":"report", id, state: started|done|failed, file, error,
//                          first_step, last_step}
//                         {"op":"auto", reason, steps}       (the auto-trigger fired)
//   daemon -> collector   {"op":"welcome", out_dir}          (reply to hello / unknown beat)
//                         {"op":"trace", id, dir, file, steps | duration_ms, start_step, ...}
//                         {"op":"snapshot", id, dir, file}
//                         {"op":"cancel", id}                (the daemon gave up on a capture)
//
// Who sent a message is what the kernel says (SCM_CREDENTIALS): its pid, uid and gid. Fields of
// the same name in the message ("pid", "uid") are ignored, so a process speaks only for itself.
// Every other field is checked (integers are integers in range, strings are bounded) before
// anything is registered. Requests are pushed to the collector's own bound address the moment
// they are made, so the collector learns of them without polling.
#pragma once

#include <memory>

#include "rankscope/daemon/capture_manager.h"
#include "rankscope/daemon/datagram_server.h"

namespace rankscope::daemon {

class CollectorEndpoint {
 public:
  static StatusOr<std::unique_ptr<CollectorEndpoint>> Start(const UnixAddress& address, const std::string& out_dir,
                                                            ProcessRegistry* registry);
  // The capture manager is created after the endpoint (it needs Send); attach it before traffic.
  void Attach(CaptureManager* captures) { captures_.store(captures); }
  Status Send(const UnixAddress& to, const nlohmann::json& msg);
  std::string address() const { return server_->address().ToString(); }
  uint64_t messages() const { return server_->received(); }
  uint64_t malformed() const { return server_->malformed(); }
  uint64_t refused() const { return server_->refused(); }

 private:
  CollectorEndpoint(std::string out_dir, ProcessRegistry* registry) : out_dir_(std::move(out_dir)), registry_(registry) {}
  void Handle(std::span<const uint8_t> bytes, const Datagram& meta);
  // One handler per message; each gets the parsed object and the kernel's word on the sender.
  void OnHeartbeat(const nlohmann::json& msg, const Datagram& meta);
  void OnReport(const nlohmann::json& msg, const Datagram& meta);
  void OnAuto(const nlohmann::json& msg, const Datagram& meta);

  std::string out_dir_;
  ProcessRegistry* registry_;
  std::atomic<CaptureManager*> captures_{nullptr};
  std::unique_ptr<DatagramServer> server_;
};

// A heartbeat's fields, checked, as the registry's record of the sender.
StatusOr<ProcessInfo> ProcessFromHeartbeat(const nlohmann::json& msg, const Datagram& meta);

}  // namespace rankscope::daemon
