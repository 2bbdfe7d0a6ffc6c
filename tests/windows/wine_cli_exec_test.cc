// `stackie exec`'s Windows side (cli/exec_relay_windows.cc over cli/process_windows.cc), run for
// real under Wine:
//   wine_cli_exec_test.exe               the test: runs itself as CMD through run_relayed()
//   wine_cli_exec_test.exe child WORD... CMD: prints its words, its environment's STACKIE_*, its
//                                        directory and its stdin; writes to stderr; exits 7
// Checks: CMD's exit code comes back; its words arrive as given (spaces, quotes, trailing
// backslashes, an empty word, UTF-8); its environment is the one given and nothing of ours;
// stdin, stdout and stderr are relayed, each to its own; its directory is not ours; a missing
// program is an error naming it. Prints one "ok"/"FAIL" line per check; exit 1 if any failed.
#include <windows.h>
// After windows.h, which it needs.
#include <shellapi.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "base/command_line.h"
#include "base/windows_text.h"
#include "cli/exec_relay.h"
#include "cli/process_windows.h"

namespace {

int failures = 0;

void check(bool ok, const std::string& what, const std::string& detail = "") {
  std::fprintf(stderr, "%s %s%s\n", ok ? "ok  " : "FAIL", what.c_str(),
               ok || detail.empty() ? "" : ("\n     got: " + detail).c_str());
  if (!ok) ++failures;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

void write_all(HANDLE to, const std::string& text) {
  DWORD written = 0;
  WriteFile(to, text.data(), static_cast<DWORD>(text.size()), &written, nullptr);
}

int child() {
  int count = 0;
  wchar_t** words = CommandLineToArgvW(GetCommandLineW(), &count);
  std::string out;
  for (int i = 2; i < count; ++i) out += "[" + stackie::narrow(words[i]) + "]";
  out += "\n";
  for (const char* name : {"STACKIE_X", "STACKIE_PARENT_ONLY"}) {
    wchar_t value[256];
    DWORD n = GetEnvironmentVariableW(stackie::widen(name).c_str(), value, 256);
    out +=
        std::string(name) + "=" + (n ? stackie::narrow(std::wstring(value, n)) : "<unset>") + "\n";
  }
  wchar_t dir[MAX_PATH];
  DWORD n = GetCurrentDirectoryW(MAX_PATH, dir);
  out += "cwd=" + stackie::narrow(std::wstring(dir, n)) + "\n";
  std::string input;
  char buffer[4096];
  DWORD got = 0;
  while (ReadFile(GetStdHandle(STD_INPUT_HANDLE), buffer, sizeof buffer, &got, nullptr) && got)
    input.append(buffer, got);
  out += "stdin=" + input + "\n";
  write_all(GetStdHandle(STD_OUTPUT_HANDLE), out);
  write_all(GetStdHandle(STD_ERROR_HANDLE), "to-stderr\n");
  return 7;
}

// Our stdin, stdout and stderr swapped for pipes while `run` runs: `input` is what CMD reads
// through the relay, and what the relay wrote comes back.
struct Captured {
  std::string out, err;
};
template <typename Run>
Captured capture(const std::string& input, Run run) {
  HANDLE in_read, in_write, out_read, out_write, err_read, err_write;
  CreatePipe(&in_read, &in_write, nullptr, 0);
  CreatePipe(&out_read, &out_write, nullptr, 0);
  CreatePipe(&err_read, &err_write, nullptr, 0);
  HANDLE saved[3] = {GetStdHandle(STD_INPUT_HANDLE), GetStdHandle(STD_OUTPUT_HANDLE),
                     GetStdHandle(STD_ERROR_HANDLE)};
  SetStdHandle(STD_INPUT_HANDLE, in_read);
  SetStdHandle(STD_OUTPUT_HANDLE, out_write);
  SetStdHandle(STD_ERROR_HANDLE, err_write);
  write_all(in_write, input);
  CloseHandle(in_write);
  Captured captured;
  auto drain = [](HANDLE from, std::string* into) {
    char buffer[4096];
    DWORD got = 0;
    while (ReadFile(from, buffer, sizeof buffer, &got, nullptr) && got) into->append(buffer, got);
  };
  std::thread out_thread(drain, out_read, &captured.out);
  std::thread err_thread(drain, err_read, &captured.err);
  run();
  SetStdHandle(STD_INPUT_HANDLE, saved[0]);
  SetStdHandle(STD_OUTPUT_HANDLE, saved[1]);
  SetStdHandle(STD_ERROR_HANDLE, saved[2]);
  CloseHandle(out_write);
  CloseHandle(err_write);
  out_thread.join();
  err_thread.join();
  CloseHandle(out_read);
  CloseHandle(err_read);
  // in_read is left: the relay's stdin thread may still hold it in a read.
  return captured;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "child") return child();

  check(stackie::windows_command_line(
            {"C:/x/a.exe", "plain", "a b", "q\"uote", "back\\slash\\", "", "C:\\a dir\\"}) ==
            "C:/x/a.exe plain \"a b\" \"q\\\"uote\" back\\slash\\ \"\" \"C:\\a dir\\\\\"",
        "windows_command_line quotes as the C runtime splits");

  wchar_t self_w[MAX_PATH];
  GetModuleFileNameW(nullptr, self_w, MAX_PATH);
  std::string self = stackie::narrow(self_w);
  SetEnvironmentVariableW(L"STACKIE_PARENT_ONLY", L"ours");
  std::vector<std::string> words = {
      self, "child", "a b", "q\"uote", "back\\slash\\", "C:\\a dir\\", "", "\xC3\xBCn\xC3\xAF"};
  std::vector<std::string> env = {"STACKIE_X=block value",
                                  "SystemRoot=C:\\windows"};  // the C runtime wants it
  stackie::Result<int> status = 0;
  Captured got =
      capture("line one\nline two\n", [&] { status = stackie::cli::run_relayed(words, env); });
  check(status.ok() && *status == 7, "CMD's exit code is returned (7)",
        status.ok() ? std::to_string(*status) : status.error().message);
  check(contains(got.out, "[a b][q\"uote][back\\slash\\][C:\\a dir\\][][\xC3\xBCn\xC3\xAF]"),
        "CMD's words arrive as given", got.out);
  check(contains(got.out, "STACKIE_X=block value"), "CMD has the environment given", got.out);
  check(contains(got.out, "STACKIE_PARENT_ONLY=<unset>"), "and nothing of ours", got.out);
  check(contains(got.out, "stdin=line one\nline two\n"), "stdin is relayed to its end", got.out);
  check(contains(got.err, "to-stderr") && !contains(got.out, "to-stderr"),
        "stderr is relayed apart", got.err);
  wchar_t cwd_w[MAX_PATH];
  std::string cwd = stackie::narrow(std::wstring(cwd_w, GetCurrentDirectoryW(MAX_PATH, cwd_w)));
  check(contains(got.out, "cwd=") && !contains(got.out, "cwd=" + cwd + "\n"),
        "CMD does not start in our directory", got.out);

  auto missing = stackie::cli::run_relayed({"C:/no/such/program.exe", "x"}, env);
  check(!missing.ok() && contains(missing.error().message, "C:/no/such/program.exe"),
        "a missing program is an error naming it",
        missing.ok() ? std::to_string(*missing) : missing.error().message);
  return failures == 0 ? 0 : 1;
}
