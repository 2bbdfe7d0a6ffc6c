// "SIGTERM" for SIGTERM: glibc has sigabbrev_np, the BSDs and macOS sys_signame, Windows a
// table of its few (one file each: signal_name_linux.cc, signal_name_bsd.cc,
// signal_name_windows.cc). An unknown number comes back as its digits.
#pragma once

#include <string>

namespace stackie {

std::string signal_name(int signum);

}  // namespace stackie
