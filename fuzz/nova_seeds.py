#!/usr/bin/env python3
"""Writes targeted seed inputs for the `nova_scenario` fuzz target: inputs that the campaigns'
mutations reach only slowly, if at all (campaign 22 in CAMPAIGN.md measures what they add).

Ten families:

  fields       one scenario that sets every field of the reader's format, then each field of each
               record (scenario, aggregate, host, request, flavor, image, server group) repeated,
               left out, or replaced by a value of every JSON kind, and an unknown key in each
               record: the reader's duplicate, type and missing-field errors, and every default.
  layouts      every prefix of that scenario in three layouts (the end of the text at each place),
               and the scenario with each kind of JSON whitespace between all its tokens.
  versions     `img_hv_requested_version` predicates: each operator against release, pre-, post-,
               dev- and local-version forms equal to, below and above the hosts' versions, pairs
               of clauses, malformed predicates, and hosts with edge-case `hypervisor_version`s.
  text         floats and other non-string values where the reader or a filter reads a value as
               text (Python's `str()`, `repr()` in messages): image properties, aggregate metadata,
               a host's CPU vendor and stats against the extra specs that ask for them.
  options      the numeric options an aggregate's metadata overrides (allocation ratios, limits,
               weight multipliers) as odd text and numbers, in metadata and in the configuration.
  conformance  the committed conformance scenarios (tests/data/nova/*.scenario.json): each aims
               at one of Nova's rules, which random mutation of other inputs seldom assembles.
  many_hosts   2 to 64 short host records whose scores rise, fall, tie, saw or scatter, under
               no weigher, one, or several, for one and several instances: the ranking's sorts
               over more hosts than the standard library's small-sort length (campaign 23 found
               them only after two hours, in a 9.8 KB scenario of 21 hosts and no weigher).
  long_maps    5 to 100 keys, in rising, falling and mixed order, in a host's stats, metrics and
               CPU features, an aggregate's metadata, the flavor's extra specs and the image's
               properties, each beside the filters and weigher that read it: maps past a B-tree
               node and the lookups in them.
  many_aggregates  1 to 33 aggregates over 2 to 12 hosts (each on all hosts, on pairs, on one),
               each overriding every option the aggregate filters and weighers read.
  many_members 0 to 64 server group members spread over 3 or 21 hosts, for every policy and 1 to
               20 instances.

Usage (from fuzz/):

    python3 nova_seeds.py OUT_DIR

then let libFuzzer keep the files that add coverage, for instance

    target-mut/x86_64-unknown-linux-gnu/release/nova_scenario -merge=1 work/nova_scenario OUT_DIR

Standard library only; the same files on every run (file names are content hashes).
"""
import copy
import glob
import hashlib
import json
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


class Obj(list):
    """A JSON object as a list of (key, value) pairs, so that a key can appear twice."""


def emit(v):
    """Compact JSON text of `v`, with `Obj` pairs written in order (repeats kept)."""
    if isinstance(v, Obj):
        return "{" + ",".join(json.dumps(k) + ":" + emit(x) for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ",".join(emit(x) for x in v) + "]"
    if isinstance(v, dict):
        return emit(Obj(v.items()))
    return json.dumps(v)


class Out:
    """The output folder; each input is written once, named by its hash."""

    def __init__(self, path):
        self.path = path
        self.count = 0
        os.makedirs(path, exist_ok=True)

    def save(self, doc):
        self.save_bytes((doc if isinstance(doc, str) else emit(doc)).encode())

    def save_bytes(self, data):
        name = os.path.join(self.path, hashlib.sha1(data).hexdigest()[:16])
        if not os.path.exists(name):
            with open(name, "wb") as fh:
                fh.write(data)
            self.count += 1


# ---- fields ----

def full_scenario():
    """A scenario with every field of every record set (the records are `Obj`s)."""
    host = Obj(dict(
        name="h0", nodename="h0", uuid="u0", total_usable_ram_mb=8192, free_ram_mb=8192, vcpus_total=16,
        vcpus_used=0, total_usable_disk_gb=200, free_disk_mb=204800, free_disk_gb=200,
        disk_available_least_gb=200, cpu_allocation_ratio=16.0, ram_allocation_ratio=1.5,
        disk_allocation_ratio=1.0, hypervisor_type="QEMU", hypervisor_version=8002000, host_ip="10.0.0.1",
        cpu_info={"arch": "x86_64", "features": ["avx"], "topology": {"cores": 4, "sockets": 1}},
        supported_instances=[["x86_64", "qemu", "hvm"]], num_instances=0, num_io_ops=0, failed_builds=0,
        stats={"rack": "r0"}, metrics={"cpu.frequency": 2000}, instances=["i1"], availability_zone="nova",
        aggregates=["a0"], enabled=True, up=True, forced_down=False, disabled_reason="x",
        trust_level="trusted", numa_topology=None, pci_device_pools=None).items())
    aggregate = Obj(dict(name="a0", metadata={"availability_zone": "nova", "cpu_allocation_ratio": "2.0"},
                         hosts=["h0"]).items())
    flavor = Obj(dict(name="m1", flavorid="1", memory_mb=512, vcpus=1, root_gb=1, ephemeral_gb=0, swap=0,
                      extra_specs={"hw:cpu_policy": "shared", "capabilities:hypervisor_type": "QEMU"}).items())
    image = Obj(dict(id="img", properties={"hw_architecture": "x86_64", "img_hv_type": "qemu",
                                           "img_hv_requested_version": ">=8.0"}).items())
    group = Obj(dict(uuid="g", name="g", policy="anti-affinity", hosts=[], members=[], max_server_per_host=1,
                     add_request_instances_to_members=True).items())
    request = Obj(dict(
        num_instances=1, instance_uuids=["x"], project_id="p", user_id="u", flavor=flavor, image=image,
        image_props={"hw_vm_mode": "hvm"}, scheduler_hints={"group": "g"}, availability_zone="nova",
        instance_group=group, ignore_hosts=[], force_hosts=[], force_nodes=[], retry_hosts=[],
        requested_destination=None, numa_topology=None, pci_requests=None).items())
    config = {"enabled_filters": ["AvailabilityZoneFilter", "ComputeFilter", "ImagePropertiesFilter",
                                  "ComputeCapabilitiesFilter", "AggregateInstanceExtraSpecsFilter",
                                  "ServerGroupAntiAffinityFilter"],
              "weighers": ["RAMWeigher"]}
    return Obj(dict(generator=None, config=config, aggregates=[aggregate], hosts=[host], request=request).items())


def records(doc):
    """The records of a `full_scenario` document, in a fixed order."""
    top = dict(doc)
    request = dict(top["request"])
    return [doc, top["aggregates"][0], top["hosts"][0], top["request"], request["flavor"], request["image"],
            request["instance_group"]]


# One value of every JSON kind, and numbers at the edges of the reader's integer types.
KINDS = [None, True, False, 0, -1, 1, 1.5, -1.5, 4294967296, 9223372036854775808, -9223372036854775809,
         "s", "", [], ["a"], [1], Obj(), Obj([("a", 1)])]


def fields(out):
    """Each field of each record repeated, left out or retyped; an unknown key in each record."""
    base = full_scenario()
    out.save(base)
    for r, record in enumerate(records(base)):
        for f in range(len(record)):
            for change in ["repeat", "drop"] + KINDS:
                doc = copy.deepcopy(base)
                target = records(doc)[r]
                key, value = target[f]
                if change == "repeat":
                    target.append((key, copy.deepcopy(value)))
                elif change == "drop":
                    del target[f]
                else:
                    target[f] = (key, copy.deepcopy(change))
                out.save(doc)
        doc = copy.deepcopy(base)
        records(doc)[r].append(("unknown_key", 1))
        out.save(doc)


def spaced_out(text, space):
    """`text` (compact JSON) with `space` before and after every structural character outside
    strings, and around the whole."""
    out, in_string, escaped = [], False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            out.append(ch)
        elif ch == '"':
            in_string = True
            out.append(ch)
        else:
            out.append(space + ch + space if ch in "{}[]:," else ch)
    return space + "".join(out) + space


def layouts(out):
    """Every prefix of the full scenario, compact, indented, and with spaces before colons and
    commas (the reader meets the end of the text at each place in each record); and the whole
    scenario with each of JSON's four whitespace characters around every structural one."""
    compact = emit(full_scenario())
    indented = json.dumps(json.loads(compact), indent=1)
    spaced = indented.replace('": ', '" : ').replace(",\n", " ,\n")
    for text in (compact, indented, spaced):
        for end in range(len(text)):
            out.save(text[:end])
    for space in " \t\n\r":
        out.save(spaced_out(compact, space))


# ---- versions and text ----

FILTERS = ["ImagePropertiesFilter", "AggregateImagePropertiesIsolation", "ComputeCapabilitiesFilter",
           "TrustedFilter", "AggregateInstanceExtraSpecsFilter"]


def scenario(props, versions=(8002000, 8003000, 9000000), extra_specs=None, metadata=None, capability="Intel"):
    """Hosts with three supported-instance triples, the given `hypervisor_version`s and
    `capability` as their CPU vendor and a stat; a request with the given image properties and
    extra specs; an aggregate with `metadata` on the first host."""
    hosts = [{"name": f"h{i}", "total_usable_ram_mb": 8192, "free_ram_mb": 8192, "vcpus_total": 16,
              "vcpus_used": 0, "free_disk_mb": 204800, "hypervisor_type": "QEMU", "hypervisor_version": v,
              "host_ip": f"10.0.0.{i + 1}",
              "supported_instances": [["x86_64", "qemu", "hvm"], ["i686", "kvm", "hvm"], ["aarch64", "qemu", "exe"]],
              "cpu_info": {"arch": "x86_64", "features": ["avx"], "vendor": capability},
              "stats": {"rack": f"r{i % 2}", "vendor": capability}, "trust_level": "trusted"}
             for i, v in enumerate(versions)]
    return {"config": {"enabled_filters": FILTERS, "weighers": ["RAMWeigher"]},
            "aggregates": [] if metadata is None else [{"name": "a0", "metadata": metadata, "hosts": ["h0"]}],
            "hosts": hosts,
            "request": {"flavor": {"memory_mb": 512, "vcpus": 1, "extra_specs": extra_specs or {}},
                        "image": {"properties": props}}}


OPERATORS = ["<", "<=", "==", "!=", ">=", ">"]
RELEASES = ["8.2", "8.2.0", "8.1", "8.3", "9", "8", "1!8.2", "0!8.2", "8.2.0.0", "7.999", "8.2.1", "10"]
SUFFIXES = ["", "a1", "b", "rc2", "c", "alpha", "beta3", "preview", "pre1", ".post1", "-1", "rev", "r2", ".dev",
            ".dev3", "a1.dev2", ".post1.dev1", "+local", "+1.a", "+abc.5", "+5.abc", "+ubuntu-1_2", "a1.post2",
            "rc1+x", ".post2+7", "-1.dev0", "_pre_3", ".rc.5", "ALPHA1", "RC", "Post", "DEV"]
MALFORMED = ["", " ", ">=", ">= ", "8.2", "=>8.2", ">=8 .2", ">=8.2,", ",>=8.2", ">=v8.2", ">= v8.2",
             ">=  8.2 ", ">=340282366920938463463374607431768211456", ">=1!2!3", ">=8.2+", ">=8.2+a..b",
             ">=8.2.", ">=.8", ">=8.2a1b2", ">=8.2-", ">=8.2--1", "<8.2,>", "== 8.2.*", "~=8.2", "===8.2",
             ">=8.2 ;", ">=\u00a08.2", ">=8.2\u2003", ">=\u0668.2", ">=1e3", ">=0x10", ">=1_0"]
HOST_VERSIONS = [0, 1, 999, 1000, 1000000, 1001001, -1, -8002000, 8002000.5, 0.5, 9e18, 9.1e18, 1e19, 1.8e19,
                 4294967296, 9223372036854775807, 18446744073709551615, 1e300, 1e-300, 5e-324]


def versions(out):
    """Version predicates against hosts at 8.2.0, 8.3.0 and 9.0.0, and odd host versions."""
    for release in RELEASES:
        for suffix in SUFFIXES:
            for op in OPERATORS:
                out.save(scenario({"hw_architecture": "x86_64", "img_hv_requested_version": f"{op}{release}{suffix}"}))
    for first in OPERATORS:
        for second in OPERATORS:
            out.save(scenario({"hw_architecture": "x86_64", "img_hv_requested_version": f"{first}8.1, {second} 9.0"}))
    for text in MALFORMED:
        out.save(scenario({"hw_architecture": "x86_64", "img_hv_requested_version": text}))
    for version in HOST_VERSIONS:
        for predicate in [">=8.2", "<8", "==0", "!=1", ">0", "<=1000000.0.0"]:
            out.save(scenario({"hw_architecture": "x86_64", "img_hv_requested_version": predicate},
                              versions=(version, 8002000)))


def floats(count, rng):
    """Fixed floats at the edges of Python's repr() layout, then random ones of three shapes:
    any bit pattern, decimal mantissa times a power of ten, a short binary fraction times a power of two."""
    out = [0.0, -0.0, 1.0, -1.0, 0.0001, 0.00001, 1e15, 1e16, 1e17, 9999999999999998.0, 123.5, 1e300, 5e-324,
           2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1 / 3, 2 / 3, 100.0, 1e22, 1e23, 4.35,
           9007199254740993.0, 0.30000000000000004]
    while len(out) < count:
        shape = rng.random()
        if shape < 0.4:
            f = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        elif shape < 0.7:
            f = rng.choice([1, -1]) * rng.randint(1, 10 ** rng.randint(1, 20)) * 10.0 ** rng.randint(-30, 30)
        else:
            f = rng.choice([0.5, 1.5, 2.5, 0.1, 0.2, 0.3]) * 2.0 ** rng.randint(-1074, 1023)
        if f == f and abs(f) != float("inf"):
            out.append(f)
    return out


PROPERTIES = ["hw_architecture", "img_hv_type", "hw_vm_mode", "hw_maxphysaddr_bits", "img_hv_requested_version"]
SCALARS = [True, False, None, [], ["x86_64"], [0], [None], {}, {"a": 1}, {"": 0}, 0, 1, -1, 0.0, -0.0, 10 ** 20, "",
           " ", "0", "False", "[]", "X86_64", "x86-64", "amd64", "i386", "xapi", "pv", "hv", "baremetal", "HVM",
           "\u00a0x86_64", "x86_64\u2003", "hvm\n", "\u00e9t\u00e9", "\u0000", "\ud83d\ude00"]


def text(out):
    """Floats and other values where a value is read as text or for its truth."""
    rng = random.Random(22)
    for i, f in enumerate(floats(1500, rng)):
        # AggregateImagePropertiesIsolation reads a custom image property as text; the reader
        # refuses a number for the properties ImagePropertiesFilter reads (its message quotes it).
        key = PROPERTIES[i % len(PROPERTIES)]
        out.save(scenario({key: f, "os_distro": f}, metadata={"os_distro": repr(f)} if i % 3 else {}))
        # ComputeCapabilitiesFilter reads a host's capability as text.
        spec = rng.choice(["Intel", repr(f), "s== " + repr(f), ">= 1", "<in> 1"])
        out.save(scenario({}, extra_specs={"capabilities:cpu_info:vendor": spec, "vendor": spec}, capability=f))
    for value in SCALARS:
        for key in PROPERTIES + ["os_distro"]:
            out.save(scenario({key: value}))
            out.save(scenario({key: value}, metadata={key: value}))
        out.save(scenario({}, extra_specs={"capabilities:cpu_info:vendor": "Intel", "vendor": "x"}, capability=value))


# ---- options ----

# The numeric options an aggregate's metadata can override.
OPTIONS = ["build_failure_weight_multiplier", "cpu_allocation_ratio", "cpu_weight_multiplier",
           "disk_allocation_ratio", "disk_weight_multiplier", "hypervisor_version_weight_multiplier",
           "io_ops_weight_multiplier", "max_instances_per_host", "max_io_ops_per_host", "metrics_weight_multiplier",
           "num_instances_weight_multiplier", "ram_allocation_ratio", "ram_weight_multiplier",
           "soft_affinity_weight_multiplier", "soft_anti_affinity_weight_multiplier"]
OPTION_VALUES = ["inf", "-inf", "nan", "1e309", "-1e309", "x", "", " 2 ", "1_0", "0x10", "\u0661", "2.5", "-1", "0",
                 "1e-320", "Infinity", "+3", "3.", ".5", "1e400", 2, 2.5, -3, 0, 1e308, True, None, [], {}]


def options(out):
    """Each option as an aggregate's metadata (alone, and beside a second aggregate's value on a
    shared host) and, when not text, in the configuration, with every aggregate filter and weigher."""
    filters = ["AggregateRamFilter", "AggregateCoreFilter", "AggregateDiskFilter", "AggregateIoOpsFilter",
               "AggregateNumInstancesFilter", "RamFilter", "CoreFilter", "DiskFilter", "IoOpsFilter",
               "NumInstancesFilter"]
    weighers = ["RAMWeigher", "CPUWeigher", "DiskWeigher", "IoOpsWeigher", "NumInstancesWeigher",
                "HypervisorVersionWeigher", "BuildFailureWeigher", "MetricsWeigher",
                "ServerGroupSoftAffinityWeigher", "ServerGroupSoftAntiAffinityWeigher"]

    def doc(first, second, config):
        hosts = [{"name": f"h{i}", "total_usable_ram_mb": 8192, "free_ram_mb": 4096 + 1024 * i, "vcpus_total": 8,
                  "vcpus_used": i, "total_usable_disk_gb": 100, "free_disk_mb": 51200, "num_io_ops": i,
                  "num_instances": i, "failed_builds": i % 2, "hypervisor_version": 8002000 + i * 1000,
                  "metrics": {"cpu.frequency": 2000 + i}} for i in range(3)]
        return {"config": dict({"enabled_filters": filters, "weighers": weighers,
                                "metrics": {"weight_setting": "cpu.frequency=1.0"}}, **config),
                "aggregates": [{"name": "a1", "metadata": first, "hosts": ["h0", "h1"]},
                               {"name": "a2", "metadata": second, "hosts": ["h1"]}],
                "hosts": hosts,
                "request": {"flavor": {"memory_mb": 512, "vcpus": 1, "root_gb": 1},
                            "instance_group": {"policy": "soft-anti-affinity", "members": []}}}

    for key in OPTIONS:
        for value in OPTION_VALUES:
            out.save(doc({key: value}, {}, {}))
            out.save(doc({key: value}, {key: "1.5"}, {}))
            if not isinstance(value, str):
                out.save(doc({}, {}, {key: value}))


def conformance(out):
    """The committed conformance scenarios, byte for byte."""
    for path in sorted(glob.glob(os.path.join(HERE, "..", "tests", "data", "nova", "*.scenario.json"))):
        with open(path, "rb") as fh:
            out.save_bytes(fh.read())


def many_hosts(out):
    """Scenarios of many short hosts, each ranking order shape under each weigher set."""
    rng = random.Random(23)
    weigher_sets = [[], ["RAMWeigher"], ["RAMWeigher", "CPUWeigher", "DiskWeigher"],
                    ["IoOpsWeigher", "NumInstancesWeigher", "BuildFailureWeigher", "HypervisorVersionWeigher"]]
    shapes = {
        "rising": lambda i, n: i,
        "falling": lambda i, n: n - i,
        "tied": lambda i, n: 0,
        "saw": lambda i, n: i % 5,
        "two": lambda i, n: i % 2,
        "scattered": lambda i, n: rng.randrange(n),
    }
    for n in [2, 3, 4, 5, 8, 9, 16, 17, 19, 20, 21, 22, 24, 31, 32, 33, 40, 48, 64]:
        for shape, level in shapes.items():
            levels = [level(i, n) for i in range(n)]
            hosts = [{"name": f"h{i}", "total_usable_ram_mb": 65536, "free_ram_mb": 1024 + 512 * v, "vcpus_total": 64,
                      "vcpus_used": v % 64, "free_disk_mb": 10240 * (v + 1), "num_io_ops": v % 8,
                      "num_instances": v % 16, "failed_builds": v % 3, "hypervisor_version": 8000000 + v}
                     for i, v in enumerate(levels)]
            # The saw's hosts also meet filters, so some drop out between instances.
            filters = ["ComputeFilter", "RamFilter"] if shape == "saw" else ["AllHostsFilter"]
            for weighers in weigher_sets:
                for count in (1, 4):
                    for subset in (1, 2):
                        out.save({"config": {"enabled_filters": filters, "weighers": weighers,
                                             "filter_scheduler": {"host_subset_size": subset}},
                                  "hosts": hosts,
                                  "request": {"num_instances": count,
                                              "flavor": {"memory_mb": 1024, "vcpus": 1, "root_gb": 1}}})


def long_maps(out):
    """One long map per scenario, in each place a filter or weigher reads keys from."""
    def doc(n, where, order):
        keys = [f"k{i:02d}" for i in range(n)]
        if order == "falling":
            keys.reverse()
        elif order == "mixed":
            keys = keys[1::2] + keys[0::2]
        values = {k: str(i) for i, k in enumerate(keys)}
        hosts = [{"name": f"h{i}", "total_usable_ram_mb": 8192, "free_ram_mb": 8192, "vcpus_total": 8,
                  "vcpus_used": 0, "free_disk_mb": 102400} for i in range(2)]
        flavor = {"memory_mb": 512, "vcpus": 1, "extra_specs": {}}
        aggregate = {"name": "a0", "hosts": ["h0"], "metadata": {}}
        properties = {}
        if where == "stats":
            hosts[0]["stats"] = values
        elif where == "metrics":
            hosts[0]["metrics"] = {k: float(i) for i, k in enumerate(keys)}
        elif where == "cpu_info":
            hosts[0]["cpu_info"] = {"arch": "x86_64", "features": keys}
        elif where == "metadata":
            aggregate["metadata"] = values
        elif where == "extra_specs":
            flavor["extra_specs"] = {f"aggregate_instance_extra_specs:{k}": v for k, v in values.items()}
        elif where == "capabilities":
            flavor["extra_specs"] = {f"capabilities:stats:{k}": v for k, v in values.items()}
            hosts[0]["stats"] = values
        else:
            properties = values
        return {"config": {"enabled_filters": ["ComputeCapabilitiesFilter", "AggregateInstanceExtraSpecsFilter",
                                               "ImagePropertiesFilter", "AggregateImagePropertiesIsolation",
                                               "MetricsFilter"],
                           "weighers": ["MetricsWeigher"], "metrics": {"weight_setting": "k00=1.0"}},
                "aggregates": [aggregate], "hosts": hosts,
                "request": {"flavor": flavor, "image": {"properties": properties}}}

    for n in [5, 11, 12, 13, 23, 24, 25, 40, 60, 100]:
        for where in ["stats", "metrics", "metadata", "extra_specs", "capabilities", "properties", "cpu_info"]:
            for order in ["rising", "falling", "mixed"]:
                out.save(doc(n, where, order))


AGGREGATE_FILTERS = ["AggregateRamFilter", "AggregateCoreFilter", "AggregateDiskFilter", "AggregateIoOpsFilter",
                     "AggregateNumInstancesFilter", "AggregateInstanceExtraSpecsFilter",
                     "AggregateImagePropertiesIsolation", "AggregateTypeAffinityFilter",
                     "AggregateMultiTenancyIsolation", "AvailabilityZoneFilter"]


def small_hosts(n):
    """`n` short host records whose free memory, vCPUs, I/O and instance counts differ."""
    return [{"name": f"h{i}", "total_usable_ram_mb": 8192, "free_ram_mb": 8192 - 256 * i, "vcpus_total": 8,
             "vcpus_used": i % 8, "free_disk_mb": 102400, "num_io_ops": i % 4, "num_instances": i % 6}
            for i in range(n)]


def many_aggregates(out):
    """Many aggregates, each overriding every option the aggregate filters and weighers read."""
    for n_aggregates in [1, 2, 3, 5, 8, 9, 16, 17, 24, 33]:
        for n_hosts in [2, 5, 12]:
            for overlap in ("all", "pairs", "one"):
                aggregates = []
                for a in range(n_aggregates):
                    if overlap == "all":
                        members = [f"h{i}" for i in range(n_hosts)]
                    elif overlap == "pairs":
                        members = [f"h{a % n_hosts}", f"h{(a + 1) % n_hosts}"]
                    else:
                        members = [f"h{a % n_hosts}"]
                    metadata = {"cpu_allocation_ratio": str(1 + a % 4), "ram_allocation_ratio": str(1.0 + a / 10),
                                "disk_allocation_ratio": "1.5", "max_io_ops_per_host": str(2 + a % 3),
                                "max_instances_per_host": str(3 + a % 5), "availability_zone": f"az{a % 3}",
                                "instance_type": "m1", "filter_tenant_id": f"p{a % 2}", "k": str(a),
                                "ram_weight_multiplier": str(a % 3 - 1), "cpu_weight_multiplier": str(a % 2)}
                    aggregates.append({"name": f"a{a}", "hosts": members, "metadata": metadata})
                for weighers in ([], ["RAMWeigher", "CPUWeigher", "IoOpsWeigher", "NumInstancesWeigher"]):
                    flavor = {"name": "m1", "memory_mb": 512, "vcpus": 1, "root_gb": 1,
                              "extra_specs": {"aggregate_instance_extra_specs:k": "3"}}
                    out.save({"config": {"enabled_filters": AGGREGATE_FILTERS, "weighers": weighers},
                              "aggregates": aggregates, "hosts": small_hosts(n_hosts),
                              "request": {"num_instances": 2, "project_id": "p0", "availability_zone": "az1",
                                          "flavor": flavor}})


def many_members(out):
    """Server groups of many members spread over the hosts, for every policy and several instances."""
    for policy in ["affinity", "anti-affinity", "soft-affinity", "soft-anti-affinity"]:
        for n_members in [0, 1, 7, 8, 9, 16, 17, 33, 64]:
            for n_hosts in [3, 21]:
                hosts = small_hosts(n_hosts)
                for i, host in enumerate(hosts):
                    host["instances"] = [f"m{j}" for j in range(n_members) if j % n_hosts == i]
                group = {"policy": policy, "members": [f"m{j}" for j in range(n_members)],
                         "hosts": [f"h{j % n_hosts}" for j in range(min(n_members, n_hosts))]}
                for count in [1, 2, 5, 9, 20]:
                    out.save({"config": {"enabled_filters": ["ServerGroupAffinityFilter",
                                                             "ServerGroupAntiAffinityFilter", "RamFilter"],
                                         "weighers": ["ServerGroupSoftAffinityWeigher",
                                                      "ServerGroupSoftAntiAffinityWeigher"]},
                              "hosts": hosts,
                              "request": {"num_instances": count, "instance_uuids": [f"n{k}" for k in range(count)],
                                          "flavor": {"memory_mb": 256, "vcpus": 1}, "instance_group": group}})


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Out(sys.argv[1])
    for family in (fields, layouts, versions, text, options, conformance, many_hosts, long_maps,
                   many_aggregates, many_members):
        before = out.count
        family(out)
        print(f"{family.__name__}: {out.count - before} files")


if __name__ == "__main__":
    main()
