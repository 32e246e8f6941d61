# Sourced by scripts/install_deps.sh and scripts/cross_build_arm64.sh (not run on its own).
# apt_ensure TAG PKG...: installs the Debian packages among PKG that dpkg does not list as
# installed, with sudo when not root; `apt-get update` runs only when something is missing.
# Prints "[TAG] ..." lines; returns non-zero (with a message on stderr) when packages are
# missing and cannot be installed (not root and no sudo, or apt-get failed).
apt_ensure() {
  local tag="$1" pkg
  shift
  local missing=()
  for pkg in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$pkg")
    fi
  done
  if ((${#missing[@]} == 0)); then
    echo "[$tag] Debian packages: all $# present"
    return 0
  fi
  local sudo=()
  if [[ "$(id -u)" != 0 ]]; then
    if ! command -v sudo >/dev/null; then
      echo "[$tag] error: missing packages (${missing[*]}), not root and no sudo" >&2
      return 1
    fi
    sudo=(sudo)
  fi
  echo "[$tag] apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  { "${sudo[@]}" apt-get update -qq >/dev/null &&
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } || {
    echo "[$tag] error: could not install ${missing[*]}" >&2
    return 1
  }
}
