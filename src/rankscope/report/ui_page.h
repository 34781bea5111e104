// The web UI page, built from web/ (TypeScript, Vite) into one self-contained HTML file and
// embedded in the binary, so that `rankscope serve` and `analyze --html` need no files beside
// the program and no network.
#pragma once

#include <string_view>

namespace rankscope {

// The page, or "" when rankscope was built without the UI (no npm at build time).
std::string_view UiPage();

// Where a page carries its data inline (an HTML report): the page reads the element
// <script id="rankscope-data" type="application/json"> that replaces this comment.
inline constexpr std::string_view kUiDataMarker = "<!--rankscope-data-->";

}  // namespace rankscope
