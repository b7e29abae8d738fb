#!/usr/bin/env python3
"""Writes the hand-made conformance scenarios (tests/data/nova/*.scenario.json).

Each scenario is small and aims at one rule: an extra-spec operator, a JsonFilter quirk, a
filter, a weigher, a tie, a forced host, an error Nova raises. The expected answers come from
Nova itself: run regenerate.sh afterwards. Standard library only; the output is deterministic.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def host(i, **kw):
    h = {
        "name": "h%d" % i,
        "total_usable_ram_mb": 16384, "free_ram_mb": 16384 - 1024 * (i % 4),
        "vcpus_total": 16, "vcpus_used": i % 5,
        "total_usable_disk_gb": 200, "free_disk_mb": (200 - 10 * (i % 3)) * 1024,
        "hypervisor_type": "QEMU", "hypervisor_version": 8002000 + 1000 * (i % 3),
        "host_ip": "10.0.%d.%d" % (i // 4, i % 4 + 1),
        "cpu_info": {"arch": "x86_64", "features": ["avx", "avx2"] if i % 2 else ["sse4.2"],
                     "topology": {"cores": 4 + i % 3, "sockets": 1}},
        "supported_instances": [["x86_64", "qemu", "hvm"]],
        "num_instances": i % 4, "num_io_ops": i % 3, "failed_builds": 1 if i == 2 else 0,
        "stats": {"rack": "r%d" % (i % 2), "n": str(i)},
        "metrics": {"cpu.frequency": 2000 + 100 * i, "cpu.percent": 0.25 + 0.1 * i},
    }
    h.update(kw)
    return h


def scenario(name, filters, weighers=("RAMWeigher",), hosts=None, request=None, config=None,
             aggregates=None, sort_keys=True):
    cfg = {"enabled_filters": list(filters or ()), "weighers": list(weighers or ())}
    cfg.update(config or {})
    # None leaves the key out (Nova's default filters; the tool refuses a missing weigher list).
    if filters is None:
        del cfg["enabled_filters"]
    if weighers is None:
        del cfg["weighers"]
    req = {"num_instances": 1, "project_id": "tenant-a",
           "flavor": {"name": "m1.small", "memory_mb": 2048, "vcpus": 1, "root_gb": 10}}
    req.update(request or {})
    scn = {"config": cfg, "aggregates": aggregates or [],
           "hosts": hosts if hosts is not None else [host(i) for i in range(6)], "request": req}
    with open(os.path.join(HERE, name + ".scenario.json"), "w") as fh:
        # Unsorted where the order written is what the scenario is about (extra specs).
        json.dump(scn, fh, indent=1, sort_keys=sort_keys)
        fh.write("\n")


def flavor(**extra_specs):
    return {"name": "m1.small", "memory_mb": 2048, "vcpus": 1, "root_gb": 10, "extra_specs": extra_specs}


def main():
    # Extra-spec operators through ComputeCapabilitiesFilter, one scenario each.
    ops = {
        "eq_at_least": {"capabilities:hypervisor_version": "= 8003000"},
        "num_eq": {"capabilities:hypervisor_version": "== 8002000.0"},
        "num_ne": {"capabilities:hypervisor_version": "!= 8002000"},
        "num_ge": {"vcpus_total": ">= 16", "capabilities:cpu_info:topology:cores": ">= 5"},
        "num_le": {"capabilities:cpu_info:topology:cores": "<= 5"},
        "str_eq": {"capabilities:cpu_info:arch": "s== x86_64"},
        "str_ne": {"capabilities:stats:rack": "s!= r1"},
        "str_order": {"capabilities:stats:n": "s< 3", "capabilities:rack": "s>= r0"},
        "str_gt_le": {"capabilities:stats:n": "s> 1", "capabilities:hypervisor_type": "s<= QEMU"},
        "substring": {"capabilities:cpu_info:features": "<in> avx"},
        "all_in": {"capabilities:cpu_info:features": "<all-in> avx2 avx"},
        "or": {"capabilities:stats:n": "<or> 1 <or> 4 <or> 5"},
        "or_skips_words": {"capabilities:stats:n": "<or> 0 zz 3"},
        "no_operator": {"capabilities:cpu_info:arch": "x86_64", "free_ram_mb": "16384"},
        "extra_words": {"capabilities:hypervisor_version": "= 8003000 99"},
        "unscoped_ignored": {"hw:cpu_policy": "dedicated", "trust:trusted_host": "trusted"},
    }
    for key, specs in ops.items():
        scenario("caps_" + key, ["ComputeFilter", "ComputeCapabilitiesFilter"],
                 request={"flavor": flavor(**specs), "num_instances": 2})
    # Nova raises: a non-numeric host value under a numeric operator, and a bare <or>.
    scenario("caps_error_non_numeric", ["ComputeCapabilitiesFilter"],
             request={"flavor": flavor(**{"capabilities:hypervisor_type": ">= 5"})})
    scenario("caps_error_bare_or", ["ComputeCapabilitiesFilter"],
             request={"flavor": flavor(**{"capabilities:hypervisor_type": "<or>"})})

    # Aggregate extra specs and the other aggregate filters.
    aggs = [
        {"name": "ssd", "metadata": {"ssd": "true", "speed": "fast, faster"}, "hosts": ["h1", "h2"]},
        {"name": "gold", "metadata": {"filter_tenant_id": "tenant-a", "instance_type": "m1.small, m1.big"},
         "hosts": ["h2", "h3"]},
        {"name": "io", "metadata": {"max_io_ops_per_host": "1", "max_instances_per_host": "2",
                                    "ram_weight_multiplier": "-1.0", "cpu_allocation_ratio": "2.0",
                                    "ram_allocation_ratio": "0.5", "disk_allocation_ratio": "0.5"},
         "hosts": ["h4", "h5"]},
        {"name": "io2", "metadata": {"max_io_ops_per_host": "bad", "ram_weight_multiplier": "5"}, "hosts": ["h5"]},
        {"name": "img", "metadata": {"hw_architecture": "x86_64", "os_type": "linux"}, "hosts": ["h0"]},
    ]
    scenario("agg_extra_specs", ["AggregateInstanceExtraSpecsFilter"], aggregates=aggs,
             request={"flavor": flavor(**{"aggregate_instance_extra_specs:ssd": "true", "speed": "<in> fast"})})
    scenario("agg_tenant_type", ["AggregateMultiTenancyIsolation", "AggregateTypeAffinityFilter"],
             aggregates=aggs, request={"project_id": "tenant-b", "num_instances": 3})
    scenario("agg_io_instances", ["AggregateIoOpsFilter", "AggregateNumInstancesFilter"], aggregates=aggs,
             request={"num_instances": 8})
    scenario("io_num_instances", ["IoOpsFilter", "NumInstancesFilter"],
             config={"filter_scheduler": {"max_io_ops_per_host": 2, "max_instances_per_host": 3}},
             request={"num_instances": 6})
    scenario("agg_image_isolation", ["AggregateImagePropertiesIsolation"], aggregates=aggs,
             request={"image": {"properties": {"hw_architecture": "aarch64", "os_type": "linux"}}})
    scenario("agg_capacity", ["AggregateRamFilter", "AggregateCoreFilter", "AggregateDiskFilter"],
             aggregates=aggs, request={"num_instances": 12,
                                       "flavor": {"name": "m1.big", "memory_mb": 4096, "vcpus": 8, "root_gb": 40}})
    scenario("capacity_legacy", ["RamFilter", "CoreFilter", "DiskFilter"],
             request={"num_instances": 20, "flavor": {"name": "m1.big", "memory_mb": 4096, "vcpus": 8,
                                                      "root_gb": 40, "swap": 512}})
    scenario("az_filter", ["AvailabilityZoneFilter"],
             hosts=[host(0, availability_zone="az1"), host(1), host(2, availability_zone="az2"), host(3)],
             request={"availability_zone": "nova", "num_instances": 3})

    # JsonFilter quirks.
    queries = {
        "and_ge": ["and", [">=", "$free_ram_mb", 14000], ["<", "$num_io_ops", 2]],
        "not_top": ["not", ["=", "$stats.rack", "r0"]],
        "not_inside_and": ["and", ["not", ["=", "$stats.rack", "r0"]]],
        "dropped_var": [">=", "$nosuch", 1],
        "in_numbers": ["in", "$vcpus_used", 1, 3.0],
        "chain_lt": ["<", 1, "$vcpus_used", 4],
        "str_vs_int_eq": ["=", "$stats.n", 3],
        "or_empty": ["or"],
    }
    for key, q in queries.items():
        scenario("json_" + key, ["JsonFilter"], request={"scheduler_hints": {"query": q}, "num_instances": 2})
    scenario("json_error_unknown_op", ["JsonFilter"], request={"scheduler_hints": {"query": ["!=", 1, 2]}})
    scenario("json_error_str_lt_int", ["JsonFilter"],
             request={"scheduler_hints": {"query": ["<", "$stats.n", 3]}})

    # Image properties, isolation, affinity hints.
    scenario("image_props", ["ImagePropertiesFilter"],
             hosts=[host(0), host(1, supported_instances=[["aarch64", "qemu", "hvm"]]),
                    host(2, supported_instances=[["x86_64", "xen", "xen"]]), host(3, supported_instances=[])],
             request={"image": {"properties": {"hw_architecture": "x86_64", "img_hv_type": "qemu",
                                               "img_hv_requested_version": ">= 8.2, < 8.4"}}})
    scenario("isolated_hosts", ["IsolatedHostsFilter"],
             config={"filter_scheduler": {"isolated_hosts": ["h1", "h2"],
                                          "isolated_images": ["11111111-2222-3333-4444-555555555555"]}},
             request={"image": {"id": "11111111-2222-3333-4444-555555555555"}, "num_instances": 2})
    scenario("same_different_host",
             ["SameHostFilter", "DifferentHostFilter"],
             hosts=[host(i, instances=["u%d" % i]) for i in range(6)],
             request={"scheduler_hints": {"same_host": ["u1", "u2", "u3"], "different_host": "u2"}})
    scenario("cidr_affinity", ["SimpleCIDRAffinityFilter"],
             request={"scheduler_hints": {"build_near_host_ip": "10.0.1.7", "cidr": "/24"}, "num_instances": 2})
    scenario("all_hosts_metrics", ["AllHostsFilter", "MetricsFilter"],
             hosts=[host(0), host(1, metrics={}), host(2)],
             config={"metrics": {"weight_setting": ["cpu.frequency=1.0", "broken", "cpu.percent=x"]}})

    # Server groups.
    for policy in ("anti-affinity", "affinity"):
        scenario("group_" + policy, ["ServerGroupAntiAffinityFilter", "ServerGroupAffinityFilter"],
                 hosts=[host(i, instances=["m%d" % i]) for i in range(4)],
                 request={"num_instances": 5, "instance_group": {
                     "policy": policy, "members": ["m1"], "hosts": ["h1"] if policy == "affinity" else []}})
    scenario("group_max_per_host", ["ServerGroupAntiAffinityFilter"], hosts=[host(i) for i in range(3)],
             request={"num_instances": 7, "instance_group": {"policy": "anti-affinity", "max_server_per_host": 2}})

    # Weighers: each alone, overrides, metrics modes, ties.
    all_weighers = ["RAMWeigher", "CPUWeigher", "DiskWeigher", "IoOpsWeigher", "NumInstancesWeigher",
                    "HypervisorVersionWeigher", "BuildFailureWeigher", "MetricsWeigher",
                    "ServerGroupSoftAffinityWeigher", "ServerGroupSoftAntiAffinityWeigher"]
    for w in all_weighers:
        scenario("weigh_" + w, ["ComputeFilter"], weighers=[w], aggregates=aggs,
                 config={"metrics": {"weight_setting": ["cpu.frequency=1.0", "cpu.percent=-0.5"]},
                         "multipliers": {"num_instances_weight_multiplier": -1.0}},
                 request={"num_instances": 4, "instance_group": {
                     "policy": "soft-affinity" if "SoftAffinity" in w else "soft-anti-affinity",
                     "members": ["x"]}})
    scenario("weigh_all_overrides", ["ComputeFilter", "RamFilter"], weighers=all_weighers, aggregates=aggs,
             config={"metrics": {"weight_setting": {"cpu.frequency": 0.001}, "weight_multiplier": 2.0},
                     "multipliers": {"ram_weight_multiplier": 1.5, "disk_weight_multiplier": 0.25,
                                     "build_failure_weight_multiplier": 10.0}},
             request={"num_instances": 10})
    scenario("weigh_metrics_unavailable", ["ComputeFilter"], weighers=["MetricsWeigher", "RAMWeigher"],
             hosts=[host(0), host(1, metrics={"cpu.percent": 0.5}), host(2), host(3)],
             config={"metrics": {"weight_setting": ["cpu.frequency=1.0"], "required": False,
                                 "weight_of_unavailable": -10000.0}}, request={"num_instances": 3})
    scenario("weigh_metrics_required_missing", ["ComputeFilter"], weighers=["MetricsWeigher"],
             hosts=[host(0), host(1, metrics={})], config={"metrics": {"weight_setting": ["cpu.frequency=1.0"]}})
    scenario("ties_previous_order", ["RamFilter"], weighers=["RAMWeigher"],
             hosts=[host(i, free_ram_mb=8192, total_usable_ram_mb=8192) for i in range(4)],
             request={"num_instances": 9})
    scenario("stack_until_full", ["RamFilter"], weighers=["RAMWeigher"],
             config={"multipliers": {"ram_weight_multiplier": -1.0}}, request={"num_instances": 12})
    scenario("single_candidate", ["ComputeFilter"], weighers=["RAMWeigher", "CPUWeigher"],
             hosts=[host(0), host(1, enabled=False), host(2, up=False), host(3, forced_down=True)])
    scenario("force_and_ignore", ["ComputeFilter", "RamFilter"],
             hosts=[host(0), host(1, up=False), host(2), host(3)],
             request={"num_instances": 3, "force_hosts": ["H1", "h2"], "ignore_hosts": ["h2"]})
    scenario("no_valid_host_midway", ["RamFilter"],
             hosts=[host(0, free_ram_mb=5000), host(1, free_ram_mb=3000)], request={"num_instances": 4})

    fidelity()
    drawn_findings()
    mutated_findings()
    nova_34(aggs)


def plain(name, free_ram_mb, **kw):
    """A host with only the fields the fidelity scenarios vary."""
    h = {"name": name, "total_usable_ram_mb": 16384, "free_ram_mb": free_ram_mb, "vcpus_total": 8,
         "vcpus_used": 0, "total_usable_disk_gb": 100, "free_disk_mb": 102400}
    h.update(kw)
    return h


def fidelity():
    """The check-type hint, non-member picks and trace counts (reference filter-scheduler-nodes.md)."""
    # G2: forced hosts and the _nova_check_type hint.
    arch = {"x86-a": [["x86_64", "qemu", "hvm"]], "arm-b": [["aarch64", "qemu", "hvm"]]}
    forced = [plain("x86-a", 1024, supported_instances=arch["x86-a"]),
              plain("arm-b", 8192, supported_instances=arch["arm-b"])]
    aarch64 = {"id": "11111111-1111-1111-1111-111111111111", "properties": {"hw_architecture": "aarch64"}}
    for key, value in [("rebuild", "rebuild"), ("rebuild_list", ["rebuild"]), ("resize", "resize"),
                       ("empty_string", ""), ("empty_list", []), ("absent", None)]:
        hints = {} if value is None else {"_nova_check_type": value}
        scenario("check_type_forced_" + key, ["RamFilter", "ImagePropertiesFilter"], hosts=forced,
                 request={"image": aarch64, "scheduler_hints": hints, "force_hosts": ["X86-A"]})
    scenario("check_type_forced_nodes_resize", ["RamFilter", "ImagePropertiesFilter"], hosts=forced,
             request={"image": aarch64, "scheduler_hints": {"_nova_check_type": "resize"},
                      "force_nodes": ["arm-b"], "num_instances": 2})
    scenario("check_type_forced_none_match", ["RamFilter", "ComputeFilter"], hosts=forced,
             request={"scheduler_hints": {"_nova_check_type": "resize"}, "force_hosts": ["nowhere"]})
    scenario("forced_none_match", ["RamFilter", "ComputeFilter"], hosts=forced,
             request={"force_hosts": ["nowhere"]})
    scenario("rebuild_without_forced_hosts", ["ComputeFilter", "RamFilter"],
             hosts=[plain("a", 1024), plain("b", 1536, enabled=False)],
             request={"scheduler_hints": {"_nova_check_type": ["rebuild"]}})
    scenario("rebuild_runs_rebuild_filters", ["RamFilter", "ImagePropertiesFilter", "IsolatedHostsFilter"],
             hosts=[plain("x86-a", 9000, supported_instances=arch["x86-a"]),
                    plain("arm-b", 1024, supported_instances=arch["arm-b"]),
                    plain("arm-c", 512, supported_instances=arch["arm-b"])],
             config={"filter_scheduler": {"isolated_hosts": ["arm-c"],
                                          "isolated_images": ["22222222-2222-2222-2222-222222222222"]}},
             request={"image": aarch64, "scheduler_hints": {"_nova_check_type": "rebuild"}, "num_instances": 2})

    # G3: anti-affinity and the soft weighers with picks that are not members.
    three = [plain("a", 9000), plain("b", 4000), plain("c", 3000, instances=["bbbbbbbb-0000-0000-0000-000000000001"])]
    existing = ["bbbbbbbb-0000-0000-0000-000000000001"]
    own = ["00000000-0000-0000-0000-%012d" % i for i in range(4)]
    for key, extra, add in [("none", [], False), ("first", own[:1], False), ("second", own[1:2], False),
                            ("all", [], True)]:
        group = {"name": "g", "policy": "anti-affinity", "members": existing + extra, "hosts": ["c"],
                 "add_request_instances_to_members": add}
        scenario("anti_affinity_members_" + key, ["ServerGroupAntiAffinityFilter"], hosts=three,
                 request={"num_instances": 3, "instance_group": group})
        for policy, weigher in [("soft-anti-affinity", "ServerGroupSoftAntiAffinityWeigher"),
                                ("soft-affinity", "ServerGroupSoftAffinityWeigher")]:
            soft = dict(group, policy=policy)
            scenario("%s_members_%s" % (policy.replace("-", "_"), key), ["RamFilter"],
                     weighers=[weigher, "RAMWeigher"], hosts=three,
                     config={"multipliers": {"ram_weight_multiplier": 0.001}},
                     request={"num_instances": 4, "instance_group": soft})

    # G1: several nodes behind one service host.
    flavor_small = {"name": "m1.small", "memory_mb": 2048, "vcpus": 1, "root_gb": 10}
    member = "aaaaaaaa-0000-0000-0000-000000000001"
    bm = lambda node, ram, **kw: plain("bm-1", ram, nodename=node, **kw)
    scenario("nodes_anti_affinity_sibling", ["ServerGroupAntiAffinityFilter"],
             hosts=[bm("bm-1-n0", 12000), bm("bm-1-n1", 14000), plain("kvm-1", 8000)],
             request={"num_instances": 2, "flavor": flavor_small,
                      "instance_group": {"name": "web", "policy": "anti-affinity", "members": [], "hosts": []}})
    scenario("nodes_affinity_follows_host", ["RamFilter", "ServerGroupAffinityFilter"],
             hosts=[bm("bm-1-n0", 3000), bm("bm-1-n1", 2500), plain("kvm-1", 2200)],
             request={"num_instances": 2, "flavor": flavor_small,
                      "instance_group": {"name": "db", "policy": "affinity", "members": [], "hosts": []}})
    scenario("nodes_instance_on_first_entry", ["ServerGroupAntiAffinityFilter"],
             hosts=[bm("bm-1-n0", 9000, instances=[member]), bm("bm-1-n1", 15000), plain("kvm-1", 6000)],
             request={"flavor": flavor_small, "instance_group": {
                 "name": "web", "policy": "anti-affinity", "members": [member], "hosts": ["bm-1"]}})
    nodes = [bm("bm-1-n0", 9000, aggregates=["gold"]), bm("bm-1-n1", 15000, enabled=False),
             plain("bm-2", 7000, nodename="bm-2-n0", instances=[member]),
             plain("bm-2", 5000, nodename="bm-2-n1", availability_zone="az9"), plain("kvm-1", 6000)]
    gold = [{"name": "gold", "metadata": {"ram_weight_multiplier": "-1.0"}, "hosts": []}]
    scenario("nodes_force_hosts", ["ComputeFilter", "RamFilter"], hosts=nodes, aggregates=gold,
             request={"num_instances": 3, "force_hosts": ["BM-1"]})
    scenario("nodes_force_nodes", ["ComputeFilter", "RamFilter"], hosts=nodes, aggregates=gold,
             request={"num_instances": 2, "force_nodes": ["bm-1-n1", "bm-2-n0"],
                      "scheduler_hints": {"_nova_check_type": "resize"}})
    scenario("nodes_ignore_host", ["ComputeFilter", "RamFilter"], hosts=nodes, aggregates=gold,
             request={"num_instances": 2, "ignore_hosts": ["bm-2"]})
    scenario("nodes_service_state_from_first_entry", ["ComputeFilter"], hosts=nodes, aggregates=gold,
             request={"num_instances": 3})
    scenario("nodes_aggregates_shared", ["AvailabilityZoneFilter"], weighers=["RAMWeigher"], hosts=nodes,
             aggregates=gold, request={"num_instances": 3, "availability_zone": "az9"})
    scenario("nodes_same_different_host", ["SameHostFilter"], hosts=nodes,
             request={"scheduler_hints": {"same_host": member}})
    scenario("nodes_different_host", ["DifferentHostFilter"], hosts=nodes,
             request={"scheduler_hints": {"different_host": [member]}, "num_instances": 2})
    scenario("nodes_isolated_hosts", ["IsolatedHostsFilter"], hosts=nodes,
             config={"filter_scheduler": {"isolated_hosts": ["bm-2"],
                                          "isolated_images": ["33333333-3333-3333-3333-333333333333"]}},
             request={"image": {"id": "33333333-3333-3333-3333-333333333333"}, "num_instances": 2})
    scenario("nodes_soft_anti_affinity", ["RamFilter"], weighers=["ServerGroupSoftAntiAffinityWeigher", "RAMWeigher"],
             hosts=nodes, config={"multipliers": {"ram_weight_multiplier": 0.001}},
             request={"num_instances": 4, "instance_group": {"name": "s", "policy": "soft-anti-affinity",
                                                             "members": [member]}})
    scenario("nodes_soft_affinity", ["RamFilter"], weighers=["ServerGroupSoftAffinityWeigher", "RAMWeigher"],
             hosts=nodes, config={"multipliers": {"ram_weight_multiplier": 0.001}},
             request={"num_instances": 4, "instance_group": {"name": "s", "policy": "soft-affinity",
                                                             "members": [member]}})
    scenario("nodes_json_host", ["JsonFilter"], hosts=nodes,
             request={"scheduler_hints": {"query": ["=", "$host", "bm-2"]}, "num_instances": 2})

    # G4: trace counts after ignored hosts.
    scenario("ignore_then_emptied", ["RamFilter", "ComputeFilter", "IoOpsFilter"],
             hosts=[plain("a", 1024), plain("b", 1500), plain("c", 9000)], request={"ignore_hosts": ["C"]})
    scenario("ignore_counts", ["ComputeFilter", "RamFilter"],
             hosts=[plain("a", 4096), plain("b", 1500), plain("c", 9000), plain("d", 6000, enabled=False)],
             request={"ignore_hosts": ["c"]})
    scenario("ignore_everything", ["RamFilter", "ComputeFilter", "IoOpsFilter"],
             hosts=[plain("a", 1024), plain("b", 1500), plain("c", 9000)], request={"ignore_hosts": ["a", "B", "c"]})


def drawn_findings():
    """Rules that scenarios drawn by the `nova_drawn` fuzz target's generator showed differing
    (fuzz/CAMPAIGN.md, campaign 15), one scenario each."""
    # A host record without total_usable_disk_gb: the total is free_disk_gb as given, before
    # disk_available_least_gb lowers the free amount (which may go negative).
    least = [host(i, total_usable_disk_gb=None, free_disk_mb=None, free_disk_gb=40,
                  disk_available_least_gb=least, disk_allocation_ratio=1.5)
             for i, least in enumerate([5, -3, 30])]
    for h in least:
        del h["total_usable_disk_gb"], h["free_disk_mb"]
    scenario("disk_least_without_total", ["DiskFilter"], weighers=["DiskWeigher"], hosts=least,
             request={"num_instances": 3})
    # Nova raises: a host_ip that is no IP address, and options below their lower bound.
    scenario("host_ip_invalid", ["ComputeFilter"], hosts=[host(0), host(1, host_ip="10.0.0.256")])
    bounds = {"max_io_ops_per_host": -1, "max_instances_per_host": 0,
              "soft_affinity_weight_multiplier": -1.0, "soft_anti_affinity_weight_multiplier": -0.5,
              "pci_weight_multiplier": -2.0}
    for option, value in bounds.items():
        scenario("option_below_bound_" + option, ["ComputeFilter"],
                 config={"filter_scheduler": {option: value}})
    scenario("option_at_bound", ["ComputeFilter", "IoOpsFilter", "NumInstancesFilter"],
             config={"filter_scheduler": {"max_io_ops_per_host": 0, "max_instances_per_host": 1,
                                          "soft_affinity_weight_multiplier": 0.0}})
    # JsonFilter: HostState's metrics and pci_stats are objects without .get (Nova raises);
    # numa_topology is None here (the lookup is None).
    for attr in ("metrics", "pci_stats", "updated", "numa_topology", "instances", "limits"):
        scenario("json_lookup_in_" + attr, ["JsonFilter"],
                 request={"scheduler_hints": {"query": ["=", "$%s.cpu.percent" % attr, 1]}})


def mutated_findings():
    """Rules that the `nova_scenario` fuzz target's JSON mutants showed differing
    (fuzz/CAMPAIGN.md, campaign 16), one scenario each."""
    # Without enabled_filters Nova runs its five default filters: ComputeFilter drops h1,
    # ComputeCapabilitiesFilter h2, ImagePropertiesFilter h3.
    defaults = [host(0), host(1, enabled=False), host(2, hypervisor_version=1000),
                host(3, supported_instances=[["aarch64", "qemu", "hvm"]]), host(4)]
    scenario("default_filters", None, hosts=defaults,
             request={"num_instances": 2,
                      "flavor": flavor(**{"capabilities:hypervisor_version": ">= 8000000"}),
                      "image": {"id": "11111111-2222-3333-4444-555555555555",
                                "properties": {"hw_architecture": "x86_64"}}})
    # Without weighers the tool raises: Nova's default weigher list has no stable order.
    scenario("no_weighers", ["ComputeFilter"], weighers=None)
    # Nova's image metadata loader and HVSpec check names: every request and host record, not
    # only when ImagePropertiesFilter runs. Canonical spellings pass; others raise.
    image = lambda **props: {"image": {"id": "11111111-2222-3333-4444-555555555555", "properties": props}}
    scenario("image_names_canonicalised", ["ImagePropertiesFilter"],
             hosts=[host(0, supported_instances=[["AMD64", "XAPI", "PV"]]), host(1)],
             request=image(hw_architecture="X86_64", img_hv_type="xapi", vm_mode="pv"))
    invalid = {"arch": {"hw_architecture": "x86"}, "legacy_arch": {"architecture": "foo"},
               "hv_type": {"img_hv_type": "qemuu"}, "vm_mode": {"hw_vm_mode": "h"},
               "arch_empty": {"hw_architecture": ""}, "arch_number": {"hw_architecture": 64},
               "version_predicate": {"img_hv_requested_version": "= 8002000"},
               "version_number": {"img_hv_requested_version": 8002000}}
    for name, props in invalid.items():
        scenario("image_property_invalid_" + name, ["ComputeFilter"], request=image(**props))
    # No instance: the tool raises. An empty instance_uuids list: the tool draws the ids.
    scenario("request_no_instance", ["ComputeFilter"], request={"num_instances": 0})
    scenario("request_empty_uuid_list", ["ComputeFilter"], request={"num_instances": 2, "instance_uuids": []})
    # image_properties_default_architecture has Nova's architecture names as choices, exactly.
    for name, arch in {"upper": "X86_64", "alias": "amd64"}.items():
        scenario("default_architecture_" + name, ["ImagePropertiesFilter"],
                 config={"filter_scheduler": {"image_properties_default_architecture": arch}})
    scenario("default_architecture_exact", ["ImagePropertiesFilter"],
             hosts=[host(0), host(1, supported_instances=[["aarch64", "qemu", "hvm"]])],
             config={"filter_scheduler": {"image_properties_default_architecture": "aarch64"}})
    # Nova's host state reads its counters from the stats, with int(); the record's own
    # counters, when given, overwrite them. A metrics value Python counts as false is none.
    counted = []
    for i in range(4):
        h = host(i, stats={"num_instances": [" 7 ", "2", "+3", "1_0"][i], "io_workload": str(i * 3),
                           "failed_builds": str(i % 2)})
        for counter in ("num_instances", "num_io_ops", "failed_builds"):
            del h[counter]
        counted.append(h)
    counted[3]["num_io_ops"] = 1
    scenario("stats_counters", ["NumInstancesFilter", "IoOpsFilter"],
             weighers=["NumInstancesWeigher", "IoOpsWeigher", "BuildFailureWeigher"], hosts=counted,
             config={"filter_scheduler": {"max_instances_per_host": 5, "max_io_ops_per_host": 5}})
    bad = host(1, stats={"failed_builds": "<in> a"})
    del bad["failed_builds"]
    scenario("stats_counter_not_a_number", ["ComputeFilter"], hosts=[host(0), bad])
    scenario("metrics_falsy", ["ComputeFilter"], weighers=["MetricsWeigher"],
             hosts=[host(0, metrics=0), host(1, metrics=""), host(2, metrics=False), host(3)],
             config={"metrics": {"weight_setting": ["cpu.frequency=1.0"], "required": False,
                                 "weight_of_unavailable": -1.0}})
    # The metrics section holds [metrics] options only; their short names belong there alone.
    scenario("metrics_section_unknown_option", ["ComputeFilter"],
             config={"metrics": {"build_failure_weight_multiplier": 2.0}})
    scenario("metrics_option_in_filter_scheduler", ["ComputeFilter"], weighers=["MetricsWeigher"],
             config={"filter_scheduler": {"weight_setting": ["cpu.frequency=1.0"]}})
    for name, entry in {"short": ["x86_64", "qemu"], "arch": ["x86", "qemu", "hvm"],
                        "vm_mode": ["x86_64", "qemu", "hv m"]}.items():
        scenario("supported_instances_invalid_" + name, ["ComputeFilter"],
                 hosts=[host(0), host(1, supported_instances=[["x86_64", "qemu", "hvm"], entry])])
    # Nova checks a flavor's extra specs in the flavor's order and stops at the first that fails
    # a host: a spec it cannot evaluate after that one is never reached. Written unsorted.
    eight = [{"name": "eight", "metadata": {"cores": "8"}, "hosts": ["h%d" % i for i in range(6)]}]
    for name, specs in {"missing_first": {"zz": "x", "cores": "<or>"},
                        "unevaluable_first": {"cores": "<or>", "zz": "x"}}.items():
        scenario("spec_order_aggregate_" + name, ["AggregateInstanceExtraSpecsFilter"], aggregates=eight,
                 request={"flavor": flavor(**specs)}, sort_keys=False)
    for name, specs in {"mismatch_first": {"capabilities:stats:rack": "r9", "capabilities:hypervisor_type": "= 1"},
                        "unevaluable_first": {"capabilities:hypervisor_type": "= 1", "capabilities:stats:rack": "r9"},
                        # The flavor-side maxphysaddr spec replaces an explicit one in its place
                        # (the hosts have no maxphysaddr: each fails there first)...
                        "maxphysaddr_in_place": {"capabilities:cpu_info:maxphysaddr:bits": "1",
                                                 "capabilities:hypervisor_type": "= 1",
                                                 "hw:maxphysaddr_bits": "40"},
                        # ... and otherwise goes last.
                        "maxphysaddr_last": {"hw:maxphysaddr_bits": "40", "capabilities:hypervisor_type": "= 1"}}.items():
        scenario("spec_order_capabilities_" + name, ["ComputeCapabilitiesFilter"],
                 request={"flavor": flavor(**specs)}, sort_keys=False)
    # JsonFilter: HostState's metrics, pci_stats and updated are objects, not values. Alone, a
    # MonitorMetricList is true when the host reports a metric, the other two always; each
    # equals only itself, and ordering raises (a datetime against itself excepted).
    reporting = [host(0), host(1, metrics={}), host(2)]
    del reporting[2]["metrics"]
    objects = {"metrics_or": ["or", "$metrics"], "metrics_not": ["not", "$metrics"],
               "metrics_and": ["and", "$metrics", ["=", 1, 1]], "metrics_eq_self": ["=", "$metrics", "$metrics"],
               "metrics_in": ["in", "$metrics", 1, "$metrics"], "metrics_eq_number": ["=", "$metrics", 1],
               "metrics_lt": ["<", "$metrics", 1], "metrics_gt_reversed": [">", 1, "$metrics"],
               "pci_stats_or": ["or", "$pci_stats"], "pci_stats_lt_self": ["<", "$pci_stats", "$pci_stats"],
               "updated_not": ["not", "$updated"], "updated_eq_self": ["=", "$updated", "$updated"],
               "updated_le_self": ["<=", "$updated", "$updated"], "updated_ge_number": [">=", "$updated", 0]}
    for name, query in objects.items():
        scenario("json_object_" + name, ["JsonFilter"], hosts=reporting,
                 request={"scheduler_hints": {"query": json.dumps(query)}})


def nova_34(aggs):
    """Issue 42, item 11: the filters and weighers Nova 34 ships that were refused by name, and
    metrics reported without a scalar value."""
    # NUMATopologyFilter and PciPassthroughFilter pass every host without a NUMA topology or a
    # PCI request (a shared CPU policy, a NUMA key alone that shapes no topology).
    plain = flavor(**{"hw:cpu_policy": "shared", "hw:numa_cpus.0": "0", "hw:pci_numa_affinity_policy": "preferred"})
    scenario("nova34_numa_pci_plain", ["ComputeFilter", "NUMATopologyFilter", "PciPassthroughFilter", "RamFilter"],
             hosts=[host(i, **({"up": False} if i == 1 else {})) for i in range(6)],
             request={"flavor": plain, "image": {"properties": {"hw_cpu_policy": "shared"}}, "num_instances": 4},
             sort_keys=False)
    # The three weighers Nova 34 adds to the default list, alone and with overrides: with no PCI
    # devices, one cell and a zero image-properties multiplier each adds 0 to every weight.
    overrides = [dict(a) for a in aggs] + [
        {"name": "w34", "metadata": {"pci_weight_multiplier": "-3", "cross_cell_move_weight_multiplier": "-2.5",
                                     "image_props_weight_multiplier": "4"}, "hosts": ["h0", "h3"]}]
    for w in ["PCIWeigher", "CrossCellWeigher", "ImagePropertiesWeigher"]:
        scenario("weigh_" + w, ["ComputeFilter"], weighers=[w], aggregates=overrides, request={"num_instances": 3})
    all_34 = ["CrossCellWeigher", "RAMWeigher", "PCIWeigher", "CPUWeigher", "DiskWeigher", "IoOpsWeigher",
              "ImagePropertiesWeigher", "NumInstancesWeigher", "HypervisorVersionWeigher", "BuildFailureWeigher",
              "MetricsWeigher", "ServerGroupSoftAffinityWeigher", "ServerGroupSoftAntiAffinityWeigher"]
    scenario("weigh_all_nova34", ["ComputeFilter", "RamFilter", "NUMATopologyFilter", "PciPassthroughFilter"],
             weighers=all_34, aggregates=overrides,
             config={"metrics": {"weight_setting": {"cpu.frequency": 0.001}},
                     "multipliers": {"pci_weight_multiplier": 2.0, "cross_cell_move_weight_multiplier": 3.0,
                                     "image_props_weight_multiplier": 0.0, "ram_weight_multiplier": 1.5}},
             request={"num_instances": 8})
    # Metrics reported without a scalar value (NUMA memory bandwidth, per node): the host reports
    # the metric (MetricsFilter, JsonFilter's $metrics); MetricsWeigher raises reading its value.
    membw = {"name": "numa.membw.current", "numa_membw_values": {"0": 10, "1": 20}}
    hosts = [host(0, metrics=[{"name": "cpu.frequency", "value": 2000}, membw]),
             host(1, metrics=[{"name": "cpu.frequency", "value": 2100}]),
             host(2, metrics=[{"name": "numa.membw.max"}]),
             host(3, metrics=[])]
    scenario("metrics_without_value_filter", ["MetricsFilter"], hosts=hosts,
             config={"metrics": {"weight_setting": ["numa.membw.current=1.0"]}}, request={"num_instances": 2})
    scenario("metrics_without_value_json", ["JsonFilter"], hosts=hosts,
             request={"scheduler_hints": {"query": json.dumps(["or", "$metrics"])}})
    scenario("metrics_without_value_unread", ["ComputeFilter"], weighers=["MetricsWeigher", "RAMWeigher"],
             hosts=hosts, config={"metrics": {"weight_setting": ["cpu.frequency=1.0"], "required": False}},
             request={"num_instances": 2})
    for required in (True, False):
        scenario("metrics_without_value_weigher_%s" % ("required" if required else "optional"), ["ComputeFilter"],
                 weighers=["MetricsWeigher"], hosts=hosts,
                 config={"metrics": {"weight_setting": ["numa.membw.current=1.0"], "required": required}})


if __name__ == "__main__":
    main()
