#!/usr/bin/env bash
# Runs built fuzz targets one after another, niced, each for SECONDS, on a working corpus under
# work/ seeded from seeds/ and corpus/; appends libFuzzer's final statistics to work/campaign.log.
# Build first with `cargo +nightly fuzz build -s none -a` (no sanitizer: the crate forbids
# unsafe code; debug assertions on, so integer overflow panics).
# Usage: ROUND=N fuzz/campaign.sh SECONDS TARGET... (logs go to work/TARGET.N.log)
set -uo pipefail
cd "$(dirname "$0")"
secs=$1; shift
bin=target/x86_64-unknown-linux-gnu/release
for t in "$@"; do
  mkdir -p "work/$t" "artifacts/$t"
  start=$(date +%s)
  extra=()
  [ -d "corpus/$t" ] && extra+=("corpus/$t")
  [ -d "regressions/$t" ] && extra+=("regressions/$t")
  nice -n 15 "$bin/$t" "work/$t" "seeds/$t" "${extra[@]}" \
    -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -dict=json.dict \
    -print_final_stats=1 -artifact_prefix="artifacts/$t/" > "work/$t.${ROUND:-1}.log" 2>&1
  rc=$?
  end=$(date +%s)
  execs=$(grep -a 'stat::number_of_executed_units' "work/$t.${ROUND:-1}.log" | awk '{print $2}')
  last=$(grep -aE '^#[0-9]+' "work/$t.${ROUND:-1}.log" | tail -1)
  lastnew=$(grep -aE '^#[0-9]+.*(NEW|REDUCE)' "work/$t.${ROUND:-1}.log" | tail -1 | awk '{print $1}')
  echo "$(date -u +%H:%M) $t rc=$rc secs=$((end-start)) execs=${execs:-?} last_new=${lastnew:-none} final: $last" >> work/campaign.log
done
