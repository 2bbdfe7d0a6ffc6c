/* <paths.h> for the zig macOS cross builds (scripts/cross macos-*): zig 0.11.0's bundled macOS
   headers lack it, and libuv's src/unix/process.c includes it for _PATH_DEFPATH. Same value as
   macOS's own header. A Mac's SDK has the real one, and meson.build then leaves this out. */
#pragma once
#define _PATH_DEFPATH "/usr/bin:/bin"
