#!/usr/bin/env bash
# Regenerates every tests/data/nova/*.expected.json by running OpenStack Nova's own scheduler
# (the reference tool in ../shared/nova-reference) on the matching *.scenario.json.
#
#   (cd ../shared/nova-reference && python3 -m venv .venv && .venv/bin/pip install nova==34.0.0)
#   tests/data/nova/regenerate.sh            # or NOVA_REFERENCE=/path/to/nova-reference ...
#   tests/data/nova/regenerate.sh a.scenario.json b.scenario.json   # only these (names in this folder)
#
# CI never runs this: the expected files are committed.
set -euo pipefail
cd "$(dirname "$0")"
ref=${NOVA_REFERENCE:-../../../../shared/nova-reference}
python=${NOVA_PYTHON:-$ref/.venv/bin/python}
if [ $# -gt 0 ]; then scenarios=("$@"); else scenarios=(*.scenario.json); fi
for scenario in "${scenarios[@]}"; do
  expected=${scenario%.scenario.json}.expected.json
  if out=$("$python" "$ref/oracle.py" "$scenario" --trace first --indent 1 2>/tmp/oracle.err); then
    printf '%s\n' "$out" > "$expected"
  else
    # Nova raised: the request must fail in placewise too.
    python3 -c 'import json,sys; print(json.dumps({"error": sys.argv[1]}, indent=1))' \
      "$(grep -v '^\s*$' /tmp/oracle.err | tail -n 1)" > "$expected"
  fi
  echo "$expected"
done
