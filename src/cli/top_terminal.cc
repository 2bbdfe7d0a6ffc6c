#include "cli/top_terminal.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <iterator>

#include "base/posix_io.h"

namespace stackie::cli {

namespace {

// Alternate screen, cursor hidden, autowrap off (a full-width row must not scroll the screen).
constexpr std::string_view kEnter = "\033[?1049h\033[?25l\033[?7l\033[H\033[2J";
// Colours off, autowrap and cursor back, the normal screen with what it held before.
constexpr std::string_view kLeave = "\033[0m\033[?7h\033[?25h\033[?1049l";

}  // namespace

void write_terminal(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(STDOUT_FILENO, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the terminal is gone (SIGHUP follows): nothing left to draw on
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

Status RawTerminal::enter() {
  if (active_) return {};
  if (::tcgetattr(STDIN_FILENO, &saved_) != 0)
    return system_error(errno, "cannot read the terminal's settings");
  termios raw = saved_;
  raw.c_iflag &= ~static_cast<tcflag_t>(BRKINT | ICRNL | INPCK | ISTRIP | IXON);
  raw.c_lflag &= ~static_cast<tcflag_t>(ECHO | ICANON | IEXTEN | ISIG);
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  if (::tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) != 0)
    return system_error(errno, "cannot put the terminal in raw mode");
  active_ = true;
  write_terminal(kEnter);
  return {};
}

void RawTerminal::leave() {
  if (!active_) return;
  active_ = false;
  write_terminal(kLeave);
  ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_);
}

TopSize RawTerminal::size() {
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0 || ws.ws_row == 0)
    return TopSize{};
  return TopSize{ws.ws_col, ws.ws_row};
}

std::vector<KeyPress> decode_keys(std::string_view bytes) {
  std::vector<KeyPress> keys;
  for (size_t i = 0; i < bytes.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c == 0x1B) {
      if (i + 1 >= bytes.size()) {
        keys.push_back({Key::escape});
        continue;
      }
      char kind = bytes[i + 1];
      if (kind != '[' && kind != 'O') {  // ESC then a key: Escape, then that key
        keys.push_back({Key::escape});
        continue;
      }
      // CSI or SS3: parameters (digits, ';') then one final byte.
      size_t end = i + 2;
      while (end < bytes.size() && ((bytes[end] >= '0' && bytes[end] <= '9') || bytes[end] == ';'))
        ++end;
      if (end >= bytes.size()) break;  // cut short: drop it
      std::string_view params = bytes.substr(i + 2, end - (i + 2));
      switch (bytes[end]) {
        case 'A': keys.push_back({Key::up}); break;
        case 'B': keys.push_back({Key::down}); break;
        case 'H': keys.push_back({Key::home}); break;
        case 'F': keys.push_back({Key::end}); break;
        case '~':
          if (params == "5") keys.push_back({Key::page_up});
          if (params == "6") keys.push_back({Key::page_down});
          if (params == "1" || params == "7") keys.push_back({Key::home});
          if (params == "4" || params == "8") keys.push_back({Key::end});
          break;
        default: break;  // other keys (arrows left/right, F-keys): nothing to do
      }
      i = end;
      continue;
    }
    if (c == '\r' || c == '\n')
      keys.push_back({Key::enter});
    else if (c == 0x7F || c == 0x08)
      keys.push_back({Key::backspace});
    else if (c == 0x03)
      keys.push_back({Key::interrupt});
    else if (c >= 0x20)  // printable ASCII and UTF-8 bytes (a filter may hold them)
      keys.push_back({Key::character, static_cast<char>(c)});
  }
  return keys;
}

}  // namespace stackie::cli
