#!/usr/bin/env bash
# End-to-end test of deploy/slurm on a one-node Slurm that this script starts on localhost
# from Debian's packages (munge, slurmctld, slurmd; every file in a temp folder, this host at
# 127.0.0.1, free ports), and stops again on every exit path.
#
# usage: deploy/slurm/test_slurm.sh PAGEREEL_BINARY
#   Submits a 3-shard render of examples/lower-third through deploy/slurm/submit.sh, waits
#   for the array and the concat job, renders the same film in one piece with
#   `pagereel render`, and checks that both films decode to the same frames (framemd5) and
#   the same frame count.
#
# Environment:
#   PAGEREEL_SLURM_DUMMY=1     run the Slurm plumbing with a stand-in for pagereel (a shell
#                              script that records its arguments) instead of the binary, and
#                              also fail one shard on purpose and rerun it with the commands
#                              submit.sh prints. PAGEREEL_BINARY is then not needed.
#   PAGEREEL_SLURM_TIMEOUT     seconds to wait for the jobs (default 600)
#   PAGEREEL_SLURM_REQUIRED=1  a cluster that cannot be started fails the test instead of
#                              skipping it
#   PAGEREEL_SLURM_KEEP=1      keep the temp folder (logs, films) for a look afterwards
#
# Exit status: 0 passed, 1 failed, 2 bad usage, 77 skipped (Slurm or munge not installed,
# or not allowed to start them here).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
dummy=${PAGEREEL_SLURM_DUMMY:-0}
wait_s=${PAGEREEL_SLURM_TIMEOUT:-600}

say() { echo "test_slurm: $*"; }
skip() { say "SKIP: $*"; exit 77; }
fail() { say "FAIL: $*" >&2; show_logs; exit 1; }

for cmd in munged munge slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
  command -v "$cmd" >/dev/null ||
    skip "'$cmd' is not installed; Debian's packages bring it: apt-get install slurm-wlm munge"
done
for cmd in python3 ffmpeg; do
  command -v "$cmd" >/dev/null || fail "'$cmd' is not installed (scripts/install-deps.sh installs it)"
done

if [[ $dummy != 1 ]]; then
  [[ $# -ge 1 && -x ${1:-} ]] || {
    echo "usage: test_slurm.sh PAGEREEL_BINARY (or PAGEREEL_SLURM_DUMMY=1 test_slurm.sh)" >&2
    exit 2
  }
  bin=$(realpath "$1")
fi

tmp=$(mktemp -d /tmp/pagereel-slurm.XXXXXX) || fail "cannot make a temp folder"
chmod 711 "$tmp"  # munged wants the folders above its socket searchable by all
conf=$tmp/etc/slurm.conf
export SLURM_CONF=$conf  # Every Slurm command below, and the daemons, use our cluster only.
pids=()                  # munged, slurmctld, slurmd: stopped in reverse order.

show_logs() {
  [[ -d ${tmp:-} ]] || return 0
  local f
  for f in "$tmp"/log/*.log "$tmp"/work.logs/*; do
    [[ -f $f ]] || continue
    echo "----- $f (last 40 lines)"
    tail -n 40 "$f"
  done
  if [[ -n ${jobs_submitted:-} ]]; then
    echo "----- scontrol show job"
    scontrol show job 2>&1 | tail -n 80
  fi
}

# The processes of our cluster's jobs (slurmstepd, the batch shells, pagereel, its browsers)
# all carry SLURM_CONF=$conf in their environment: that is how we find what we started and
# nothing else.
our_job_pids() {
  local p
  for p in /proc/[0-9]*; do
    [[ ${p#/proc/} != "$$" ]] || continue
    tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qxF "SLURM_CONF=$conf" && echo "${p#/proc/}"
  done
}

stop_pid() {  # PID: SIGTERM, up to 10 s, then SIGKILL.
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}

cleanup() {
  local rc=$? i pid
  trap - EXIT INT TERM
  if [[ -n ${jobs_submitted:-} ]] && scontrol ping >/dev/null 2>&1; then
    scancel --quiet --user="$(id -un)" 2>/dev/null
    for ((i = 0; i < 100; i++)); do
      [[ -z $(squeue -h 2>/dev/null) ]] && break
      sleep 0.2
    done
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    stop_pid "${pids[i]}"
  done
  for pid in $(our_job_pids); do
    kill -KILL "$pid" 2>/dev/null
  done
  if [[ ${PAGEREEL_SLURM_KEEP:-0} == 1 ]]; then
    say "kept $tmp"
  else
    rm -rf "$tmp"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A cluster that will not start is a skip for a user who may not run daemons, a failure
# for root (or when PAGEREEL_SLURM_REQUIRED=1): the packages are there, so it should run.
cannot_start() {
  if [[ $(id -u) -ne 0 && ${PAGEREEL_SLURM_REQUIRED:-0} != 1 ]]; then
    show_logs
    skip "could not start a one-node Slurm as $(id -un): $*"
  fi
  fail "could not start a one-node Slurm: $*"
}

start_cluster() {
  local host user ports ctld_port slurmd_port node i
  host=$(hostname -s)
  user=$(id -un)
  mkdir -p "$tmp"/{etc,munge,state,spool,log,run} || fail "cannot make folders in $tmp"
  chmod 755 "$tmp/munge"  # munged wants its socket folder searchable by all

  # munge: a fresh key and a private socket, so we neither need nor disturb a system munged.
  head -c 1024 /dev/urandom >"$tmp/munge/munge.key" && chmod 400 "$tmp/munge/munge.key"
  munged --foreground --force --key-file="$tmp/munge/munge.key" \
    --socket="$tmp/munge/munge.sock" --pid-file="$tmp/run/munged.pid" \
    --seed-file="$tmp/munge/munged.seed" --log-file="$tmp/log/munged.log" \
    >>"$tmp/log/munged.log" 2>&1 &
  pids+=($!)
  for ((i = 0; i < 50; i++)); do
    munge -S "$tmp/munge/munge.sock" -n 2>/dev/null |
      unmunge -S "$tmp/munge/munge.sock" >/dev/null 2>&1 && break
    kill -0 "${pids[0]}" 2>/dev/null || cannot_start "munged exited"
    sleep 0.1
  done
  ((i < 50)) || cannot_start "munged does not answer on $tmp/munge/munge.sock"

  # Two free TCP ports on loopback for slurmctld and slurmd.
  ports=$(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])') || fail "cannot find free ports"
  read -r ctld_port slurmd_port <<<"$ports"

  # The node as slurmd sees it (CPUs, sockets, memory), less the uptime.
  node=$(slurmd -C | head -n 1) || cannot_start "slurmd -C failed"
  node=${node%% UpTime=*}
  node=${node#NodeName=* }

  cat >"$conf" <<EOF
# A one-node test cluster of deploy/slurm/test_slurm.sh (made $(date -u +%FT%TZ)).
ClusterName=pagereel-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool/slurmd-%n
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
ReturnToService=2
# Finished jobs stay visible to scontrol for an hour: there is no accounting database.
MinJobAge=3600
NodeName=$host NodeAddr=127.0.0.1 $node State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

  slurmctld -D -c -f "$conf" >>"$tmp/log/slurmctld.out" 2>&1 &
  pids+=($!)
  slurmd -D -f "$conf" -N "$host" >>"$tmp/log/slurmd.out" 2>&1 &
  pids+=($!)
  for ((i = 0; i < 300; i++)); do
    [[ $(sinfo -h -N -o %T 2>/dev/null) == idle ]] && break
    kill -0 "${pids[1]}" 2>/dev/null || cannot_start "slurmctld exited"
    kill -0 "${pids[2]}" 2>/dev/null || cannot_start "slurmd exited"
    sleep 0.1
  done
  ((i < 300)) || cannot_start "the node did not come up idle within 30 s ($(sinfo -h -N -o %T 2>&1))"
  say "one-node Slurm up: $host at 127.0.0.1, slurmctld :$ctld_port, slurmd :$slurmd_port," \
      "$node"
}

# Prints "TASK STATE EXITCODE" per job (one line per array task).
job_states() {
  scontrol -o show job "$1" 2>/dev/null | while read -r line; do
    local id state code
    id=$(grep -o 'JobId=[0-9]*' <<<"$line" | head -n 1)
    id=${id#JobId=}
    [[ $line =~ ArrayTaskId=([0-9]+) ]] && id="$1_${BASH_REMATCH[1]}"
    [[ $line =~ JobState=([A-Z_]+) ]] && state=${BASH_REMATCH[1]}
    [[ $line =~ ' ExitCode='([0-9]+:[0-9]+) ]] && code=${BASH_REMATCH[1]}
    echo "$id ${state:-?} ${code:-?}"
  done
}

# Waits until every job named is in a final state (or the deadline passes).
wait_jobs() {
  local deadline=$((SECONDS + wait_s)) id states
  while ((SECONDS < deadline)); do
    states=
    for id in "$@"; do
      states+=$(job_states "$id")$'\n'
    done
    grep -Eq ' (PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|REQUEUED|RESIZING|SIGNALING|STAGE_OUT) ' \
      <<<"$states" || return 0
    sleep 1
  done
  fail "jobs $* still not finished after ${wait_s} s"
}

expect_states() {  # JOB WANTED_STATE: every task of JOB ended in WANTED_STATE.
  local states
  states=$(job_states "$1")
  [[ -n $states ]] || fail "job $1 is unknown to slurmctld"
  sed 's/^/  /' <<<"$states"
  if [[ $2 == COMPLETED ]]; then
    ! grep -vq ' COMPLETED 0:0$' <<<"$states" || fail "job $1: not every task completed with exit 0"
  else
    ! grep -vq " $2 " <<<"$states" || fail "job $1: expected every task to be $2"
  fi
}

submit() {  # Runs submit.sh; sets render_job and concat_job.
  local out rc
  out=$("$here/submit.sh" "$@")
  rc=$?
  ((rc == 0)) || { echo "$out"; fail "submit.sh $* exited $rc"; }
  jobs_submitted=1
  sed 's/^/  | /' <<<"$out"
  submit_out=$out
  render_job=$(sed -n 's/^render job: //p' <<<"$out")
  concat_job=$(sed -n 's/^concat job: //p' <<<"$out")
  [[ $render_job =~ ^[0-9]+$ && $concat_job =~ ^[0-9]+$ ]] ||
    fail "submit.sh did not print the two job ids"
}

frame_hashes() {  # FILM: one MD5 per decoded video frame, in order.
  ffmpeg -v error -i "$1" -map 0:v:0 -fps_mode passthrough -f framemd5 - |
    grep -v '^#' | awk -F, '{gsub(/ /, "", $NF); print $NF}'
}

# A stand-in for pagereel: `render ... --shard I/N --work-dir DIR` writes DIR/shard-I.args
# (its arguments, one a line) and `concat DIR -o FILM` joins them in order, refusing when
# one is missing, as the real concat does. One shard fails its first run when
# PAGEREEL_FAKE_FAIL_SHARD names it.
make_fake_pagereel() {
  cat >"$tmp/fake-pagereel" <<'EOF'
#!/usr/bin/env bash
set -euo pipefail
cmd=$1; shift
args=("$@")
while (($#)); do
  case $1 in
    -o) film=$2; shift ;;
    --shard) shard=$2; shift ;;
    --work-dir) work=$2; shift ;;
  esac
  shift
done
case $cmd in
  render)
    i=${shard%/*} n=${shard#*/}
    if [[ ${PAGEREEL_FAKE_FAIL_SHARD:-} == "$i" && ! -e $work/failed-once-$i ]]; then
      touch "$work/failed-once-$i"
      echo "fake pagereel: shard $i fails on purpose" >&2
      exit 1
    fi
    printf '%s\n' "shard $i of $n" "${args[@]}" >"$work/shard-$i.args"
    echo "$n" >"$work/shards" ;;
  concat)
    work=${args[0]}
    n=$(cat "$work/shards")
    for ((i = 0; i < n; i++)); do
      [[ -f $work/shard-$i.args ]] || { echo "fake pagereel: shard $i is missing" >&2; exit 1; }
    done
    for ((i = 0; i < n; i++)); do cat "$work/shard-$i.args"; done >"$film" ;;
  *) exit 2 ;;
esac
EOF
  chmod +x "$tmp/fake-pagereel"
}

# The plumbing alone: arrays, exports, quoting, afterok, a failed shard and its rerun.
run_dummy() {
  local page="$tmp/pages/lower third, copy" film="$tmp/out/film, final.txt" work="$tmp/work"
  local flags=(--size 320x180 --fps 30 --duration 4 --segment-frames 20 --title "a b,c")
  local rerun_render rerun_concat rerun_job expected states
  mkdir -p "$page" "$tmp/out" && cp -r "$root/examples/lower-third/." "$page/"
  make_fake_pagereel
  export PAGEREEL_BIN=$tmp/fake-pagereel PAGEREEL_CPUS=1 PAGEREEL_TIME=00:05:00
  export PAGEREEL_FAKE_FAIL_SHARD=1

  say "submit 3 shards and a concat; shard 1 fails its first run"
  submit "$page" "$film" "$work" 3 "${flags[@]}"
  wait_jobs "$render_job" "$concat_job"
  states=$(job_states "$render_job")
  sed 's/^/  /' <<<"$states"
  grep -q "^${render_job}_1 FAILED " <<<"$states" || fail "shard 1 did not fail"
  [[ $(grep -c ' COMPLETED 0:0$' <<<"$states") == 2 ]] || fail "shards 0 and 2 did not complete"
  expect_states "$concat_job" CANCELLED
  [[ ! -e $film ]] || fail "the concat ran although a shard failed"

  say "rerun shard 1 and the concat with the commands submit.sh printed"
  rerun_render=$(grep -A2 '^  PAGEREEL_PAGE=' <<<"$submit_out" | sed -n '1,3p' | sed 's/\\$//')
  rerun_concat=$(grep -A2 '^  PAGEREEL_PAGE=' <<<"$submit_out" | sed -n '4,6p' | sed 's/\\$//')
  rerun_render=${rerun_render//--array=K/--array=1}
  rerun_render=${rerun_render/sbatch /sbatch --parsable }
  rerun_job=$(eval "$(tr '\n' ' ' <<<"$rerun_render")") || fail "the printed rerun command failed"
  rerun_job=${rerun_job%%;*}
  say "  rerun job $rerun_job"
  rerun_concat=${rerun_concat//RERUN_JOB_ID/$rerun_job}
  rerun_concat=${rerun_concat/sbatch /sbatch --parsable }
  concat_job=$(eval "$(tr '\n' ' ' <<<"$rerun_concat")") ||
    fail "the printed concat command failed"
  wait_jobs "$rerun_job" "$concat_job"
  expect_states "$rerun_job" COMPLETED
  expect_states "$concat_job" COMPLETED

  # Each shard saw its index, the count, the paths and the flags exactly as given.
  expected=$(for i in 0 1 2; do
    printf '%s\n' "shard $i of 3" "$page" -o "$film" --shard "$i/3" --work-dir "$work" \
      "${flags[@]}" --lanes 1
  done)
  diff <(echo "$expected") "$film" || fail "the shards' arguments differ from the expected ones"
  say "PASS (dummy): 3-task array, afterok concat, a failed shard rerun with --array=1"
}

run_real() {
  local page=$root/examples/lower-third work=$tmp/work
  local flags=(--size 320x180 --fps 30 --duration 4 --segment-frames 20)
  local sharded=$tmp/out/sharded.mp4 whole=$tmp/out/whole.mp4 a b
  mkdir -p "$tmp/out"
  export PAGEREEL_BIN=$bin PAGEREEL_CPUS=1 PAGEREEL_TIME=00:10:00

  say "submit a 3-shard render of $page and its concat"
  submit "$page" "$sharded" "$work" 3 "${flags[@]}"
  wait_jobs "$render_job" "$concat_job"
  expect_states "$render_job" COMPLETED
  expect_states "$concat_job" COMPLETED
  [[ -s $sharded ]] || fail "the concat job left no film at $sharded"

  say "render the same film in one piece"
  "$bin" render "$page" -o "$whole" "${flags[@]}" --progress none ||
    fail "pagereel render (one piece) exited $?"

  a=$(frame_hashes "$sharded") || fail "ffmpeg could not decode $sharded"
  b=$(frame_hashes "$whole") || fail "ffmpeg could not decode $whole"
  say "frames: sharded $(wc -l <<<"$a"), one piece $(wc -l <<<"$b") (expected 120)"
  [[ $(wc -l <<<"$a") == 120 && $(wc -l <<<"$b") == 120 ]] || fail "frame counts differ from 120"
  diff <(echo "$a") <(echo "$b") >"$tmp/frames.diff" ||
    fail "the films differ in $(grep -c '^<' "$tmp/frames.diff") frame(s)"
  say "PASS: 3 shards on Slurm and one piece decode to the same 120 frames"
}

start_cluster
if [[ $dummy == 1 ]]; then
  run_dummy
else
  run_real
fi
