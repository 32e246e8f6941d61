#!/bin/sh
# with_venv_python.sh PYTHON SCRIPT [ARGS...]: runs SCRIPT with PYTHON (the venv of
# scripts/install_deps.sh); when that Python is not there, skips: prints why and exits 77,
# ctest's SKIP_RETURN_CODE for the e2e tests.
py="$1"
shift
if [ ! -x "$py" ]; then
  echo "SKIP: no Python at $py; run scripts/install_deps.sh"
  exit 77
fi
exec "$py" "$@"
