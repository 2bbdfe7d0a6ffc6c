// `stackie-service-units`: prints one service file from src/service_units.h. Not installed: the
// build runs it to generate the copies shipped under share/ (with the install prefix), and the
// tests run it to check the generators' output with systemd-analyze and an XML parser.
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "cli/service_units.h"

namespace {

constexpr char kUsage[] =
    "Usage: stackie-service-units systemd-service|systemd-socket|launchd-plist\n"
    "           --program STACKIED [--home DIR] [--socket PATH] [--runtime-dir DIR] [--log FILE]\n"
    "           [--socket-activation]   (launchd-plist: a Sockets entry on --socket)\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::string_view kind = argv[1];
  stackie::ServiceSpec spec;
  bool socket_activation = false;
  for (int i = 2; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (flag == "--socket-activation") {
      socket_activation = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "stackie-service-units: %s needs a value\n%s", argv[i], kUsage);
      return 2;
    }
    std::string value = argv[++i];
    if (flag == "--program")
      spec.daemon_program = value;
    else if (flag == "--home")
      spec.stackie_home = value;
    else if (flag == "--socket")
      spec.socket_path = value;
    else if (flag == "--runtime-dir")
      spec.runtime_dir = value;
    else if (flag == "--log")
      spec.log_path = value;
    else {
      std::fprintf(stderr, "stackie-service-units: unknown option '%s'\n%s", argv[i - 1], kUsage);
      return 2;
    }
  }
  if (spec.daemon_program.empty() || spec.daemon_program[0] != '/') {
    std::fprintf(stderr, "stackie-service-units: --program must be an absolute path\n");
    return 2;
  }
  std::string text;
  if (kind == "systemd-service")
    text = stackie::systemd_service_unit(spec);
  else if (kind == "systemd-socket")
    text = stackie::systemd_socket_unit(spec);
  else if (kind == "launchd-plist")
    text = stackie::launchd_plist(spec, socket_activation);
  else {
    std::fprintf(stderr, "stackie-service-units: unknown kind '%s'\n%s", argv[1], kUsage);
    return 2;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}
