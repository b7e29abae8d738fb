#!/usr/bin/env bash
# Writes tests/data/nova/drawn_<hash>.scenario.json: scenarios drawn by the `nova_drawn` fuzz
# target's generator (fuzzing/src/nova_draw.rs) within Nova's scope (`Scope::Nova`), from the
# inputs of its committed corpus (fuzz/corpus/nova_drawn, chosen by coverage) and from COUNT
# pseudo-random inputs (a fixed seed). Nobody wrote these scenarios by hand; the expected
# answers come from Nova itself afterwards:
#
#   (cd fuzz && cargo +nightly fuzz build -s none nova_drawn)
#   tests/data/nova/drawn_scenarios.sh        # BIN=dir of the built target, COUNT=318
#   NOVA_REFERENCE=../shared/nova-reference ../shared/nova-reference/.venv/bin/python \
#       tests/data/nova/oracle_batch.py tests/data/nova/drawn_*.scenario.json
#
# CI never runs this: the scenarios and expected files are committed.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../../.. && pwd)
bin=${BIN:-$root/fuzz/target/x86_64-unknown-linux-gnu/release}/nova_drawn
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bytes" "$tmp/out"
python3 - "$tmp/bytes" "${COUNT:-318}" <<'PY'
import random
import sys
r = random.Random(20261127)
for i in range(int(sys.argv[2])):
    n = r.randint(16, 1600)
    with open("%s/r%04d" % (sys.argv[1], i), "wb") as fh:
        fh.write(bytes(r.getrandbits(8) for _ in range(n)))
PY
NOVA_DRAWN_SCOPE=nova NOVA_DRAWN_RENDER="$tmp/out" "$bin" -runs=0 "$root/fuzz/corpus/nova_drawn" "$tmp/bytes" 2>/dev/null
rm -f drawn_*.scenario.json drawn_*.expected.json
for f in "$tmp"/out/drawn-*.json; do
  name=${f##*/drawn-}
  cp "$f" "drawn_${name%.json}.scenario.json"
done
ls drawn_*.scenario.json | wc -l
