// The comparison key of a Python call path: the path with what differs between processes that
// run the same code masked, so that the same call path has one key on every rank.
//  - Object addresses in builtin frames ("<built-in method run_backward of
//    torch._C._EngineBase object at 0x7f09102c7100>"): "at 0x?".
//  - Generated code named by a hash: torch.compile's inductor writes each compiled graph to
//    "/tmp/torchinductor_<user>/q5/cq56oexqo2mqqkoo5572uw44nkopjuve4gardspcorutfw4ofj3z.py" and
//    calls its "call"; a rank whose graph differs (a recompilation, other shapes) runs a file of
//    another name, and compared by file its compiled code would be extra on it and missing on its
//    peers. A frame whose file's base name is a hash (32 or more lower-case letters and digits)
//    becomes "<generated code>: FUNCTION" (its line number dropped too: it differs with the file).
#pragma once

#include <string>
#include <string_view>

namespace rankscope {

// Calls fn(frame, more) for each frame of a call path ("a|b|c"), outermost first; `more` is false
// for the last.
template <typename Fn>
void ForEachFrame(std::string_view path, Fn fn) {
  for (size_t start = 0;;) {
    const size_t bar = path.find('|', start);
    fn(path.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start),
       bar != std::string_view::npos);
    if (bar == std::string_view::npos) return;
    start = bar + 1;
  }
}

// Whether PathKey would change `path` (most paths have neither an address nor generated code).
bool NeedsPathKey(std::string_view path);

// `path` with addresses and generated files masked, as above.
std::string PathKey(std::string_view path);

}  // namespace rankscope
