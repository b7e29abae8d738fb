#!/usr/bin/env bash
# Checks that a built target counts the same coverage for the same inputs in every process: it
# loads one sample of the target's working corpus (work/TARGET) RUNS times with `-runs=0` (load
# and execute, no mutation) and compares the edge and feature counts libFuzzer prints at INITED.
# A target whose counts differ between runs finds "new" coverage by luck (random hash keys, the
# clock, global state left by an earlier input), and its edge count never settles; see
# CAMPAIGN.md, campaign 12.
#
# Usage (from anywhere): BIN=DIR fuzz/determinism.sh TARGET [FILES] [RUNS]
#   FILES  how many corpus files to sample (default 3000; the same files in every run)
#   RUNS   how many processes to compare (default 3)
#   BIN    as in campaign.sh (default target-ours/x86_64-unknown-linux-gnu/release)
# Exits 0 when every run counts the same edges and features, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")"
t=$1 files=${2:-3000} runs=${3:-3}
bin=${BIN:-target-ours/x86_64-unknown-linux-gnu/release}
sample=$(mktemp -d)
trap 'rm -rf "$sample"' EXIT
find "work/$t" -type f | sort | awk -v n="$files" 'NR <= n' | xargs -r cp -t "$sample"
counts=()
for _ in $(seq "$runs"); do
  line=$("$bin/$t" -runs=0 -rss_limit_mb=2048 -max_len=16384 "$sample" 2>&1 | grep -a INITED)
  counts+=("$(sed -E 's/.*(cov: [0-9]+ ft: [0-9]+).*/\1/' <<< "$line")")
  echo "$line"
done
if [ "$(printf '%s\n' "${counts[@]}" | sort -u | wc -l)" -eq 1 ]; then
  echo "$t: the same coverage in all $runs runs (${counts[0]})"
else
  echo "$t: coverage differs between runs of the same inputs" >&2
  exit 1
fi
