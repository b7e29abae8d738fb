#!/usr/bin/env python3
"""Picks at most N inputs that keep the most coverage edges, from a libFuzzer merge control file.

Usage: cap_corpus.py CONTROL_FILE N
Prints the chosen input paths, one per line, and on stderr the edges kept of all covered.
Greedy maximum coverage (lazy: a stale gain is recomputed only when it reaches the top), ties
broken towards the smaller input, so the set is the same for the same control file.
"""
import heapq
import os
import sys

control, limit = sys.argv[1], int(sys.argv[2])
with open(control) as f:
    lines = f.read().split("\n")
count = int(lines[0])
paths = lines[2:2 + count]
edges = {}
for line in lines[2 + count:]:
    if line.startswith("COV "):
        _, index, *rest = line.split()
        edges[int(index)] = set(rest)
size = {i: os.path.getsize(paths[i]) for i in edges}
heap = [(-len(e), size[i], i) for i, e in edges.items()]
heapq.heapify(heap)
covered, chosen = set(), []
while heap and len(chosen) < limit:
    gain, s, i = heapq.heappop(heap)
    fresh = len(edges[i] - covered)
    if fresh == 0:
        continue
    if fresh != -gain:
        heapq.heappush(heap, (-fresh, s, i))
        continue
    covered |= edges[i]
    chosen.append(i)
total = set().union(*edges.values()) if edges else set()
for i in chosen:
    print(paths[i])
print(f"{len(chosen)} inputs keep {len(covered)} of {len(total)} edges", file=sys.stderr)
