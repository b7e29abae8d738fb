#!/usr/bin/env bash
# Instructions per call of one bench, net of the bench binary's setup (load-independent).
#
# Usage: benches/callgrind_per_call.sh BENCH_BINARY TOGGLE_FN FILTER COUNT_FN
#   BENCH_BINARY  a criterion bench built with `cargo bench --bench NAME --no-run`
#   TOGGLE_FN     the function callgrind collects in (--toggle-collect), e.g.
#                 'placewise::replica::ReplicaScheduler::schedule_volume'
#   FILTER        the criterion filter of the measured bench, e.g. '^replica_volume_3/1000$'
#   COUNT_FN      a function called exactly once per measured call, e.g. precheck_in, or
#                 ColdTier::new for a new volume the one-pass first tier schedules
#
# A bench binary runs its setup (building clusters, warming scratches, checking answers) for
# every group whatever the filter, and callgrind counts any of it that runs inside TOGGLE_FN.
# So the bench runs twice under callgrind, once with FILTER and once with a filter that matches
# nothing, and the difference in instructions is divided by the difference in calls.
set -euo pipefail
bin=$1 toggle=$2 filter=$3 count=$4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {
  valgrind --tool=callgrind --callgrind-out-file="$out/$1" --toggle-collect="$toggle" \
    "$bin" --bench --profile-time 1 "$2" > /dev/null 2>&1
}
total() { callgrind_annotate "$out/$1" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print ($1 == "." ? 0 : $1); exit }'; }
# Calls of COUNT_FN: the `calls=` lines that follow a call to a function whose name ends so.
calls() {
  awk -v want="$count" '
    /^c?fn=\([0-9]+\) / { id = $1; sub(/^c?fn=/, "", id); name = $0; sub(/^c?fn=\([0-9]+\) /, "", name); names[id] = name }
    /^cfn=/ { id = $1; sub(/^cfn=/, "", id); hit = (length(names[id]) >= length(want) && substr(names[id], length(names[id]) - length(want) + 1) == want); next }
    /^calls=/ { if (hit) { split($1, a, "="); n += a[2] } hit = 0; next }
    { hit = 0 }
    END { print n + 0 }' "$out/$1"
}
run measured "$filter"
run setup 'no bench has this name'
ta=$(total measured) tb=$(total setup) ca=$(calls measured) cb=$(calls setup)
if [ $((ca - cb)) -le 0 ]; then
  echo "no measured calls of $count" >&2
  exit 1
fi
echo "$filter: $(( (ta - tb) / (ca - cb) )) instructions per call ($((ca - cb)) calls)"
