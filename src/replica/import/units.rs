//! Kubernetes quantities (`10Gi`, `500M`, `"1073741824"`) and RFC 3339 times, as Longhorn's
//! objects write them.

/// Bytes from a Kubernetes quantity: a plain whole number of bytes (`"1073741824"`), or a
/// number with a binary suffix (`Ki`, `Mi`, `Gi`, `Ti`, `Pi`, `Ei`: powers of 1024), a decimal
/// suffix (`k`, `M`, `G`, `T`, `P`, `E`: powers of 1000, so `M` is 10^6 and `Mi` 2^20) or an
/// exponent (`1e9`). A fraction is allowed when the bytes come out whole (`1.5Gi`). `None` for
/// anything else: an unknown suffix, a fraction of a byte, a negative number, or more than
/// `i64::MAX` bytes.
///
/// ```
/// use placewise::replica::import::parse_size;
///
/// assert_eq!(parse_size("10Gi"), Some(10 << 30));
/// assert_eq!(parse_size("20M"), Some(20_000_000));
/// assert_eq!(parse_size("1.5Gi"), Some(3 << 29));
/// assert_eq!(parse_size("21474836480"), Some(20 << 30));
/// assert_eq!(parse_size("10GB"), None);
/// ```
pub fn parse_size(text: &str) -> Option<i64> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    if number.is_empty() || number == "." {
        return None;
    }
    let (whole, fraction) = match number.split_once('.') {
        Some((w, f)) if !f.contains('.') => (w, f),
        Some(_) => return None,
        None => (number, ""),
    };
    // The value is (whole.fraction) × multiplier: exact in 128-bit integers.
    let (mult, exp10): (i128, i32) = match suffix {
        "" => (1, 0),
        "Ki" => (1 << 10, 0),
        "Mi" => (1 << 20, 0),
        "Gi" => (1 << 30, 0),
        "Ti" => (1 << 40, 0),
        "Pi" => (1 << 50, 0),
        "Ei" => (1 << 60, 0),
        "k" => (1, 3),
        "M" => (1, 6),
        "G" => (1, 9),
        "T" => (1, 12),
        "P" => (1, 15),
        "E" => (1, 18),
        s if s.starts_with(['e', 'E']) => (1, s[1..].parse::<i32>().ok().filter(|e| (0..=18).contains(e))?),
        _ => return None,
    };
    if whole.len() + fraction.len() > 30 {
        return None;
    }
    let digits: i128 = format!("{whole}{fraction}").parse().ok()?;
    let scale = exp10 - fraction.len() as i32;
    let value = if scale >= 0 {
        digits.checked_mul(10i128.checked_pow(scale as u32)?)?.checked_mul(mult)?
    } else {
        let div = 10i128.checked_pow((-scale) as u32)?;
        let n = digits.checked_mul(mult)?;
        if n % div != 0 {
            return None;
        }
        n / div
    };
    i64::try_from(value).ok()
}

/// Seconds since the Unix epoch from an RFC 3339 time (`2025-01-17T17:38:27Z`, with optional
/// fractional seconds, which are dropped, and a `Z` or `±hh:mm` offset). `None` when it does not
/// parse.
pub(crate) fn parse_time(text: &str) -> Option<i64> {
    let b = text.trim().as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = b.get(r)?;
        if s.iter().all(u8::is_ascii_digit) {
            std::str::from_utf8(s).ok()?.parse().ok()
        } else {
            None
        }
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    let offset = match b.get(i..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let minutes = num(i + 1..i + 3)? * 60 + num(i + 4..i + 6)?;
            if *sign == b'+' {
                minutes * 60
            } else {
                -minutes * 60
            }
        }
        _ => return None,
    };
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset)
}

/// RFC 3339 in UTC (`2025-01-17T17:38:27Z`) for seconds since the Unix epoch.
pub(crate) fn format_time(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let rest = seconds.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_quantities_read_as_bytes() {
        assert_eq!(parse_size("1073741824"), Some(1 << 30));
        assert_eq!(parse_size("1Ki"), Some(1024));
        assert_eq!(parse_size("1k"), Some(1000));
        assert_eq!(parse_size("20M"), Some(20_000_000), "Kubernetes M is 10^6, not Compose's MiB");
        assert_eq!(parse_size("20Mi"), Some(20 << 20));
        assert_eq!(parse_size("2Ti"), Some(2 << 40));
        assert_eq!(parse_size("1e9"), Some(1_000_000_000));
        assert_eq!(parse_size("0.5Ki"), Some(512));
        assert_eq!(parse_size(" 7 "), Some(7));
        for bad in ["", "Gi", "-1", "1.5", "0.1k1", "1K", "1m", "10GB", "1.2.3", "99999999999Ei", "1e19", "."] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn rfc3339_times_read_and_write() {
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_time("2025-01-17T17:38:27Z"), Some(1_737_135_507));
        assert_eq!(parse_time("2025-01-17T17:38:27.123456Z"), Some(1_737_135_507));
        assert_eq!(parse_time("2025-01-17T18:38:27+01:00"), Some(1_737_135_507));
        assert_eq!(format_time(1_737_135_507), "2025-01-17T17:38:27Z");
        for t in [0, 86_399, 951_782_400, 4_102_444_800, -86_400] {
            assert_eq!(parse_time(&format_time(t)), Some(t), "{t}");
        }
        for bad in ["", "2025-01-17", "2025-13-01T00:00:00Z", "2025-01-17T17:38:27", "yesterday"] {
            assert_eq!(parse_time(bad), None, "{bad:?}");
        }
    }
}
