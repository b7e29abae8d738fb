#!/usr/bin/env bash
# Minimises each target's working corpus (work/) together with the committed one into
# corpus/TARGET with libFuzzer's merge (what `cargo fuzz cmin` runs): the smallest set of
# inputs that keeps every covered edge (hit counts ignored, so the set stays small). Seeds and regressions stay in their own folders.
# Usage: fuzz/minimise.sh TARGET...
set -euo pipefail
cd "$(dirname "$0")"
bin=target/x86_64-unknown-linux-gnu/release
for t in "$@"; do
  rm -rf "corpus/$t.new" && mkdir -p "corpus/$t.new" "corpus/$t"
  nice -n 15 "$bin/$t" -merge=1 -set_cover_merge=1 -use_counters=0 -use_cmp=0 -use_value_profile=0 -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
    "corpus/$t.new" "corpus/$t" "work/$t" > "work/$t.merge.log" 2>&1
  rm -rf "corpus/$t" && mv "corpus/$t.new" "corpus/$t"
  echo "$t: $(ls "corpus/$t" | wc -l) files, $(du -sh "corpus/$t" | cut -f1)"
done
