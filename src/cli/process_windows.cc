#include "cli/process_windows.h"

#include <memory>

#include "base/command_line.h"
#include "base/windows_text.h"

namespace stackie::cli {

namespace {

struct HandleCloser {
  void operator()(HANDLE h) const {
    if (h != nullptr && h != INVALID_HANDLE_VALUE) CloseHandle(h);
  }
};
using OwnedHandle = std::unique_ptr<void, HandleCloser>;

struct AttributeList {
  std::vector<char> storage;
  LPPROC_THREAD_ATTRIBUTE_LIST get() {
    return reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(storage.data());
  }
  ~AttributeList() {
    if (!storage.empty()) DeleteProcThreadAttributeList(get());
  }
};

std::wstring environment_block(const std::vector<std::string>& env) {
  std::wstring block;
  for (const auto& entry : env) {
    block += widen(entry);
    block += L'\0';
  }
  if (block.empty()) block += L'\0';
  block += L'\0';
  return block;
}

}  // namespace

Result<HANDLE> start_process(const ChildSpec& spec) {
  if (spec.argv.empty()) return Error{0, "no program to start"};
  const DWORD kStd[3] = {STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE};
  // Inheritable copies of the three handles, so that inheriting them changes nothing of ours.
  // A missing one (no console, a closed handle) is left out: the child gets none there.
  OwnedHandle copies[3];
  std::vector<HANDLE> inherited;
  STARTUPINFOEXW info{};
  info.StartupInfo.cb = sizeof info;
  info.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  HANDLE* slots[3] = {&info.StartupInfo.hStdInput, &info.StartupInfo.hStdOutput,
                      &info.StartupInfo.hStdError};
  for (int i = 0; i < 3; ++i) {
    HANDLE source = spec.stdio[i] != nullptr ? spec.stdio[i] : GetStdHandle(kStd[i]);
    HANDLE copy = nullptr;
    if (source == nullptr || source == INVALID_HANDLE_VALUE ||
        !DuplicateHandle(GetCurrentProcess(), source, GetCurrentProcess(), &copy, 0, TRUE,
                         DUPLICATE_SAME_ACCESS))
      continue;
    copies[i].reset(copy);
    *slots[i] = copy;
    inherited.push_back(copy);
  }
  AttributeList attributes;
  if (!inherited.empty()) {
    SIZE_T size = 0;
    InitializeProcThreadAttributeList(nullptr, 1, 0, &size);
    attributes.storage.resize(size);
    if (!InitializeProcThreadAttributeList(attributes.get(), 1, 0, &size)) {
      attributes.storage.clear();
      return windows_error("InitializeProcThreadAttributeList");
    }
    if (!UpdateProcThreadAttribute(attributes.get(), 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
                                   inherited.data(), inherited.size() * sizeof(HANDLE), nullptr,
                                   nullptr))
      return windows_error("UpdateProcThreadAttribute");
    info.lpAttributeList = attributes.get();
  }
  std::wstring command = widen(windows_command_line(spec.argv));
  std::wstring env_block = spec.env != nullptr ? environment_block(*spec.env) : std::wstring();
  std::wstring cwd = widen(spec.cwd);
  PROCESS_INFORMATION process{};
  DWORD flags = CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT;
  if (!CreateProcessW(nullptr, command.data(), nullptr, nullptr, !inherited.empty(), flags,
                      spec.env != nullptr ? env_block.data() : nullptr,
                      cwd.empty() ? nullptr : cwd.c_str(), &info.StartupInfo, &process))
    return windows_error("cannot start " + spec.argv[0]);
  CloseHandle(process.hThread);
  return process.hProcess;
}

int wait_for_exit(HANDLE process) {
  WaitForSingleObject(process, INFINITE);
  DWORD code = 1;
  GetExitCodeProcess(process, &code);
  return static_cast<int>(code);
}

}  // namespace stackie::cli
