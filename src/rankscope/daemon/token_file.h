// The HTTP API's token, read from a file. The file is the secret: it must be a regular file (not
// a symlink) of the daemon's own user that nobody else can read or write (chmod 600), and the
// token on its first line at least 16 printable characters without spaces. Anything else is
// refused with the reason, so that a misconfigured token fails at startup, not in use.
#pragma once

#include <string>
#include <string_view>

#include "rankscope/base/status.h"

namespace rankscope::daemon {

inline constexpr size_t kMinTokenLength = 16;

StatusOr<std::string> ReadTokenFile(const std::string& path);
// The checks on the token itself (the file's first line, without its line ending).
Status CheckToken(std::string_view token);

}  // namespace rankscope::daemon
