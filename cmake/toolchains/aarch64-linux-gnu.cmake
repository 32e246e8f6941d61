# CMake toolchain file: cross-build Tessera for 64-bit ARM Linux (aarch64) on an x86-64
# Debian host with Debian's g++-aarch64-linux-gnu, and run what it builds (ctest, the
# GoogleTest discovery step) under QEMU user-mode emulation (qemu-user: qemu-aarch64).
# scripts/cross_build_arm64.sh uses it; by hand:
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake -DTESSERA_MINIMAL=ON
# Libraries come from the cross sysroot /usr/aarch64-linux-gnu (libc, libstdc++); the
# header-only dependencies (FlatBuffers, xxHash, CLI11) come from the host's /usr/include
# and GoogleTest is built from its sources (cmake/cross_deps.cmake).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(TESSERA_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${TESSERA_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${TESSERA_CROSS_TRIPLE}-g++)

# Search the cross sysroot for libraries, headers and CMake packages; the host for programs
# (flatc runs on the host).
set(CMAKE_FIND_ROOT_PATH /usr/${TESSERA_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest and gtest_discover_tests run aarch64 programs through this; -L points QEMU at the
# aarch64 dynamic loader and libraries.
find_program(TESSERA_QEMU_AARCH64 qemu-aarch64)
if(TESSERA_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${TESSERA_QEMU_AARCH64};-L;/usr/${TESSERA_CROSS_TRIPLE})
endif()
