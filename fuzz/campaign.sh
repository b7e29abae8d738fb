#!/usr/bin/env bash
# Runs built fuzz targets one after another, niced, on a working corpus under work/ seeded from
# seeds/, corpus/ and regressions/; appends a summary line per run to work/campaign.log.
# Build first with `cargo +nightly fuzz build -s none -a` (no sanitizer: the crate forbids
# unsafe code; debug assertions on, so integer overflow panics).
#
# Usage: ROUND=N fuzz/campaign.sh SECONDS TARGET...
#   SECONDS          the longest a target runs.
#   ROUND            names the logs: work/TARGET.ROUND.log, and work/TARGET.ROUND.cov holds
#                    "elapsed-seconds cpu-seconds edges fuzzing-cpu-seconds" samples every 10 s
#                    once the corpus is loaded.
#   MIN_SECONDS=M    end a run early once the fuzzer has fuzzed for M seconds of CPU and its edge
#                    count has not grown over the last quarter of that fuzzing CPU time (the
#                    plateau this campaign uses). CPU time, not wall time, so a fuzzer starved by
#                    neighbours on a shared machine is not taken for one that stopped finding
#                    edges; counted from the end of the corpus load (libFuzzer's INITED), so a
#                    long load does not count as time without growth.
#   PEERS="R1 R2"    the ROUNDs of other runs of this script fuzzing the same targets on the same
#                    working folder at the same time (one per core). The plateau is then the
#                    target's, not this fuzzer's: the edge count is the largest of the runs' latest
#                    samples (each fuzzer reloads the folder every second, so its count takes in
#                    what the others found, and the largest tracks the folder's), the fuzzing CPU
#                    time is the runs' sum, and MIN_SECONDS counts that sum. All runs of the group
#                    see the same numbers and stop within one sample of each other.
#   DEADLINE=HH:MM   (UTC) no fuzzer runs past it: a run is stopped there, later targets skipped.
#                    Any `date -d` text: past midnight, 'tomorrow 02:15'.
#   CPU=N NICE=K     pin every fuzzer to core N (taskset) and nice it by K (default 15).
#   BIN=DIR          where the built targets are (default target/x86_64-unknown-linux-gnu/release;
#                    target-ours/... for a build with coverage of our code only, see ours-only-rustc).
#   DICT=FILE        the libFuzzer dictionary (default json.dict; nova.dict adds the Nova
#                    scenario's vocabulary: record keys, filter names, operators; `none` for
#                    none, as for the byte-program target `nova_drawn`).
#   TIMEOUT=S        libFuzzer's per-input timeout in wall seconds (default 10). A niced fuzzer
#                    starved by builds can take minutes of wall time for an input that needs a
#                    fraction of a second of CPU: raise it on a loaded machine.
# A run is stopped with SIGINT, so libFuzzer still prints its final statistics.
set -uo pipefail
cd "$(dirname "$0")"
secs=$1; shift
bin=${BIN:-target/x86_64-unknown-linux-gnu/release}
round=${ROUND:-1}
deadline=
[ -n "${DEADLINE:-}" ] && deadline=$(date -u -d "$DEADLINE" +%s)
launch=(nice -n "${NICE:-15}")
[ -n "${CPU:-}" ] && launch=(taskset -c "$CPU" "${launch[@]}")

# CPU seconds (user + system) a process has used so far.
cpu_secs() { awk -v hz="$(getconf CLK_TCK)" '{ print int(($14 + $15) / hz) }' "/proc/$1/stat" 2>/dev/null || echo 0; }
edges() { grep -aoE '^#[0-9]+.*cov: [0-9]+' "$1" | tail -1 | sed -E 's/.*cov: ([0-9]+)/\1/'; }

for t in "$@"; do
  if [ -n "$deadline" ] && [ "$(date +%s)" -ge "$deadline" ]; then
    echo "$(date -u +%H:%M) $t skipped: past the deadline" >> work/campaign.log
    continue
  fi
  mkdir -p "work/$t" "artifacts/$t"
  log="work/$t.$round.log" samples="work/$t.$round.cov"
  : > "$samples"
  extra=()
  [ -d "corpus/$t" ] && extra+=("corpus/$t")
  [ -d "regressions/$t" ] && extra+=("regressions/$t")
  dict=()
  [ "${DICT:-json.dict}" != none ] && dict=(-dict="${DICT:-json.dict}")
  start=$(date +%s)
  "${launch[@]}" "$bin/$t" "work/$t" "seeds/$t" "${extra[@]}" \
    -max_total_time="$secs" -timeout="${TIMEOUT:-10}" -rss_limit_mb=2048 -max_len=16384 "${dict[@]}" \
    -print_final_stats=1 -artifact_prefix="artifacts/$t/" > "$log" 2>&1 &
  pid=$!
  last_cov= grew=0 cpu=0 fuzzed=0 group=0 inited= why=limit
  while kill -0 "$pid" 2>/dev/null; do
    sleep 10
    now=$(date +%s) elapsed=$(( $(date +%s) - start ))
    # After the fuzzer exits /proc has nothing: keep the last reading.
    now_cpu=$(cpu_secs "$pid"); [ "$now_cpu" -gt 0 ] && cpu=$now_cpu
    if grep -aq INITED "$log"; then
      [ -z "$inited" ] && inited=$cpu
      [ "$cpu" -ge "$inited" ] && fuzzed=$((cpu - inited))
      cov=$(edges "$log")
      if [ -n "$cov" ]; then
        echo "$elapsed $cpu $cov $fuzzed" >> "$samples"
        # The group's edge count and fuzzing CPU time: this run's, with its peers' latest samples.
        gcov=$cov group=$fuzzed
        for peer in ${PEERS:-}; do
          read -r _ _ pcov pfuzzed _ < <(tail -1 "work/$t.$peer.cov" 2>/dev/null) || continue
          [ "${pcov:-0}" -gt "$gcov" ] && gcov=$pcov
          group=$((group + ${pfuzzed:-0}))
        done
        [ "$gcov" != "$last_cov" ] && { [ -n "$last_cov" ] && grew=$group; last_cov=$gcov; }
      fi
    fi
    if [ -n "$deadline" ] && [ "$now" -ge "$deadline" ]; then
      why=deadline; kill -INT "$pid" 2>/dev/null; break
    fi
    if [ -n "${MIN_SECONDS:-}" ] && [ "$group" -ge "$MIN_SECONDS" ] && [ $((grew * 4)) -le $((group * 3)) ]; then
      why=plateau; kill -INT "$pid" 2>/dev/null; break
    fi
  done
  # libFuzzer exits on SIGINT within a second; once (campaign 18) it hung in its exit path
  # instead, asleep, until killed. A minute, then SIGKILL (rc 137 in the summary line).
  for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
  end=$(date +%s)
  execs=$(grep -a 'stat::number_of_executed_units' "$log" | awk '{print $2}')
  init=$(grep -a 'INITED' "$log" | head -1 | sed -E 's/.*cov: ([0-9]+).*/\1/')
  last=$(grep -aE '^#[0-9]+' "$log" | tail -1)
  echo "$(date -u +%H:%M) $t rc=$rc secs=$((end-start)) cpu=${cpu}s fuzzing_cpu=${fuzzed}s${PEERS:+ group_fuzzing_cpu=${group}s} stop=$why execs=${execs:-?} inited_cov=${init:-?} last_growth_at_${PEERS:+group_}fuzzing_cpu=${grew}s final: $last" >> work/campaign.log
done
