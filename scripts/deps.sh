#!/bin/sh
# Install the Debian packages profile needs to build and test, if any are missing.
# Runs `apt-get update` once, only when something has to be installed.
set -e
pkgs="make gcc g++ clang llvm lld libclang-rt-14-dev nodejs libbpf-dev bpftool libelf-dev zlib1g-dev binutils-dev libunwind-dev \
libcunit1-dev pkg-config python3 libc6-dbg linux-perf procps util-linux man-db chromium golang-go openssl rustc musl-tools \
dwz libdebuginfod-dev debuginfod tmux openjdk-17-jdk-headless ffmpeg python3-numpy libopenblas0-pthread nasm \
ruby3.1 ruby3.1-dev"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing Debian packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
