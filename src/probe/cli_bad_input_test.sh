#!/bin/sh
# Bad input to `pagereel probe` gets a message that names what was wrong and a non-zero
# exit, before any measuring starts.   Usage: cli_bad_input_test.sh PAGEREEL
pagereel=$1
failures=0
tmp=$(mktemp)
expect() {  # expect EXIT_CODE TEXT ARGS...
  want_rc=$1 text=$2
  shift 2
  "$pagereel" "$@" >/dev/null 2>"$tmp"
  rc=$?
  if [ "$rc" -ne "$want_rc" ] || ! grep -q -- "$text" "$tmp"; then
    echo "FAIL: pagereel $*: exit $rc (want $want_rc), stderr: $(cat "$tmp")"
    failures=$((failures + 1))
  fi
}
expect 2 "not expected: --bogus" probe --bogus
expect 2 "--rate '0': must be a positive" probe --rate 0
expect 2 "--rate '-5': must be a positive" probe --rate -5
expect 2 "--period '0ms': must be greater than zero" probe --period 0ms
expect 2 "--period '-20ms': must be greater than zero" probe --period -20ms
expect 2 "--fps: bad frame rate '0'" probe --fps 0
expect 2 "--duration '0': must be greater than zero" probe --duration 0
expect 2 "--pid 2147483646: no such process" probe --pid 2147483646
expect 2 "--pid 'x1': not a process id" probe --pid x1
expect 2 "--report /nonexistent-dir/r.html: cannot write" probe --report /nonexistent-dir/r.html
expect 2 "--fps and --period both" probe --fps 60 --period 20ms
expect 2 "--fps: bad frame rate '-60'" probe clock --fps -60
expect 2 "--threshold '0us': must be greater than zero" probe clock --threshold 0us
expect 2 "--fifo 100: SCHED_FIFO priorities run from 1 to 99" probe clock --fifo 100
expect 2 "not expected: --bogus" probe clock --bogus
rm -f "$tmp"
[ "$failures" -eq 0 ] && echo "all bad input rejected"
exit "$failures"
