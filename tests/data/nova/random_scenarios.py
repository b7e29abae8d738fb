#!/usr/bin/env python3
"""Writes seeded random conformance scenarios (tests/data/nova/random_<seed>.scenario.json).

Where make_scenarios.py aims one small scenario at one rule, this draws whole scenarios from
everything the reference tool's format allows, so that rules interact: random subsets and
orders of the filters and weighers with random multipliers, scheduler options, hints (same and
different host, JsonFilter queries as lists or strings, CIDR affinity, the check type), forced,
ignored and retried hosts and nodes, server groups with existing members and hosts and partial
membership of the request's own instances, aggregates with metadata and host lists, several
nodes behind one service host, tied clone hosts, and a shuffled host order.

Nova's answers come from the reference tool (oracle_batch.py or regenerate.sh).

    python3 tests/data/nova/random_scenarios.py FIRST_SEED COUNT
    python3 tests/data/nova/random_scenarios.py --nova34 FIRST_SEED COUNT   # random34_<seed>: issue 42, item 11

Standard library only; a seed always gives the same file.
"""
import copy
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

FILTERS = [
    "AllHostsFilter", "ComputeFilter", "AvailabilityZoneFilter", "ComputeCapabilitiesFilter",
    "ImagePropertiesFilter", "AggregateInstanceExtraSpecsFilter", "AggregateImagePropertiesIsolation",
    "AggregateMultiTenancyIsolation", "AggregateTypeAffinityFilter", "IsolatedHostsFilter", "JsonFilter",
    "RamFilter", "AggregateRamFilter", "CoreFilter", "AggregateCoreFilter", "DiskFilter",
    "AggregateDiskFilter", "SimpleCIDRAffinityFilter", "DifferentHostFilter", "SameHostFilter",
    "ServerGroupAntiAffinityFilter", "ServerGroupAffinityFilter", "IoOpsFilter", "AggregateIoOpsFilter",
    "NumInstancesFilter", "AggregateNumInstancesFilter", "MetricsFilter",
]
WEIGHERS = {
    "RAMWeigher": "ram_weight_multiplier", "CPUWeigher": "cpu_weight_multiplier",
    "DiskWeigher": "disk_weight_multiplier", "IoOpsWeigher": "io_ops_weight_multiplier",
    "NumInstancesWeigher": "num_instances_weight_multiplier",
    "HypervisorVersionWeigher": "hypervisor_version_weight_multiplier",
    "BuildFailureWeigher": "build_failure_weight_multiplier", "MetricsWeigher": None,
    "ServerGroupSoftAffinityWeigher": "soft_affinity_weight_multiplier",
    "ServerGroupSoftAntiAffinityWeigher": "soft_anti_affinity_weight_multiplier",
}
AZS = ["az1", "az2", "nova"]
ARCHES = [("x86_64", "qemu", "hvm"), ("aarch64", "qemu", "hvm"), ("x86_64", "xen", "xen"), ("i686", "qemu", "hvm")]
FEATURES = ["sse4.2", "avx", "avx2", "aes", "vmx"]
METRICS = ["cpu.frequency", "cpu.percent", "cpu.user.time", "numa.membw.max"]
PROJECTS = ["tenant-a", "tenant-b"]
FLAVORS = ["m1.small", "m1.big"]
EXISTING = ["e%07d-0000-4000-8000-000000000000" % k for k in range(8)]
OWN = ["00000000-0000-0000-0000-%012d" % i for i in range(8)]


def maybe(rng, p=0.5):
    return rng.random() < p


def host_entry(rng, name, i, nodename=None):
    arch = rng.choice(ARCHES)
    total_ram = rng.choice([4096, 8192, 16384])
    vcpus = rng.choice([2, 4, 8])
    disk = rng.choice([40, 80, 200])
    h = {
        "name": name,
        "total_usable_ram_mb": total_ram,
        "free_ram_mb": rng.choice([total_ram, total_ram - 1024, total_ram // 2, 2048, 1024, 512, -256]),
        "vcpus_total": vcpus, "vcpus_used": rng.randint(0, vcpus + 2),
        "total_usable_disk_gb": disk, "free_disk_mb": rng.choice([disk, disk // 2, 10, 0]) * 1024,
        "hypervisor_type": "QEMU" if arch[1] == "qemu" else "Xen",
        "hypervisor_version": rng.choice([6002000, 8002000, 9001000]),
        "host_ip": "10.0.%d.%d" % (i // 4, 1 + i % 4 + rng.choice([0, 0, 100])),
        "cpu_info": {"arch": arch[0], "features": sorted(rng.sample(FEATURES, rng.randint(0, 3))),
                     "topology": {"cores": rng.choice([2, 4]), "sockets": 1}},
        "supported_instances": [list(arch)],
        "num_instances": rng.randint(0, 6), "num_io_ops": rng.randint(0, 4),
        "failed_builds": rng.choice([0, 0, 0, 1, 3]),
        "stats": {"rack": "r%d" % rng.randint(0, 2)},
    }
    if nodename is not None:
        h["nodename"] = nodename
    for key, p in [("cpu_allocation_ratio", 0.2), ("ram_allocation_ratio", 0.2), ("disk_allocation_ratio", 0.1)]:
        if maybe(rng, p):
            h[key] = rng.choice([0.5, 1.0, 1.5, 16.0])
    if maybe(rng, 0.8):
        h["metrics"] = {m: rng.choice([0.25, 0.5, 2400, 3000]) for m in rng.sample(METRICS, rng.randint(1, 3))}
    if maybe(rng, 0.5):
        h["availability_zone"] = rng.choice(AZS)
    if maybe(rng, 0.35):
        h["instances"] = sorted(rng.sample(EXISTING, rng.randint(1, 2)))
    for key, p in [("enabled", 0.1), ("up", 0.08), ("forced_down", 0.05)]:
        if maybe(rng, p):
            h[key] = key == "forced_down"
    return h


def aggregates(rng, service_hosts):
    menu = [
        {"ssd": "true"}, {"ssd": "false", "speed": "fast"},
        {"filter_tenant_id": rng.choice(PROJECTS)}, {"filter_tenant_id": "tenant-a,tenant-c"},
        {"instance_type": rng.choice(FLAVORS)}, {"instance_type": "m1.small, m1.big"},
        {"max_io_ops_per_host": rng.choice(["1", "2", "bad"])}, {"max_instances_per_host": rng.choice(["2", "4"])},
        {"ram_allocation_ratio": rng.choice(["0.5", "1.5"])}, {"cpu_allocation_ratio": "2.0"},
        {"disk_allocation_ratio": "0.5"},
        {"ram_weight_multiplier": rng.choice(["-1.0", "2.5"])}, {"cpu_weight_multiplier": "0.5"},
        {"hw_architecture": rng.choice(["x86_64", "aarch64"])}, {"os_type": "linux"},
        {"availability_zone": rng.choice(["az1", "az3"])},
    ]
    out = []
    for k in range(rng.randint(0, 4)):
        md = {}
        for item in rng.sample(menu, rng.randint(1, 3)):
            md.update(item)
        members = sorted(rng.sample(service_hosts, rng.randint(0, min(3, len(service_hosts)))))
        out.append({"name": "agg%d" % k, "metadata": md, "hosts": members})
    return out


def extra_specs(rng):
    menu = [
        ("capabilities:cpu_info:arch", rng.choice(["x86_64", "s== aarch64"])),
        ("capabilities:cpu_info:features", rng.choice(["<in> avx", "<all-in> avx aes"])),
        ("capabilities:hypervisor_version", rng.choice([">= 8002000", "<or> 6002000 <or> 9001000"])),
        ("capabilities:stats:rack", rng.choice(["s!= r1", "r0"])),
        ("aggregate_instance_extra_specs:ssd", rng.choice(["true", "<or> true <or> false"])),
        ("speed", "<in> fast"),
        ("hw:cpu_policy", "shared"),
        # Nova raises on these two: a non-numeric host value under a numeric operator, a bare <or>.
        ("capabilities:hypervisor_type", rng.choice([">= 5", "QEMU", "QEMU"])),
        ("capabilities:stats:rack", rng.choice(["<or>", "r1", "r1"])),
    ]
    return dict(rng.sample(menu, rng.randint(0, 3)))


def query(rng):
    atoms = [[">=", "$free_ram_mb", rng.choice([1024, 4096])], ["<", "$num_io_ops", 3],
             ["=", "$stats.rack", "r0"], ["not", ["=", "$host", "s1"]], ["in", "$vcpus_total", 4, 8],
             ["=", "$hypervisor_type", "QEMU"], ["or"], ["<", 1, "$vcpus_used", 4],
             # Nova raises on these: an unknown operator, a string compared with a number.
             ["!=", 1, 2] if maybe(rng, 0.2) else ["=", 1, 1], ["<", "$stats.rack", 3] if maybe(rng, 0.2) else ["=", 1, 1]]
    q = ["and"] + rng.sample(atoms, rng.randint(1, 3)) if maybe(rng) else rng.choice(atoms)
    return json.dumps(q) if maybe(rng, 0.3) else q


def case(rng, name):
    return name.upper() if maybe(rng, 0.3) else name


def scenario(seed):
    rng = random.Random(seed)
    hosts = []
    services = []
    for s in range(rng.randint(2, 7)):
        name = "s%d" % s
        services.append(name)
        nodes = rng.choice([1, 1, 1, 2, 3])
        for n in range(nodes):
            node = None if nodes == 1 and maybe(rng, 0.8) else "%s-n%d" % (name, n)
            hosts.append(host_entry(rng, name, len(hosts), node))
    # Tied clones: the same numbers under another name.
    for k in range(rng.choice([0, 0, 1, 2])):
        clone = copy.deepcopy(rng.choice(hosts))
        clone["name"] = "c%d" % k
        clone.pop("nodename", None)
        clone.pop("instances", None)
        services.append(clone["name"])
        hosts.append(clone)
    rng.shuffle(hosts)
    # Instances are listed once; a clone or two nodes of one host must not repeat one.
    seen = set()
    for h in hosts:
        if "instances" in h:
            h["instances"] = [u for u in h["instances"] if u not in seen]
            seen.update(h["instances"])
            if not h["instances"]:
                del h["instances"]

    filters = rng.sample(FILTERS, rng.randint(1, 6))
    weighers = rng.sample(sorted(WEIGHERS), rng.randint(1, 4))
    config = {"enabled_filters": filters, "weighers": weighers}
    multipliers = {}
    for w in weighers:
        option = WEIGHERS[w]
        if option and maybe(rng, 0.5):
            multipliers[option] = rng.choice([-1.0, 0.5, 1.0, 2.0, 10.0])
            if "soft" in option:
                multipliers[option] = abs(multipliers[option])
    if multipliers:
        config["multipliers"] = multipliers
    fs = {}
    if maybe(rng, 0.3):
        fs["max_io_ops_per_host"] = rng.choice([1, 2, 8])
    if maybe(rng, 0.3):
        fs["max_instances_per_host"] = rng.choice([2, 5, 50])
    if "IsolatedHostsFilter" in filters:
        fs["isolated_hosts"] = sorted(rng.sample(services, rng.randint(0, 2)))
        fs["isolated_images"] = rng.choice([[], ["11111111-2222-3333-4444-555555555555"]])
        if maybe(rng, 0.3):
            fs["restrict_isolated_hosts_to_isolated_images"] = False
    if fs:
        config["filter_scheduler"] = fs
    if "MetricsWeigher" in weighers or "MetricsFilter" in filters:
        config["metrics"] = {"weight_setting": sorted(rng.sample(["cpu.frequency=1.0", "cpu.percent=-0.5",
                                                                  "numa.membw.max=2"], rng.randint(1, 2))),
                             "required": maybe(rng, 0.2), "weight_of_unavailable": -10000.0}

    count = rng.randint(1, 5)
    request = {"num_instances": count, "project_id": rng.choice(PROJECTS),
               "flavor": {"name": rng.choice(FLAVORS), "memory_mb": rng.choice([512, 1024, 2048]),
                          "vcpus": rng.choice([1, 2]), "root_gb": rng.choice([0, 10, 40]),
                          "extra_specs": extra_specs(rng)}}
    if maybe(rng, 0.6):
        arch = rng.choice(ARCHES)
        props = {"hw_architecture": arch[0]}
        if maybe(rng):
            props["img_hv_type"] = arch[1]
        if maybe(rng, 0.3):
            props["os_type"] = "linux"
        request["image"] = {"id": rng.choice(["11111111-2222-3333-4444-555555555555",
                                              "99999999-2222-3333-4444-555555555555"]), "properties": props}
    hints = {}
    if maybe(rng, 0.3):
        hints["same_host"] = rng.sample(EXISTING, rng.randint(1, 2))
    if maybe(rng, 0.3):
        hints["different_host"] = rng.choice(EXISTING)
    if "JsonFilter" in filters or maybe(rng, 0.1):
        hints["query"] = query(rng)
    if "SimpleCIDRAffinityFilter" in filters or maybe(rng, 0.1):
        hints["build_near_host_ip"] = "10.0.%d.1" % rng.randint(0, 2)
        hints["cidr"] = rng.choice(["/24", "/30", "/16"])
    if maybe(rng, 0.15):
        hints["_nova_check_type"] = rng.choice(["rebuild", ["rebuild"], "resize", "", []])
    if hints:
        request["scheduler_hints"] = hints
    if maybe(rng, 0.25):
        request["availability_zone"] = rng.choice(AZS)
    if maybe(rng, 0.5):
        policy = rng.choice(["affinity", "anti-affinity", "soft-affinity", "soft-anti-affinity"])
        group = {"name": "g", "policy": policy,
                 "members": sorted(rng.sample(EXISTING, rng.randint(0, 3))),
                 "hosts": sorted(rng.sample(services, rng.randint(0, 1)))}
        if maybe(rng, 0.4):
            group["add_request_instances_to_members"] = False
            group["members"] += [u for u in OWN[:count] if maybe(rng)]
        if policy == "anti-affinity" and maybe(rng, 0.3):
            group["max_server_per_host"] = rng.choice([1, 2])
        request["instance_group"] = group
    nodes = [h.get("nodename", h["name"]) for h in hosts]
    if maybe(rng, 0.2):
        request["ignore_hosts"] = [case(rng, n) for n in rng.sample(services, rng.randint(1, 2))]
    if maybe(rng, 0.15):
        request["force_hosts"] = [case(rng, n) for n in rng.sample(services, rng.randint(1, 2))]
    if maybe(rng, 0.1):
        request["force_nodes"] = rng.sample(nodes, rng.randint(1, 2))
    return {"generator": {"script": "random_scenarios.py", "seed": seed}, "config": config,
            "aggregates": aggregates(rng, services), "hosts": hosts, "request": request}


def dump(scn):
    """The scenario as JSON with one host or aggregate a line."""
    line = lambda v: json.dumps(v, sort_keys=True)
    parts = []
    for key in sorted(scn):
        value = scn[key]
        if isinstance(value, list) and value:
            items = ",\n  ".join(line(v) for v in value)
            parts.append('"%s": [\n  %s\n ]' % (key, items))
        else:
            parts.append('"%s": %s' % (key, line(value)))
    return "{\n " + ",\n ".join(parts) + "\n}\n"


def with_nova34(scn, seed):
    """Issue 42, item 11: the scenario of `seed` with what Nova 34 ships that was refused by
    name added at random places, drawn from a generator of its own so that the draw of `seed`
    is unchanged: NUMATopologyFilter and PciPassthroughFilter (requests without a NUMA topology
    or PCI request), PCIWeigher, CrossCellWeigher and ImagePropertiesWeigher with their
    multipliers (the last at 0), and NUMA memory-bandwidth metrics without a scalar value."""
    rng = random.Random("nova34-%d" % seed)
    config = scn["config"]
    for name in ["NUMATopologyFilter", "PciPassthroughFilter"]:
        if "enabled_filters" in config and maybe(rng, 0.8):
            filters = config["enabled_filters"]
            filters.insert(rng.randint(0, len(filters)), name)
    multipliers = config.setdefault("multipliers", {})
    for name, option, values in [("PCIWeigher", "pci_weight_multiplier", [0.0, 0.5, 1.0, 2.0]),
                                 ("CrossCellWeigher", "cross_cell_move_weight_multiplier", [-1.0, 1.0, 1e6]),
                                 ("ImagePropertiesWeigher", "image_props_weight_multiplier", [0.0])]:
        if "weighers" in config and maybe(rng, 0.8):
            weighers = config["weighers"]
            weighers.insert(rng.randint(0, len(weighers)), name)
            if maybe(rng):
                multipliers[option] = rng.choice(values)
    for h in scn["hosts"]:
        if maybe(rng, 0.3):
            metrics = h.get("metrics") or {}
            listed = [{"name": k, "value": v} for k, v in sorted(metrics.items())]
            listed.append({"name": "numa.membw.current", "numa_membw_values": {"0": rng.randint(0, 99)}})
            h["metrics"] = listed
    return scn


def main(argv):
    nova34 = argv[:1] == ["--nova34"]
    if nova34:
        argv = argv[1:]
    first, count = int(argv[0]), int(argv[1])
    for seed in range(first, first + count):
        name = ("random34_%04d" if nova34 else "random_%04d") % seed
        path = os.path.join(HERE, name + ".scenario.json")
        with open(path, "w") as fh:
            fh.write(dump(with_nova34(scenario(seed), seed) if nova34 else scenario(seed)))
        print(path)


if __name__ == "__main__":
    main(sys.argv[1:])
