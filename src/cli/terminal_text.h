// Text from blocks on the user's terminal: what a block writes to its log must not drive the
// terminal of whoever reads it (`stackie top`, the foreground `stackie up`), and screen rows
// need widths in columns, not bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace stackie::cli {

// Text safe to put on a terminal: C0 and C1 control characters (ESC among them), DEL, the
// bidirectional overrides and bytes that are not UTF-8 each become one '?'; a tab one space.
std::string terminal_safe(std::string_view text);
// The same for text of several lines: each line made safe, the newlines kept.
std::string terminal_safe_lines(std::string_view text);
// JSON text (to_json's output: valid UTF-8, C0 controls already escaped) safe on a terminal
// and still the same JSON: DEL, the C1 controls and the bidirectional overrides, which JSON
// may carry raw, written as \uXXXX escapes.
std::string terminal_safe_json(std::string_view json);
// Columns a UTF-8 string takes: 2 for East Asian wide characters, 0 for combining marks.
size_t display_width(std::string_view text);
// `text` cut or padded with spaces to exactly `width` columns (never a character cut in half).
std::string fit(std::string_view text, size_t width);

}  // namespace stackie::cli
