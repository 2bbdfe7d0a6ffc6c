#include "base/windows_text.h"

#include <windows.h>

namespace stackie {

std::wstring widen(std::string_view text) {
  if (text.empty()) return {};
  int size =
      MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), nullptr, 0);
  std::wstring out(static_cast<size_t>(size > 0 ? size : 0), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), out.data(), size);
  return out;
}

std::string narrow(std::wstring_view text) {
  if (text.empty()) return {};
  int size = WideCharToMultiByte(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), nullptr, 0,
                                 nullptr, nullptr);
  std::string out(static_cast<size_t>(size > 0 ? size : 0), '\0');
  WideCharToMultiByte(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), out.data(), size,
                      nullptr, nullptr);
  return out;
}

std::string narrow_path(std::wstring_view path) {
  std::string out = narrow(path);
  for (char& c : out)
    if (c == '\\') c = '/';
  return out;
}

std::string path_from_final_name(std::wstring_view name) {
  constexpr std::wstring_view kLocal = L"\\\\?\\", kShare = L"\\\\?\\UNC\\";
  if (name.substr(0, kShare.size()) == kShare) {
    name.remove_prefix(kShare.size());
    return "//" + narrow_path(name);
  }
  if (name.substr(0, kLocal.size()) == kLocal) name.remove_prefix(kLocal.size());
  return narrow_path(name);
}

Error windows_error(std::string_view what) {
  return windows_error(what, GetLastError());
}

Error windows_error(std::string_view what, unsigned long code) {
  char* text = nullptr;
  FormatMessageA(
      FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
      nullptr, code, 0, reinterpret_cast<char*>(&text), 0, nullptr);
  std::string message =
      std::string(what) + ": " + (text ? text : "error") + " (" + std::to_string(code) + ")";
  if (text) LocalFree(text);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r' ||
                              message.back() == ' ' || message.back() == '.'))
    message.pop_back();
  return Error{-static_cast<int>(code), message};
}

}  // namespace stackie
