#!/usr/bin/env python3
"""Runs the reference tool's oracle.py on many scenarios in one Python process.

regenerate.sh starts Nova afresh for every scenario (a few seconds each, mostly imports); this
runs `oracle.main` for each file in turn, resetting Nova's configuration in between, and writes
the same `<name>.expected.json` (or `{"error": ...}` when Nova raises), without the timings. Run it with the Python
of a virtualenv that has `nova==34.0.0`:

    NOVA_REFERENCE=../shared/nova-reference \\
        /path/to/venv/bin/python tests/data/nova/oracle_batch.py tests/data/nova/random_*.scenario.json

`--check` compares with the existing expected files instead of writing them (timings ignored).
"""
import contextlib
import io
import json
import os
import sys


def main(argv):
    check = "--check" in argv
    paths = [a for a in argv if a != "--check"]
    here = os.path.dirname(os.path.abspath(__file__))
    ref = os.environ.get("NOVA_REFERENCE", os.path.join(here, "../../../../shared/nova-reference"))
    sys.path.insert(0, os.path.abspath(ref))
    import oracle  # noqa: E402  (the reference tool; needs nova installed)

    differ = 0
    for path in paths:
        oracle.CONF.reset()
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                oracle.main([path, "--trace", "first", "--indent", "1"])
            result = json.loads(out.getvalue())
        except BaseException as e:  # Nova raised, or the tool refused the scenario
            if isinstance(e, KeyboardInterrupt):
                raise
            result = {"error": "%s: %s" % (type(e).__name__, e)}
        expected = path.replace(".scenario.json", ".expected.json")
        if check:
            with open(expected) as fh:
                old = json.load(fh)
            for r in (old, result):
                r.pop("timing", None)
                r.get("oracle", {}).pop("python", None)
            same = old == result or ("error" in old and "error" in result)
            differ += not same
            print(("same    " if same else "DIFFERS ") + expected)
        else:
            result.pop("timing", None)  # differs on every run
            with open(expected, "w") as fh:
                fh.write(json.dumps(result, indent=1) + "\n")
            print(expected)
    if check:
        print("%d of %d differ" % (differ, len(paths)))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
