#!/usr/bin/env bash
# Minimises each target's working corpus (work/) together with the committed one into
# corpus/TARGET with libFuzzer's merge (what `cargo fuzz cmin` runs): the smallest set of
# inputs that keeps every covered edge (hit counts ignored, so the set stays small). Seeds and
# regressions stay in their own folders.
# corpus/ is the committed regression corpus, work/ the git-ignored working corpus. With
# MAX_FILES=N (default 300, the regression corpus' cap; 0 for no cap), a target whose merged set
# is larger keeps the N inputs that cover the most edges instead (greedy, cap_corpus.py over the
# merge's control file), and the line printed says how many edges that keeps.
# BIN=DIR as in campaign.sh (default target/x86_64-unknown-linux-gnu/release).
# RSS_MB=N: the merge's memory limit (default 2048); a merge of 100,000 inputs or more needs
# more, for the control file it parses (1.7 GB for campaign 18's 136,408 Nova scenarios).
# JOBS=N: split the working corpus into N parts, reduce each part to its own set cover in
# parallel (part K on CPU K), then merge those with the committed corpus. Every edge of the
# working corpus is still kept, and a large merge takes about 1/N of the wall time (CPU pins
# only the final merge).
# Usage: [MAX_FILES=N] [CPU=N | JOBS=N] [BIN=DIR] fuzz/minimise.sh TARGET...
set -euo pipefail
cd "$(dirname "$0")"
bin=${BIN:-target/x86_64-unknown-linux-gnu/release}
jobs=${JOBS:-1}
max_files=${MAX_FILES:-300}
# merge CPU TARGET CONTROL_FILE LOG OUT_DIR IN_DIR...: libFuzzer's set-cover merge into OUT_DIR,
# niced, on core CPU unless that is empty.
merge() {
  local cpu=$1 t=$2 ctl=$3 log=$4
  shift 4
  local run=(nice -n 15)
  [ -n "$cpu" ] && run=(taskset -c "$cpu" "${run[@]}")
  # libFuzzer resumes the merge an existing control file records, and one left by an earlier
  # merge over as many files counts as finished: OUT_DIR stayed empty, and the committed corpus
  # was replaced by nothing.
  rm -f "$ctl"
  "${run[@]}" "$bin/$t" -merge=1 -set_cover_merge=1 -merge_control_file="$ctl" \
    -use_counters=0 -use_cmp=0 -use_value_profile=0 -max_len=16384 -timeout=10 -rss_limit_mb="${RSS_MB:-2048}" \
    "$@" > "$log" 2>&1
}
for t in "$@"; do
  # A new target has no committed corpus yet (ls fails, and pipefail would end the script).
  before=$( (ls "corpus/$t" 2>/dev/null || true) | wc -l)
  rm -rf "corpus/$t.new" && mkdir -p "corpus/$t.new" "corpus/$t" "work/$t"
  inputs=("work/$t")
  if [ "$jobs" -gt 1 ]; then
    rm -rf "work/$t.part"*
    (cd "work/$t" && ls | awk -v n="$jobs" -v t="$t" '{ print > ("../" t ".part" (NR % n) ".list") }')
    inputs=() pids=()
    for k in $(seq 0 $((jobs - 1))); do
      mkdir "work/$t.part$k" "work/$t.part$k.cover"
      (cd "work/$t" && xargs -a "../$t.part$k.list" ln -t "../$t.part$k")
      merge "$k" "$t" "work/$t.part$k.ctl" "work/$t.part$k.log" "work/$t.part$k.cover" "work/$t.part$k" &
      pids+=($!) inputs+=("work/$t.part$k.cover")
    done
    for p in "${pids[@]}"; do wait "$p"; done
  fi
  merge "${CPU:-}" "$t" "work/$t.merge.ctl" "work/$t.merge.log" "corpus/$t.new" "corpus/$t" "${inputs[@]}"
  note="every edge of the merge"
  if [ "$max_files" -gt 0 ] && [ "$(ls "corpus/$t.new" | wc -l)" -gt "$max_files" ]; then
    rm -rf "corpus/$t.new" && mkdir "corpus/$t.new"
    note=$(python3 cap_corpus.py "work/$t.merge.ctl" "$max_files" 2>&1 > "work/$t.chosen")
    while IFS= read -r path; do
      cp "$path" "corpus/$t.new/$(sha1sum "$path" | cut -c1-40)"
    done < "work/$t.chosen"
  fi
  rm -rf "corpus/$t" && mv "corpus/$t.new" "corpus/$t"
  # The parts are links into work/TARGET and their covers copies (which MAX_FILES may have
  # chosen from, above); only the logs are kept.
  rm -rf "work/$t.part"*[0-9] "work/$t.part"*.cover "work/$t.part"*.list "work/$t.part"*.ctl
  echo "$t: $before -> $(ls "corpus/$t" | wc -l) files, $(du -sh "corpus/$t" | cut -f1); $note" | tee -a work/minimise.log
done
