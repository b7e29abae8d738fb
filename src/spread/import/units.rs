//! Docker's units: API integers (nanoCPUs, bytes) and Compose's strings (`cpus: '0.5'`,
//! `memory: 20M`, which is 20 MiB: Docker's units are binary, unlike Kubernetes' `M`).

/// Bytes in a MiB, the unit of the `memory_mb` resource kind.
pub(super) const MIB: f64 = 1_048_576.0;

/// NanoCPUs in a CPU.
pub(super) const NANO: f64 = 1e9;

/// Compose's memory size, as Docker's `RAMInBytes` reads it: a decimal number, optional
/// space, an optional unit `b`, `k`, `m`, `g`, `t` or `p` (any case, powers of 1024), then an
/// optional `i` and an optional `b` (`20M`, `1.5gb`, `512Mi`, `100`). `None` when it does not
/// parse or overflows.
pub(super) fn ram_in_bytes(text: &str) -> Option<i64> {
    let text = text.trim();
    let digits_end = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, rest) = text.split_at(digits_end);
    if number.is_empty() || number.starts_with('.') || number.ends_with('.') {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    let mut rest = rest.strip_prefix(' ').unwrap_or(rest).chars().peekable();
    let mut multiplier = 1.0_f64;
    if let Some(&c) = rest.peek() {
        let power = match c.to_ascii_lowercase() {
            'k' => 1,
            'm' => 2,
            'g' => 3,
            't' => 4,
            'p' => 5,
            _ => 0,
        };
        if power > 0 {
            multiplier = 1024f64.powi(power);
            rest.next();
            if rest.peek().is_some_and(|c| c.eq_ignore_ascii_case(&'i')) {
                rest.next();
            }
        }
    }
    if rest.peek().is_some_and(|c| c.eq_ignore_ascii_case(&'b')) {
        rest.next();
    }
    if rest.next().is_some() {
        return None;
    }
    let bytes = value * multiplier;
    // Docker truncates toward zero (`int64(size * unit)`).
    (bytes.is_finite() && bytes < i64::MAX as f64).then(|| bytes.trunc() as i64)
}

/// Compose's `cpus` (a decimal string, or a number) as nanoCPUs, rounded as Docker's
/// `ParseCPUs` does. `None` when it does not parse, is negative or is too large.
pub(super) fn cpus_in_nanos(text: &str) -> Option<i64> {
    let cpus: f64 = text.trim().parse().ok()?;
    let nanos = (cpus * NANO).round();
    (cpus.is_finite() && nanos >= 0.0 && nanos < i64::MAX as f64).then_some(nanos as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compose_memory_is_binary() {
        assert_eq!(ram_in_bytes("20M"), Some(20 * 1024 * 1024), "20M is 20 MiB, not 20 × 10^6");
        assert_eq!(ram_in_bytes("20971520"), Some(20_971_520), "the normalised form: bytes");
        assert_eq!(ram_in_bytes("1.5g"), Some(3 << 29));
        assert_eq!(ram_in_bytes("512Mi"), Some(512 << 20));
        assert_eq!(ram_in_bytes("64kb"), Some(64 << 10));
        assert_eq!(ram_in_bytes("1 GiB"), Some(1 << 30));
        assert_eq!(ram_in_bytes("100b"), Some(100));
        for bad in ["", "M", "20X", "-1M", "1..5M", "20 M M", ".5M"] {
            assert_eq!(ram_in_bytes(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn compose_cpus_are_decimal_nanocpus() {
        assert_eq!(cpus_in_nanos("0.0001"), Some(100_000));
        assert_eq!(cpus_in_nanos("1.5"), Some(1_500_000_000));
        assert_eq!(cpus_in_nanos(" 2 "), Some(2_000_000_000));
        assert_eq!(cpus_in_nanos("-1"), None);
        assert_eq!(cpus_in_nanos("half"), None);
    }
}
