#!/usr/bin/env bash
# Submits a sharded pagereel render to Slurm: a job array with one task per shard
# (render.sbatch), then the join (concat.sbatch) with --dependency=afterok on the array, so
# the film is written only when every shard succeeded. Prints both job ids, how to watch
# them and how to rerun one failed shard.
#
# usage: deploy/slurm/submit.sh PAGE FILM WORK_DIR SHARDS [render flags...]
#   PAGE      an .html file, a folder holding index.html, or an http(s) URL
#   FILM      the film to write (.mp4, .mov, .webm, ...); written by the concat job only
#   WORK_DIR  a folder on a file system every node sees; shards write segments there
#   SHARDS    how many array tasks share the film (1 or more)
#   render flags are passed to every `pagereel render` as they are (--fps, --size, ...).
#   PAGE, FILM and WORK_DIR must be paths the nodes see at the same place.
#
# Resources and placement, from the environment:
#   PAGEREEL_BIN              pagereel on the nodes (default: the one on this PATH, else 'pagereel')
#   PAGEREEL_CPUS             --cpus-per-task of a shard (default 2)
#   PAGEREEL_LANES            browsers per shard (default 1; a --lanes in the render flags wins)
#   PAGEREEL_MEM_PER_LANE_MB  memory per lane (default 1536: a 1080p headless shell peaks
#                             near 600 MB RSS, plus decode, encode and the reorder window)
#   PAGEREEL_TIME             time limit of a shard (default 01:00:00)
#   PAGEREEL_CONCAT_TIME      time limit of the concat job (default 00:30:00)
#   PAGEREEL_PARTITION        partition (default: the cluster's default)
#   PAGEREEL_SBATCH_ARGS      more sbatch options for both jobs, split on spaces (--account=x ...)
#   PAGEREEL_LOG_DIR          where the jobs' logs go (default WORK_DIR.logs, beside the work
#                             folder, which belongs to pagereel: concat clears it)
# Exit status: 0 submitted, 1 sbatch failed, 2 bad arguments.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
  sed -n '/^# usage:/,/^# Exit status/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}
bad() {
  echo "submit.sh: $*" >&2
  echo "usage: submit.sh PAGE FILM WORK_DIR SHARDS [render flags...] (--help for more)" >&2
  exit 2
}
positive() {  # NAME VALUE: VALUE must be a whole number of at least 1.
  [[ $2 =~ ^[1-9][0-9]*$ ]] || bad "$1 must be a whole number of at least 1, got '$2'"
}

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  usage
  exit 0
fi
(( $# >= 4 )) || bad "expected PAGE FILM WORK_DIR SHARDS, got $# argument(s)"
page=$1 film=$2 work=$3 shards=$4
shift 4
flags=("$@")

positive SHARDS "$shards"
cpus=${PAGEREEL_CPUS:-2}
positive PAGEREEL_CPUS "$cpus"
mem_per_lane=${PAGEREEL_MEM_PER_LANE_MB:-1536}
positive PAGEREEL_MEM_PER_LANE_MB "$mem_per_lane"
time_limit=${PAGEREEL_TIME:-01:00:00}
concat_time=${PAGEREEL_CONCAT_TIME:-00:30:00}
[[ -n $time_limit && -n $concat_time ]] || bad "PAGEREEL_TIME and PAGEREEL_CONCAT_TIME must not be empty"

# The render flags decide the lane count when they name one; otherwise we add --lanes, so
# the memory asked for matches the browsers started (pagereel would otherwise size its
# lanes from the whole node's cores, not the task's share).
lanes=${PAGEREEL_LANES:-1}
lanes_in_flags=
for ((i = 0; i < ${#flags[@]}; i++)); do
  case ${flags[i]} in
    --lanes) lanes=${flags[i + 1]:-}; lanes_in_flags=1 ;;
    --lanes=*) lanes=${flags[i]#--lanes=}; lanes_in_flags=1 ;;
    --shard | --shard=* | --work-dir | --work-dir=* | -o | --output | --output=*)
      bad "${flags[i]%%=*} is set by submit.sh from its arguments; leave it out of the render flags" ;;
  esac
done
positive "the lane count" "$lanes"
[[ -n $lanes_in_flags ]] || flags+=(--lanes "$lanes")
mem_mb=$((lanes * mem_per_lane))

# The nodes see paths, not this shell's working directory: make them absolute.
case $page in
  http://* | https://* | file://*) ;;
  *)
    [[ -e $page ]] || bad "PAGE '$page' does not exist (an .html file, a folder holding index.html, or a URL)"
    page=$(realpath "$page")
    ;;
esac
[[ -n $film && ! -d $film ]] || bad "FILM '$film' must be a file name such as out/film.mp4"
[[ -d $(dirname "$film") ]] || bad "the folder of FILM '$film' does not exist"
film=$(realpath -m "$film")
[[ -n $work ]] || bad "WORK_DIR must not be empty"
mkdir -p "$work" || bad "cannot create WORK_DIR '$work'"
work=$(realpath "$work")
logs=${PAGEREEL_LOG_DIR:-$work.logs}
mkdir -p "$logs" || bad "cannot create the log folder '$logs'"
logs=$(realpath "$logs")

if [[ -z ${PAGEREEL_BIN:-} ]]; then
  PAGEREEL_BIN=$(command -v pagereel || echo pagereel)
fi
command -v sbatch >/dev/null || {
  echo "submit.sh: sbatch not found: run this where Slurm's client commands are installed" >&2
  exit 1
}

# Values travel in the environment and --export names them, so a page URL with commas
# survives (--export=NAME=VALUE would split it at the comma).
export PAGEREEL_PAGE=$page PAGEREEL_FILM=$film PAGEREEL_WORK=$work
export PAGEREEL_SHARDS=$shards PAGEREEL_BIN
exports=ALL,PAGEREEL_PAGE,PAGEREEL_FILM,PAGEREEL_WORK,PAGEREEL_SHARDS,PAGEREEL_BIN
common=(--export="$exports")
[[ -n ${PAGEREEL_PARTITION:-} ]] && common+=(--partition="$PAGEREEL_PARTITION")
# shellcheck disable=SC2206  # split on purpose: a list of sbatch options
[[ -n ${PAGEREEL_SBATCH_ARGS:-} ]] && common+=($PAGEREEL_SBATCH_ARGS)

render_args=(--job-name=pagereel-render --ntasks=1 --cpus-per-task="$cpus" --mem="${mem_mb}M"
             --time="$time_limit" --output="$logs/render-%A_%a.out" "${common[@]}")
concat_args=(--job-name=pagereel-concat --ntasks=1 --cpus-per-task=1 --mem=1G
             --time="$concat_time" --output="$logs/concat-%j.out" --kill-on-invalid-dep=yes
             "${common[@]}")

# sbatch --parsable prints "jobid" or "jobid;cluster".
render_id=$(sbatch --parsable --array="0-$((shards - 1))" "${render_args[@]}" \
              "$here/render.sbatch" "${flags[@]}") || exit 1
render_id=${render_id%%;*}
concat_id=$(sbatch --parsable --dependency="afterok:$render_id" "${concat_args[@]}" \
              "$here/concat.sbatch") || {
  echo "submit.sh: the render array $render_id is queued but the concat job was refused;" \
       "cancel it with: scancel $render_id" >&2
  exit 1
}
concat_id=${concat_id%%;*}

q() {  # Quotes words for a shell, only where they need it.
  local word
  for word; do
    if [[ $word =~ ^[A-Za-z0-9_./=:%@,+-]+$ ]]; then
      printf '%s ' "$word"
    else
      printf '%q ' "$word"
    fi
  done
}
env_prefix=$(q PAGEREEL_PAGE="$page" PAGEREEL_FILM="$film" PAGEREEL_WORK="$work" \
               PAGEREEL_SHARDS="$shards" PAGEREEL_BIN="$PAGEREEL_BIN")
cat <<EOF
render job: $render_id
concat job: $concat_id
The film: $film ($shards shards, each with ${cpus} CPU(s) and ${mem_mb} MB; logs in $logs)

Watch:
  squeue -j $render_id,$concat_id
  scontrol show job $render_id        # per-task state and exit codes
  tail -f $logs/render-${render_id}_0.out

If shard K fails, the concat job is cancelled (its dependency can no longer be met).
Rerun shard K (it keeps the segments it finished), then the concat after it:
  $env_prefix\\
    sbatch --array=K $(q "${render_args[@]}")\\
    $(q "$here/render.sbatch" "${flags[@]}")
  $env_prefix\\
    sbatch --dependency=afterok:RERUN_JOB_ID $(q "${concat_args[@]}")\\
    $(q "$here/concat.sbatch")
Or run this script again with the same arguments: every shard skips its finished segments.
EOF
