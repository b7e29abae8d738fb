//! A scheduler process for tests: a burst of single-instance requests against PostgreSQL.
//! See `placewise_postgres::fleet::worker_main` for the flags and the output.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = placewise_postgres::fleet::worker_main(&args) {
        eprintln!("placewise-burst: {e}");
        std::process::exit(1);
    }
}
