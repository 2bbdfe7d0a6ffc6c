#include "base/error.h"

#include <cstring>

namespace stackie {

std::string format_location(const SourceLocation& where) {
  std::string out = where.file;
  if (where.line > 0) {
    out += ':' + std::to_string(where.line);
    if (where.column > 0) out += ':' + std::to_string(where.column);
  }
  return out;
}

Error error_at(const SourceLocation& where, std::string_view message) {
  return Error{0, format_location(where) + ": " + std::string(message)};
}

Error system_error(int errnum, std::string_view message) {
  return Error{-errnum, std::string(message) + ": " + std::strerror(errnum)};
}

}  // namespace stackie
