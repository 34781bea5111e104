#include "rankscope/daemon/token_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "rankscope/daemon/unique_fd.h"

namespace rankscope::daemon {
namespace {

constexpr size_t kMaxTokenFile = 4096;

}  // namespace

Status CheckToken(std::string_view token) {
  if (token.size() < kMinTokenLength) return InvalidArgument("the token is shorter than {} characters", kMinTokenLength);
  for (unsigned char c : token) {
    if (c <= 0x20 || c >= 0x7f) return InvalidArgument("the token contains spaces, tabs or control characters");
  }
  return OkStatus();
}

StatusOr<std::string> ReadTokenFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ELOOP) return FailedPrecondition("the token file {} is a symlink: give the file itself", path);
    return NotFound("cannot read the token file {}: {}", path, std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return FailedPrecondition("the token file {} is not a regular file", path);
  if (st.st_uid != ::geteuid()) {
    return FailedPrecondition("the token file {} belongs to uid {}, not to the daemon's uid {}", path, st.st_uid, ::geteuid());
  }
  if (st.st_mode & 077) {
    return FailedPrecondition("the token file {} can be read or written by other users (mode {:o}): chmod 600 it", path,
                              st.st_mode & 0777);
  }
  std::string text(kMaxTokenFile, '\0');
  const ssize_t n = ::read(fd.get(), text.data(), text.size());
  if (n < 0) return IoError("cannot read the token file {}: {}", path, std::strerror(errno));
  text.resize(static_cast<size_t>(n));
  std::string token = text.substr(0, text.find('\n'));
  if (!token.empty() && token.back() == '\r') token.pop_back();
  RANKSCOPE_RETURN_IF_ERROR(CheckToken(token).WithContext(path));
  return token;
}

}  // namespace rankscope::daemon
