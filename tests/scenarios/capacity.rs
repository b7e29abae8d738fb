//! Capacity scenarios as data: every `tests/data/capacity/*.json` holds a cluster, a request and
//! the expected counts per host, zone and rack with each host's stop, worked by hand.

use placewise::capacity;
use placewise::request::Request;
use placewise::schedule::Scheduler;
use placewise::snapshot::Cluster;

#[test]
fn capacity_scenarios() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/capacity");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(!files.is_empty());
    for path in files {
        let name = path.display().to_string();
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let cluster = Cluster::from_json(&doc["cluster"].to_string()).unwrap();
        let request = Request::from_json(&doc["request"].to_string()).unwrap();
        let scheduler = Scheduler::standard();
        let cap = capacity::instances(&scheduler, &cluster, &request).unwrap();
        let expect = &doc["expect"];
        assert_eq!(cap.total, expect["total"].as_u64().unwrap(), "{name}");
        for (level, domains) in [("zones", &cap.zones), ("racks", &cap.racks)] {
            let got: std::collections::BTreeMap<String, u64> =
                domains.iter().map(|d| (d.name.clone(), d.fits)).collect();
            let want: std::collections::BTreeMap<String, u64> =
                expect[level].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap())).collect();
            assert_eq!(got, want, "{name}: {level}");
        }
        for (host, want) in expect["hosts"].as_object().unwrap() {
            let id = cluster.host_id(host).unwrap();
            let h = cap.hosts.iter().find(|h| h.host == id).unwrap();
            let reason = h.stop.map(|i| cap.stops[i as usize].reason.as_str());
            assert_eq!(u64::from(h.fits), want[0].as_u64().unwrap(), "{name}: {host}");
            assert_eq!(reason, want[1].as_str(), "{name}: {host}");
        }
        // And `schedule` agrees.
        let mut all = request.clone();
        all.count = cap.total as u32;
        assert!(scheduler.schedule(&cluster, &all).unwrap().is_complete(), "{name}");
        all.count += 1;
        assert!(!scheduler.schedule(&cluster, &all).unwrap().is_complete(), "{name}");
    }
}
