#!/usr/bin/env python3
"""Which source files the edges a corpus covers belong to, and how that grew over a campaign.

libFuzzer's `cov:` counts every instrumented edge of the binary. With `ours-only-rustc` the
dependencies are built without instrumentation, but their generic code (serde_json's parser
instantiated for our types, hashbrown's probing for our maps, core's iterators) is compiled
inside our crate and counted as ours. This script splits the covered edges by the source file
each one was compiled from:

  ours        src/ and fuzz/fuzz_targets/ (placewise and the targets)
  serde_json, serde, hashbrown, ... another crate's generic code instantiated in ours
  std         the standard library's generic code (core, alloc, std)

How: the binary's `__sancov_pcs` table lists every edge's address (as relocations, since the
binary is position-independent); libFuzzer's merge (`-merge=1 -merge_control_file=F`) writes
which table entries each input covers (`COV` lines); `llvm-symbolizer` names each address's
innermost source file.

Usage (from fuzz/):
  python3 edges_by_source.py BIN CORPUS_DIR [TIME ...]
TIME is a `date -d` text (UTC); for each one, the edges covered by the corpus files whose
modification time is at or before it (libFuzzer writes a file once; a file it later replaced
by a smaller one with the same features is gone, so early counts are at most the truth).
Without a TIME: the whole corpus.
"""
import collections
import os
import re
import subprocess
import sys
import tempfile


def pc_table(binary):
    """Edge index -> address, from the `__sancov_pcs` section's RELATIVE relocations."""
    sections = subprocess.run(["readelf", "-S", "-W", binary], capture_output=True, text=True, check=True).stdout
    m = re.search(r"__sancov_pcs\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", sections)
    if not m:
        sys.exit(f"{binary}: no __sancov_pcs section (not a libFuzzer build?)")
    start, size = int(m.group(1), 16), int(m.group(2), 16)
    pcs = {}
    relocs = subprocess.run(["readelf", "-r", "-W", binary], capture_output=True, text=True, check=True).stdout
    for line in relocs.splitlines():
        f = line.split()
        if len(f) >= 4 and f[2] == "R_X86_64_RELATIVE":
            off = int(f[0], 16)
            # Each entry is (address, flags), 16 bytes; the address is the relocated word.
            if start <= off < start + size and (off - start) % 16 == 0:
                pcs[(off - start) // 16] = int(f[3], 16)
    return pcs


def origin(path):
    """The crate (or `ours`, `std`) a source path belongs to."""
    if "/.cargo/registry/" in path or "/.cargo/git/" in path:
        m = re.search(r"/src/[^/]+/([^/]+?)-\d[^/]*/", path)
        return m.group(1) if m else "dependency"
    if path.startswith("/rustc/") or "/lib/rustlib/src/" in path:
        return "std"
    m = re.search(r"/rust/deps/([^/]+?)-\d[^/]*/", path)
    if m:
        return m.group(1)
    if "/src/" in path or "/fuzz_targets/" in path:
        return "ours"
    return "unknown"


def origins(binary, pcs):
    """Edge index -> origin, through llvm-symbolizer: the innermost inlined frame that is not the
    standard library's (core's iterators and `Option` methods inlined into our function are our
    function's branches; hashbrown inlined through std's `HashMap` is hashbrown's)."""
    order = sorted(pcs)
    text = "\n".join(hex(pcs[i]) for i in order) + "\n"
    out = subprocess.run(["llvm-symbolizer", f"--obj={binary}", "--functions=none", "--inlining=true"],
                         input=text, capture_output=True, text=True, check=True).stdout
    # One block per address, blocks separated by an empty line, the innermost frame first.
    blocks = [b for b in out.split("\n\n") if b.strip()]
    if len(blocks) != len(order):
        sys.exit(f"llvm-symbolizer answered {len(blocks)} blocks for {len(order)} addresses")

    def decide(block):
        frames = [origin(line) for line in block.strip().splitlines()]
        return next((f for f in frames if f != "std"), "std")

    return {i: decide(b) for i, b in zip(order, blocks)}


def covered(binary, files):
    """The edge indices the given corpus files cover, from one merge run."""
    with tempfile.TemporaryDirectory() as tmp:
        inputs = os.path.join(tmp, "in")
        os.mkdir(inputs)
        for f in files:
            try:
                os.link(f, os.path.join(inputs, os.path.basename(f)))
            except FileNotFoundError:
                pass
        out = os.path.join(tmp, "out")
        os.mkdir(out)
        control = os.path.join(tmp, "control")
        subprocess.run([binary, "-merge=1", f"-merge_control_file={control}", "-rss_limit_mb=2048",
                        "-max_len=16384", "-timeout=600", out, inputs],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        edges = set()
        with open(control) as c:
            for line in c:
                if line.startswith("COV "):
                    edges.update(int(x) for x in line.split()[2:])
        return edges


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, corpus, times = sys.argv[1], sys.argv[2], sys.argv[3:]
    # A running fuzzer replaces files: read each file's time once, and skip any that vanish.
    files = {}
    for name in os.listdir(corpus):
        try:
            files[os.path.join(corpus, name)] = os.stat(os.path.join(corpus, name)).st_mtime
        except FileNotFoundError:
            pass
    pcs = pc_table(binary)
    where = origins(binary, pcs)
    cuts = [(t, int(subprocess.run(["date", "-u", "-d", t, "+%s"], capture_output=True, text=True,
                                   check=True).stdout)) for t in times] or [("all", None)]
    kinds = None
    for label, cut in cuts:
        chosen = [f for f, mtime in files.items() if cut is None or mtime <= cut]
        counts = collections.Counter(where.get(e, "unknown") for e in covered(binary, chosen))
        if kinds is None:
            kinds = [k for k, _ in counts.most_common()]
            print("files\t" + "\t".join(kinds) + "\tall\ttime")
        print(f"{len(chosen)}\t" + "\t".join(str(counts.get(k, 0)) for k in kinds)
              + f"\t{sum(counts.values())}\t{label}", flush=True)


if __name__ == "__main__":
    main()
