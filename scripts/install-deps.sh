#!/usr/bin/env bash
# Installs the missing Debian packages of the named groups of scripts/packages.txt
# (default: every group), and nothing else. Usage: scripts/install-deps.sh [group ...]
# Uses sudo only when not root. Safe to run repeatedly: installs nothing when all are present.
set -euo pipefail
list="$(dirname "$0")/packages.txt"

groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=($(awk '!/^#/ && NF { print $1 }' "$list" | sort -u))

packages=()
for g in "${groups[@]}"; do
  found=($(awk -v g="$g" '!/^#/ && $1 == g { print $2 }' "$list"))
  if [ ${#found[@]} -eq 0 ]; then
    echo "install-deps: no package group '$g' in $list" >&2; exit 2
  fi
  packages+=("${found[@]}")
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: not root and no sudo: install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "relugrad: installing missing Debian packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# A package of another architecture (libhwy-dev:arm64) needs that architecture known to dpkg.
for p in "${missing[@]}"; do
  case "$p" in
    *:*) arch="${p##*:}"
         if [ "$arch" != "$(dpkg --print-architecture)" ] &&
            ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
           echo "relugrad: dpkg --add-architecture $arch" >&2
           $sudo dpkg --add-architecture "$arch"
         fi ;;
  esac
done
$sudo apt-get update -q >&2 || true
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
