# Cross-compiles relugrad for aarch64 with Debian's cross toolchain (g++-aarch64-linux-gnu)
# against the multiarch arm64 packages (libhwy-dev:arm64, libgtest-dev:arm64), and runs what it
# builds (test discovery, ctest) under qemu-user (qemu-user-static). mk/arm.mk uses it through
# the "arm64" preset; the CPU model qemu emulates comes from QEMU_CPU in the environment.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Headers and libraries of the arm64 packages live in the host's multiarch directories
# (/usr/include, /usr/lib/aarch64-linux-gnu); the host's x86_64 libraries must never be found.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# The programs run with the arm64 loader and libraries multiarch installs (libc6:arm64 in /lib,
# libhwy1:arm64 and libstdc++6:arm64 in /usr/lib/aarch64-linux-gnu).
find_program(RELUGRAD_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${RELUGRAD_QEMU_AARCH64})
