//! A deployer's filter scheduler: filters and weighers configured by name (the way `nova.conf`
//! names them), a custom filter written as a closure beside the built-ins, a few VM requests,
//! and the explanation of one that cannot be placed.
//!
//! Run with `cargo run --release --example filter_scheduler`.

use placewise::nova::request::Flavor;
use placewise::nova::scenario::Scenario;
use placewise::nova::NovaRequest;
use placewise::{filter_fn, SchedulerConfig};
use std::error::Error;

/// A small cloud in the reference tool's scenario format: six compute hosts in two zones.
const CLOUD: &str = r#"{
  "aggregates": [{"name": "fast-disks", "metadata": {"ssd": "true"}, "hosts": ["cmp-3", "cmp-4"]}],
  "hosts": [
    {"name": "cmp-1", "total_usable_ram_mb": 65536, "free_ram_mb": 60000, "vcpus_total": 32, "vcpus_used": 4,
     "total_usable_disk_gb": 1000, "free_disk_gb": 900, "availability_zone": "az1",
     "cpu_info": {"arch": "x86_64", "features": ["avx2", "aes"]}, "supported_instances": [["x86_64", "qemu", "hvm"]]},
    {"name": "cmp-2", "total_usable_ram_mb": 65536, "free_ram_mb": 20000, "vcpus_total": 32, "vcpus_used": 20,
     "total_usable_disk_gb": 1000, "free_disk_gb": 300, "availability_zone": "az1",
     "cpu_info": {"arch": "x86_64", "features": ["aes"]}, "supported_instances": [["x86_64", "qemu", "hvm"]]},
    {"name": "cmp-3", "total_usable_ram_mb": 131072, "free_ram_mb": 120000, "vcpus_total": 64, "vcpus_used": 8,
     "total_usable_disk_gb": 2000, "free_disk_gb": 1800, "availability_zone": "az2",
     "cpu_info": {"arch": "x86_64", "features": ["avx2", "avx512f"]}, "supported_instances": [["x86_64", "qemu", "hvm"]]},
    {"name": "cmp-4", "total_usable_ram_mb": 131072, "free_ram_mb": 90000, "vcpus_total": 64, "vcpus_used": 30,
     "total_usable_disk_gb": 2000, "free_disk_gb": 1500, "availability_zone": "az2", "enabled": false,
     "cpu_info": {"arch": "x86_64", "features": ["avx2"]}, "supported_instances": [["x86_64", "qemu", "hvm"]]},
    {"name": "cmp-5", "total_usable_ram_mb": 65536, "free_ram_mb": 64000, "vcpus_total": 32, "vcpus_used": 0,
     "total_usable_disk_gb": 1000, "free_disk_gb": 1000, "availability_zone": "az2", "stats": {"maintenance": "true"},
     "cpu_info": {"arch": "aarch64", "features": []}, "supported_instances": [["aarch64", "qemu", "hvm"]]},
    {"name": "cmp-6", "total_usable_ram_mb": 32768, "free_ram_mb": 30000, "vcpus_total": 16, "vcpus_used": 2,
     "total_usable_disk_gb": 500, "free_disk_gb": 450, "availability_zone": "az1", "up": false,
     "cpu_info": {"arch": "x86_64", "features": ["avx2"]}, "supported_instances": [["x86_64", "qemu", "hvm"]]}
  ],
  "request": {"flavor": {"memory_mb": 1, "vcpus": 1}}
}"#;

/// The deployer's configuration, as `nova.conf` would say it.
const CONFIG: &str = r#"{
  "enabled_filters": "ComputeFilter,AvailabilityZoneFilter,RamFilter,CoreFilter,DiskFilter,ComputeCapabilitiesFilter,ImagePropertiesFilter,AggregateInstanceExtraSpecsFilter",
  "weighers": ["RAMWeigher", "CPUWeigher", "IoOpsWeigher"],
  "multipliers": {"ram_weight_multiplier": 1.0, "cpu_weight_multiplier": 0.5},
  "filter_scheduler": {"host_subset_size": 1},
  "allocation_ratios": {"cpu": 4.0, "ram": 1.0, "disk": 1.0}
}"#;

fn main() -> Result<(), Box<dyn Error>> {
    let cloud = Scenario::from_json(CLOUD)?;
    let config = SchedulerConfig::from_json(CONFIG)?;
    // The named filters, then one of our own: never on hosts whose compute stats say they are
    // in maintenance.
    let scheduler = config
        .builder()?
        .filter(filter_fn("MaintenanceFilter", |cx, host| {
            cx.host_state(host).attribute("stats").get("maintenance").and_then(|m| m.as_str()) != Some("true")
        }))
        .build()?;
    println!("scheduler: {scheduler:?}\n");

    let requests = [
        ("web (4 × m1.medium)", NovaRequest::for_flavor(4, Flavor::new("m1.medium", 4096.0, 2.0, 40.0))),
        (
            "ai (2 × avx2 in az2)",
            NovaRequest::for_flavor(
                2,
                Flavor::new("c1.large", 16384.0, 8.0, 80.0).extra_spec("capabilities:cpu_info:features", "<in> avx2"),
            )
            .with_request(|r| r.zone("az2")),
        ),
        (
            "db (ssd aggregate)",
            NovaRequest::for_flavor(
                1,
                Flavor::new("m1.xlarge", 32768.0, 8.0, 200.0).extra_spec("aggregate_instance_extra_specs:ssd", "true"),
            ),
        ),
        ("huge (256 GiB)", NovaRequest::for_flavor(1, Flavor::new("m1.huge", 262144.0, 16.0, 100.0))),
    ];
    for (name, request) in &requests {
        let placement = scheduler.schedule(&cloud.cluster, request)?;
        let hosts: Vec<&str> = placement.selections.iter().map(|s| s.host_name.as_str()).collect();
        let status = if placement.is_complete() { "placed" } else { "NO VALID HOST" };
        println!("{name}: {status} {hosts:?}");
        println!("  {}\n", placement.explanation);
    }
    Ok(())
}
