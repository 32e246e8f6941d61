#!/usr/bin/env bash
# A rank that hangs or dies must make the job end with a non-zero exit within the timeout,
# the error naming the rank (tests/mpi/comm_failure.cc).
#   failure_test.sh MPIRUN COMM_FAILURE_BIN hang|die NP TIMEOUT_S
set -uo pipefail
MPIRUN="$1" BIN="$2" MODE="$3" NP="$4" TIMEOUT="$5"
# The bound: the communicator's timeout, its 3 s of pings, and start-up and teardown slack on
# a loaded 2-core machine.
BOUND=$((TIMEOUT + 3 + 25))
start_ms=$(( $(date +%s%N) / 1000000 ))
out="$(timeout --kill-after=5 $((BOUND + 30)) "$MPIRUN" --allow-run-as-root --oversubscribe -np "$NP" "$BIN" "$MODE" "$TIMEOUT" 2>&1)"
rc=$?
elapsed_ms=$(( $(date +%s%N) / 1000000 - start_ms ))
elapsed="$((elapsed_ms / 1000)).$(printf %03d $((elapsed_ms % 1000)))"
echo "$out" | tail -n 25
echo "[failure_test] mode $MODE, $NP ranks, timeout ${TIMEOUT} s: exit $rc after ${elapsed} s (bound ${BOUND} s)"
fail=0
if [[ $rc -eq 0 ]]; then echo "[failure_test] FAIL: the job ended with exit 0"; fail=1; fi
if [[ $rc -eq 124 || $rc -eq 137 ]]; then echo "[failure_test] FAIL: the job hung (killed by timeout)"; fail=1; fi
if (( elapsed_ms > BOUND * 1000 )); then echo "[failure_test] FAIL: took longer than ${BOUND} s"; fail=1; fi
if [[ "$MODE" == hang ]]; then
  # Our communicator's message: the surviving ranks name rank 1.
  if ! grep -q "UNAVAILABLE: all_reduce on rank [0-9]*: no progress within ${TIMEOUT%.*} s; rank(s) 1 " <<<"$out"; then
    echo "[failure_test] FAIL: no error naming rank 1"; fail=1
  fi
else
  # A dead process: mpirun ends the job and names it, or our timeout does.
  if ! grep -qE "rank\(s\) 1 |rank 1 .*exit|Process name: \[\[[0-9]+,[0-9]+\],1\]|process rank 1" <<<"$out"; then
    echo "[failure_test] FAIL: no message naming rank 1"; fail=1
  fi
fi
[[ $fail -eq 0 ]] && echo "[failure_test] ok"
exit $fail
