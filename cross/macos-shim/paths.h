/* <paths.h> for the zig macOS cross builds (cross/zig-*-macos.txt): zig 0.11.0's bundled macOS
   headers lack it, and libuv's src/unix/process.c needs _PATH_DEFPATH from it. Same value as
   macOS's own header. A real Mac build uses the SDK's and never sees this directory. */
#pragma once
#define _PATH_DEFPATH "/usr/bin:/bin"
