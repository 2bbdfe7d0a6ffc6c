// Windows has no signals to catch, only console control events, delivered on a thread of
// their own: the handler queues a number and returns TRUE (handled), so the console does not
// end the process and the verb gets to stop its stack. The queue is read by polling drain().
#include <windows.h>

#include <csignal>
#include <mutex>

#include "cli/signal_pipe.h"

namespace stackie::cli {

namespace {

std::mutex g_mutex;
std::vector<int> g_pending;

BOOL WINAPI on_control(DWORD event) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_pending.push_back(event == CTRL_C_EVENT ? SIGINT : SIGTERM);
  return TRUE;
}

}  // namespace

SignalPipe::SignalPipe() {
  SetConsoleCtrlHandler(on_control, TRUE);
}

SignalPipe::~SignalPipe() {
  SetConsoleCtrlHandler(on_control, FALSE);
}

std::vector<int> SignalPipe::drain() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<int> signals;
  signals.swap(g_pending);
  return signals;
}

bool is_stopping_signal(int) {
  return true;
}

}  // namespace stackie::cli
