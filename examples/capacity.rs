//! The capacity report: how many more instances of a request fit on the bundled sample cluster
//! (48 hosts, 3 zones of 4 racks), per zone and rack, what stops each host, and where the next
//! instances would go. Prints a table and writes a self-contained SVG picture.
//!
//! Run with `cargo run --release --example capacity -- [OUT.svg] [--keep-zone]`.
//!
//! The request is `examples/data/sample_request.json`; its zone is lifted so that the zones can
//! be compared (`--keep-zone` keeps it). The SVG goes to `OUT.svg`, by default
//! `capacity.svg` in the temporary directory.

use placewise::capacity::{self, DomainCapacity, InstanceCapacity, Stop};
use placewise::id::{HostId, ResourceId};
use placewise::request::Request;
use placewise::schedule::Scheduler;
use placewise::snapshot::Cluster;
use std::error::Error;
use std::fmt::Write as _;
use std::path::PathBuf;

const SAMPLE: &str = include_str!("data/sample_cluster.json");
const REQUEST: &str = include_str!("data/sample_request.json");
/// How many of the next instances the picture marks.
const NEXT: u32 = 12;

/// The resource columns: kind name, heading, unit divisor, unit.
const COLUMNS: [(&str, &str, f64, &str); 3] =
    [("vcpus", "vCPU", 1.0, ""), ("memory_mb", "RAM", 1024.0, " GiB"), ("disk_gb", "disk", 1.0, " GB")];

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let keep_zone = args.iter().any(|a| a == "--keep-zone");
    let out = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("capacity.svg"));

    let cluster = Cluster::from_json(SAMPLE)?;
    let mut request = Request::from_json(REQUEST)?;
    if !keep_zone {
        request.zone = None;
    }
    let scheduler = Scheduler::standard();
    let cap = capacity::instances(&scheduler, &cluster, &request)?;

    // Where the next instances go: the scheduler's own picks.
    request.count = NEXT.min(cap.total as u32);
    let next: Vec<HostId> = scheduler.schedule(&cluster, &request)?.hosts().collect();

    let what = describe(&request);
    println!("{what}");
    println!("{} more fit on {} hosts ({:?} count)\n", cap.total, cluster.len(), cap.method);
    print_table(&cluster, &cap);
    println!("\nnext {} instances: {}", next.len(), names(&cluster, &next).join(", "));

    let svg = render(&cluster, &cap, &next, &what);
    std::fs::write(&out, svg)?;
    println!("picture written to {}", out.display());
    Ok(())
}

fn describe(r: &Request) -> String {
    let resources: Vec<String> = r.resources.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let mut s = format!("request: {}", resources.join(", "));
    if let Some(sel) = &r.selector {
        let _ = write!(s, "; selector {sel}");
    }
    if let Some(z) = &r.zone {
        let _ = write!(s, "; zone {z}");
    }
    s
}

fn names(cluster: &Cluster, hosts: &[HostId]) -> Vec<String> {
    hosts.iter().map(|&h| cluster.host_name(h).to_owned()).collect()
}

/// The resource columns the cluster has: `(id, heading, divisor, unit)`.
fn columns(cluster: &Cluster) -> Vec<(ResourceId, &'static str, f64, &'static str)> {
    COLUMNS.iter().filter_map(|&(k, h, d, u)| cluster.resource_kinds().get(k).map(|id| (id, h, d, u))).collect()
}

/// A stop as a person reads it: the filter's own text (`insufficient memory`, `host cordoned`;
/// a closure filter's is `rejected by <name>`).
fn stop_text(stop: &Stop) -> &str {
    &stop.reason
}

/// The stops of a domain, most hosts first: `insufficient memory ×6, …`.
fn stops_of(cap: &InstanceCapacity, d: &DomainCapacity, most: usize) -> String {
    let parts: Vec<String> =
        d.stops.iter().take(most).map(|&(i, n)| format!("{} ×{n}", stop_text(&cap.stops[i as usize]))).collect();
    parts.join(", ")
}

fn print_table(cluster: &Cluster, cap: &InstanceCapacity) {
    let cols = columns(cluster);
    let mut head = format!("{:<10} {:>5}", "domain", "hosts");
    for (_, h, _, u) in &cols {
        let _ = write!(head, " {:>19}", format!("{h} free/used{u}"));
    }
    let _ = write!(head, " {:>5}  stopped by (hosts)", "fits");
    println!("{head}");
    println!("{}", "-".repeat(head.chars().count() + 16));
    for zone in &cap.zones {
        let racks = cap.racks.iter().filter(|r| rack_in_zone(cluster, cap, r, zone));
        for (d, indent) in std::iter::once((zone, "")).chain(racks.map(|r| (r, "  "))) {
            let mut line = format!("{:<10} {:>5}", format!("{indent}{}", d.name), d.hosts);
            for &(id, _, div, _) in &cols {
                let u = d.resources[id.index()];
                let _ = write!(line, " {:>19}", format!("{:.0} / {:.0}", u.free() / div, u.used / div));
            }
            let _ = write!(line, " {:>5}  {}", d.fits, stops_of(cap, d, 2));
            println!("{line}");
        }
    }
}

/// Whether rack domain `rack` lies in zone domain `zone` (its hosts' zone).
fn rack_in_zone(cluster: &Cluster, cap: &InstanceCapacity, rack: &DomainCapacity, zone: &DomainCapacity) -> bool {
    hosts_of(cluster, cap, "rack", &rack.name).next().is_some_and(|h| cluster.zone(h).unwrap_or("") == zone.name)
}

/// The hosts whose value at topology level `level` is `name`, by id.
fn hosts_of<'a>(
    cluster: &'a Cluster,
    cap: &'a InstanceCapacity,
    level: &str,
    name: &'a str,
) -> impl Iterator<Item = HostId> + 'a {
    let l = cluster.topology().level(level);
    cap.hosts.iter().map(|h| h.host).filter(move |&h| {
        let value = l.and_then(|l| {
            let d = cluster.host(h)?.domain(l);
            cluster.topology().value(l, d).map(|v| cluster.resolve(v))
        });
        value.unwrap_or("") == name
    })
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A short tag for a stop, to print on a tile.
fn tag(stop: &Stop) -> String {
    if let Some(kind) = stop.reason.strip_prefix("insufficient ") {
        return format!("no {kind}");
    }
    match stop.filter.as_deref() {
        Some("label_selector") | Some("labels") => "selector".to_owned(),
        Some("availability_zone") => "other zone".to_owned(),
        _ if stop.reason.chars().count() <= 16 => stop.reason.clone(),
        Some(f) => f.chars().take(16).collect(),
        None => "excluded".to_owned(),
    }
}

// Layout, in pixels.
const WIDTH: f64 = 1160.0;
const ROW: f64 = 78.0;
const ZONE_HEAD: f64 = 44.0;
const BAR_X: f64 = 170.0;
const BAR_W: f64 = 300.0;
const TILE_X: f64 = 640.0;
const TILE: f64 = 126.0;
/// Next-instance markers drawn on one tile; more are summed up as `+n`.
const MARKS: usize = 4;

fn render(cluster: &Cluster, cap: &InstanceCapacity, next: &[HostId], what: &str) -> String {
    let cols = columns(cluster);
    let rows: f64 = cap.zones.iter().map(|z| ZONE_HEAD + ROW * racks_in(cluster, cap, z).len() as f64).sum();
    let height = 100.0 + rows + 56.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    let _ = writeln!(
        s,
        r##"<text x="20" y="30" font-size="20" font-weight="bold" fill="#222">Capacity: {} more instances fit</text>"##,
        cap.total
    );
    let _ = writeln!(s, r##"<text x="20" y="52" font-size="13" fill="#444">{}</text>"##, esc(what));
    let _ = writeln!(
        s,
        r##"<text x="20" y="72" font-size="12" fill="#666">bars: used (dark) and free (light) of the schedulable limit per rack; tiles: one per host, with how many more fit and what stops it; orange: the next {} instances</text>"##,
        next.len()
    );
    let mut y = 100.0;
    for zone in &cap.zones {
        let _ = writeln!(
            s,
            r##"<rect x="10" y="{y}" width="{}" height="{}" fill="#f3f5f8" stroke="#d0d6de"/>"##,
            WIDTH - 20.0,
            ZONE_HEAD - 8.0
        );
        let _ = writeln!(
            s,
            r##"<text x="20" y="{}" font-size="15" font-weight="bold" fill="#222">zone {}</text><text x="130" y="{}" font-size="13" fill="#333">{} hosts · {} more fit · stopped by {}</text>"##,
            y + 23.0,
            esc(&zone.name),
            y + 23.0,
            zone.hosts,
            zone.fits,
            esc(&stops_of(cap, zone, 3))
        );
        y += ZONE_HEAD;
        for rack in racks_in(cluster, cap, zone) {
            rack_row(&mut s, cluster, cap, rack, &cols, next, y);
            y += ROW;
        }
    }
    legend(&mut s, y + 20.0);
    s.push_str("</svg>\n");
    s
}

fn racks_in<'a>(cluster: &Cluster, cap: &'a InstanceCapacity, zone: &DomainCapacity) -> Vec<&'a DomainCapacity> {
    cap.racks.iter().filter(|r| rack_in_zone(cluster, cap, r, zone)).collect()
}

fn rack_row(
    s: &mut String,
    cluster: &Cluster,
    cap: &InstanceCapacity,
    rack: &DomainCapacity,
    cols: &[(ResourceId, &str, f64, &str)],
    next: &[HostId],
    y: f64,
) {
    let _ = writeln!(
        s,
        r##"<text x="24" y="{}" font-size="13" font-weight="bold" fill="#222">{}</text><text x="24" y="{}" fill="#555">{} hosts</text><text x="24" y="{}" fill="{}" font-weight="bold">{} more fit</text>"##,
        y + 18.0,
        esc(&rack.name),
        y + 36.0,
        rack.hosts,
        y + 54.0,
        if rack.fits > 0 { "#1b7a3a" } else { "#888888" },
        rack.fits
    );
    for (i, &(id, head, div, unit)) in cols.iter().enumerate() {
        let by = y + 6.0 + 20.0 * i as f64;
        let u = rack.resources[id.index()];
        let frac = if u.limit > 0.0 { (u.used / u.limit).clamp(0.0, 1.0) } else { 0.0 };
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="end" fill="#333">{head}</text><rect x="{BAR_X}" y="{by}" width="{BAR_W}" height="14" fill="#cfe3f7"/><rect x="{BAR_X}" y="{by}" width="{:.1}" height="14" fill="#2f6db0"/><text x="{}" y="{}" fill="#333">{:.0}{unit} free of {:.0}</text>"##,
            BAR_X - 8.0,
            by + 11.0,
            BAR_W * frac,
            BAR_X + BAR_W + 8.0,
            by + 11.0,
            u.free() / div,
            u.limit / div
        );
    }
    for (k, host) in hosts_of(cluster, cap, "rack", &rack.name).enumerate() {
        let Some(h) = cap.hosts.iter().find(|h| h.host == host) else { continue };
        let x = TILE_X + TILE * k as f64;
        let fill = if h.fits == 0 { "#e4e4e4" } else { "#d8f0dc" };
        let stroke = if h.fits == 0 { "#b0b0b0" } else { "#4a9a5c" };
        let stop = h.stop.map(|i| &cap.stops[i as usize]);
        let title = format!(
            "{}: {} more fit{}",
            cluster.host_name(host),
            h.fits,
            stop.map(|s| format!("; then {}", stop_text(s))).unwrap_or_default()
        );
        let _ = writeln!(
            s,
            r##"<g><title>{}</title><rect x="{x}" y="{}" width="{}" height="{}" rx="4" fill="{fill}" stroke="{stroke}"/>"##,
            esc(&title),
            y + 2.0,
            TILE - 8.0,
            ROW - 10.0
        );
        let short = cluster.host_name(host).rsplit('-').next().unwrap_or("").to_owned();
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" font-size="11" fill="#444">{}</text><text x="{}" y="{}" font-size="20" font-weight="bold" fill="#222">{}</text><text x="{}" y="{}" font-size="11" fill="#666">{}</text>"##,
            x + 6.0,
            y + 16.0,
            esc(&short),
            x + 6.0,
            y + 40.0,
            h.fits,
            x + 6.0,
            y + 60.0,
            esc(&stop.map(tag).unwrap_or_default())
        );
        let picks: Vec<usize> = next.iter().enumerate().filter(|(_, &n)| n == host).map(|(i, _)| i + 1).collect();
        // Two rows of two at the tile's right, clear of the name and the count.
        if picks.len() > MARKS {
            let _ = writeln!(
                s,
                r##"<text x="{}" y="{}" font-size="11" font-weight="bold" fill="#b86200" text-anchor="end">+{}</text>"##,
                x + TILE - 14.0,
                y + 60.0,
                picks.len() - MARKS
            );
        }
        for (j, p) in picks.iter().take(MARKS).enumerate() {
            let cx = x + TILE - 42.0 + 20.0 * (j % 2) as f64;
            let cy = y + 16.0 + 20.0 * (j / 2) as f64;
            let _ = writeln!(
                s,
                r##"<circle cx="{cx}" cy="{cy}" r="9" fill="#f08c00"/><text x="{cx}" y="{}" font-size="10" font-weight="bold" fill="#fff" text-anchor="middle">{p}</text>"##,
                cy + 3.5
            );
        }
        s.push_str("</g>\n");
    }
}

fn legend(s: &mut String, y: f64) {
    let items: [(&str, &str, &str); 5] = [
        ("#2f6db0", "#2f6db0", "used"),
        ("#cfe3f7", "#cfe3f7", "free"),
        ("#d8f0dc", "#4a9a5c", "host with room"),
        ("#e4e4e4", "#b0b0b0", "host that takes none"),
        ("#f08c00", "#f08c00", "next instances, in order"),
    ];
    let mut x = 20.0;
    for (fill, stroke, label) in items {
        let _ = writeln!(
            s,
            r##"<rect x="{x}" y="{y}" width="16" height="16" rx="3" fill="{fill}" stroke="{stroke}"/><text x="{}" y="{}" fill="#333">{label}</text>"##,
            x + 22.0,
            y + 12.5
        );
        x += 40.0 + 7.0 * label.len() as f64;
    }
}
