#include "rankscope/report/ui_page.h"

#ifdef RANKSCOPE_HAS_UI_PAGE
// Defined by ui_page_blob.S (.incbin of the built page).
extern "C" const char rankscope_ui_page_begin[];
extern "C" const char rankscope_ui_page_end[];
#endif

namespace rankscope {

std::string_view UiPage() {
#ifdef RANKSCOPE_HAS_UI_PAGE
  return {rankscope_ui_page_begin, static_cast<size_t>(rankscope_ui_page_end - rankscope_ui_page_begin)};
#else
  return {};
#endif
}

}  // namespace rankscope
