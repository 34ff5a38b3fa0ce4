//! Quantities with units, as scenario files write them: `"622Mbps"`, `"14.5ms"`, `"240pkt"`,
//! `"1500B"`. Decimal prefixes for rates and sizes (`KB` = 1000 B), binary ones spelled out
//! (`KiB` = 1024 B), as network papers use them.

/// The largest integer any quantity may resolve to: 2^62 (146 years in ns, 4.6 Ebit/s, 4 EiB),
/// so that the sums the drivers form (a time plus a delay, bytes over a run) stay within the
/// 64-bit representation. Anything larger is refused, never saturated or wrapped.
pub const MAX_QUANTITY: u64 = 1 << 62;

/// `v * scale` rounded to an integer, or an error if it does not fit under [`MAX_QUANTITY`].
fn to_integer(s: &str, v: f64, scale: f64) -> Result<u64, String> {
    let x = (v * scale).round();
    if x > MAX_QUANTITY as f64 {
        return Err(format!("'{}' is too large (at most 2^62 in the base unit)", s.trim()));
    }
    Ok(x as u64)
}

/// Splits `"14.5ms"` into `(14.5, "ms")`.
fn split_number(s: &str) -> Result<(f64, &str), String> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == 'e' || *c == 'E' || *c == '-' || *c == '+'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    // "1e3ms" is fine, but an 'e' that starts the unit (none of ours do) would be eaten; units
    // here never start with e/E.
    let (num, unit) = s.split_at(end);
    let value: f64 = num.parse().map_err(|_| format!("'{s}' does not start with a number"))?;
    if !value.is_finite() {
        return Err(format!("'{s}' is not a finite number"));
    }
    Ok((value, unit.trim()))
}

/// A time span in nanoseconds: `ns`, `us`, `ms`, `s`.
pub fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let (v, unit) = split_number(s)?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return Err(format!("'{s}': expected a time like \"14.5ms\" (units ns, us, ms, s)")),
    };
    if v < 0.0 {
        return Err(format!("'{s}': a time cannot be negative"));
    }
    to_integer(s, v, scale)
}

/// A rate in bit/s. Bits are a lower-case `b`, bytes an upper-case `B` (the IEC/SI convention
/// network papers follow): `bps`, `kbps`, `Mbps`, `Gbps`, `Tbps` (also `bit/s`, `kbit/s`, ...)
/// are bits per second; `Bps`, `kBps`, `MBps`, `GBps`, `TBps` (also `B/s`, `kB/s`, ...) are
/// bytes per second, eight times as many bits. Case matters: a spelling whose case hides
/// which one is meant (`gbps`, `MBPS`, `mbps`: milli?) is refused, never guessed.
pub fn parse_rate_bps(s: &str) -> Result<u64, String> {
    let (v, unit) = split_number(s)?;
    let scale = match rate_unit_scale(unit) {
        Some(scale) => scale,
        None => return Err(rate_unit_error(s, unit)),
    };
    if v < 0.0 {
        return Err(format!("'{s}': a rate cannot be negative"));
    }
    to_integer(s, v, scale)
}

/// Bits per second in one `unit`, for the exact (case-sensitive) spellings `parse_rate_bps`
/// accepts.
fn rate_unit_scale(unit: &str) -> Option<f64> {
    let (prefix, per_unit) = if let Some(p) = unit.strip_suffix("bps").or_else(|| unit.strip_suffix("bit/s")) {
        (p, 1.0)
    } else if let Some(p) = unit.strip_suffix("Bps").or_else(|| unit.strip_suffix("B/s")) {
        (p, 8.0)
    } else {
        return None;
    };
    let prefix_scale = match prefix {
        "" => 1.0,
        // SI writes kilo `k`; `K` is common for rates and cannot mean anything else.
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        _ => return None,
    };
    Some(prefix_scale * per_unit)
}

/// The error for a rate unit `parse_rate_bps` does not accept: for a spelling that differs from
/// an accepted one only in case, which ones it could have meant.
fn rate_unit_error(s: &str, unit: &str) -> String {
    const SPELLINGS: [&str; 20] = [
        "bps", "kbps", "Kbps", "Mbps", "Gbps", "Tbps", "bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s", "Bps", "kBps",
        "KBps", "MBps", "GBps", "TBps", "B/s", "MB/s", "GB/s",
    ];
    let near: Vec<&str> = SPELLINGS.iter().copied().filter(|c| c.eq_ignore_ascii_case(unit) && *c != unit).collect();
    if near.is_empty() {
        format!(
            "'{s}': expected a rate like \"622Mbps\" (bits: bps, kbps, Mbps, Gbps, Tbps; bytes: Bps, kBps, \
             MBps, GBps, TBps)"
        )
    } else {
        format!(
            "'{s}': ambiguous rate unit '{unit}': units are case-sensitive, 'b' is bits and 'B' bytes; \
             write one of {}",
            near.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ")
        )
    }
}

/// A size in bytes: `B`, `KB`, `MB`, `GB` (decimal), `KiB`, `MiB`, `GiB` (binary).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let (v, unit) = split_number(s)?;
    let scale = match unit {
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("'{s}': expected a size like \"1500B\" (units B, KB, MB, GB, KiB, MiB, GiB)")),
    };
    if v < 0.0 {
        return Err(format!("'{s}': a size cannot be negative"));
    }
    to_integer(s, v, scale)
}

/// A buffer or threshold: packets (`"240pkt"`), bytes (`"100KB"`), or (if allowed) `"unlimited"`.
#[derive(Copy, Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Amount {
    Packets(f64),
    Bytes(f64),
    Unlimited,
}

pub fn parse_amount(s: &str, allow_unlimited: bool) -> Result<Amount, String> {
    if s.trim() == "unlimited" {
        return if allow_unlimited {
            Ok(Amount::Unlimited)
        } else {
            Err(format!("'{s}': expected an amount like \"240pkt\" or \"100KB\""))
        };
    }
    let (v, unit) = split_number(s)?;
    if v < 0.0 {
        return Err(format!("'{s}': an amount cannot be negative"));
    }
    if v > MAX_QUANTITY as f64 {
        return Err(format!("'{}' is too large (at most 2^62 in the base unit)", s.trim()));
    }
    match unit {
        "pkt" | "pkts" | "packets" => Ok(Amount::Packets(v)),
        _ => parse_bytes(s).map(|b| Amount::Bytes(b as f64)).map_err(|_| {
            let extra = if allow_unlimited { ", or \"unlimited\"" } else { "" };
            format!("'{s}': expected packets like \"240pkt\" or bytes like \"100KB\"{extra}")
        }),
    }
}

/// The number behind a quantity in SI base units: seconds, bit/s, bytes, or a packet count
/// (`"5ms"` -> 0.005, `"10Mbps"` -> 1e7); `None` if it is not a quantity this parser accepts.
/// Python's sweep catalog and plots read parameter values through this (one units parser).
pub fn si_value(s: &str) -> Option<f64> {
    if let Ok(ns) = parse_duration_ns(s) {
        return Some(ns as f64 / 1e9);
    }
    if let Ok(bps) = parse_rate_bps(s) {
        return Some(bps as f64);
    }
    match parse_amount(s, false) {
        Ok(Amount::Packets(p)) => Some(p),
        Ok(Amount::Bytes(b)) => Some(b),
        _ => None,
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn si_values_are_in_base_units() {
        assert_eq!(si_value("5ms"), Some(0.005));
        assert_eq!(si_value("10Mbps"), Some(1e7));
        assert_eq!(si_value("1.5KB"), Some(1500.0));
        assert_eq!(si_value("1KiB"), Some(1024.0));
        assert_eq!(si_value("30pkt"), Some(30.0));
        assert_eq!(si_value("unlimited"), None);
        assert_eq!(si_value("fast"), None);
        assert_eq!(si_value("1e300s"), None);
    }
    use super::*;

    #[test]
    fn parses_the_units_papers_use() {
        assert_eq!(parse_rate_bps("622Mbps"), Ok(622_000_000));
        assert_eq!(parse_rate_bps("1Gbps"), Ok(1_000_000_000));
        assert_eq!(parse_rate_bps("2.5 Gbps"), Ok(2_500_000_000));
        assert_eq!(parse_duration_ns("14.5ms"), Ok(14_500_000));
        assert_eq!(parse_duration_ns("1us"), Ok(1_000));
        assert_eq!(parse_duration_ns("60s"), Ok(60_000_000_000));
        assert_eq!(parse_bytes("1500B"), Ok(1500));
        assert_eq!(parse_bytes("4KB"), Ok(4000));
        assert_eq!(parse_bytes("1KiB"), Ok(1024));
        assert_eq!(parse_amount("240pkt", false), Ok(Amount::Packets(240.0)));
        assert_eq!(parse_amount("unlimited", true), Ok(Amount::Unlimited));
    }

    #[test]
    fn rejects_bad_units_and_signs() {
        assert!(parse_rate_bps("10Mbs").unwrap_err().contains("expected a rate"));
        assert!(parse_duration_ns("-3ms").unwrap_err().contains("negative"));
        assert!(parse_duration_ns("3").is_err());
        assert!(parse_bytes("ten B").is_err());
        assert!(parse_amount("unlimited", false).is_err());
        assert!(parse_amount("-3pkt", true).is_err());
    }

    /// Every rate spelling: bits with a lower-case `b`, bytes with an upper-case `B` (x8).
    #[test]
    fn every_rate_spelling_reads_bits_or_bytes() {
        let cases: &[(&str, u64)] = &[
            ("1bps", 1),
            ("1kbps", 1_000),
            ("1Kbps", 1_000),
            ("1Mbps", 1_000_000),
            ("1Gbps", 1_000_000_000),
            ("1Tbps", 1_000_000_000_000),
            ("1bit/s", 1),
            ("1kbit/s", 1_000),
            ("1Kbit/s", 1_000),
            ("1Mbit/s", 1_000_000),
            ("1Gbit/s", 1_000_000_000),
            ("1Tbit/s", 1_000_000_000_000),
            ("1Bps", 8),
            ("1kBps", 8_000),
            ("1KBps", 8_000),
            ("1MBps", 8_000_000),
            ("1GBps", 8_000_000_000),
            ("1TBps", 8_000_000_000_000),
            ("1B/s", 8),
            ("1kB/s", 8_000),
            ("1KB/s", 8_000),
            ("1MB/s", 8_000_000),
            ("1GB/s", 8_000_000_000),
            ("1TB/s", 8_000_000_000_000),
        ];
        for &(text, bps) in cases {
            assert_eq!(parse_rate_bps(text), Ok(bps), "{text}");
        }
        // The case: gigabytes per second are 8 Gbit/s, never 1 Gbit/s.
        assert_eq!(parse_rate_bps("1GBps"), Ok(8_000_000_000));
    }

    /// A spelling whose case hides bits or bytes (or milli against mega) is an error that
    /// names the spellings it could mean.
    #[test]
    fn ambiguous_rate_spellings_are_errors() {
        for text in ["1gbps", "1GBPS", "1mbps", "1MBPS", "1tbps", "1BPS", "1gbit/s", "1mb/s", "1gb/s"] {
            let err = parse_rate_bps(text).unwrap_err();
            assert!(err.contains("ambiguous") && err.contains("case-sensitive"), "{text}: {err}");
        }
        let err = parse_rate_bps("1gbps").unwrap_err();
        assert!(err.contains("\"Gbps\"") && err.contains("\"GBps\""), "{err}");
        for text in ["1Mbs", "1Mb", "1M", "1 Mbits", "1xbps", "1mBps"] {
            assert!(parse_rate_bps(text).is_err(), "{text}");
        }
    }

    /// Every size spelling; `b` (bits) is not a size, and case matters.
    #[test]
    fn every_size_spelling_reads_bytes() {
        let cases: &[(&str, u64)] = &[
            ("3B", 3),
            ("3KB", 3_000),
            ("3kB", 3_000),
            ("3MB", 3_000_000),
            ("3GB", 3_000_000_000),
            ("3KiB", 3 * 1024),
            ("3MiB", 3 * 1024 * 1024),
            ("3GiB", 3 * 1024 * 1024 * 1024),
        ];
        for &(text, bytes) in cases {
            assert_eq!(parse_bytes(text), Ok(bytes), "{text}");
        }
        for text in ["3b", "3kb", "3Kb", "3mb", "3Mb", "3gb", "3kib", "3MIB", "3bytes"] {
            assert!(parse_bytes(text).is_err(), "{text}");
        }
    }

    /// Every time spelling, and the ones refused (case matters: `MS` or `S` are not times).
    #[test]
    fn every_time_spelling() {
        let cases: &[(&str, u64)] =
            &[("2ns", 2), ("2us", 2_000), ("2µs", 2_000), ("2ms", 2_000_000), ("2s", 2_000_000_000)];
        for &(text, ns) in cases {
            assert_eq!(parse_duration_ns(text), Ok(ns), "{text}");
        }
        for text in ["2", "2MS", "2S", "2Ms", "2sec", "2min"] {
            assert!(parse_duration_ns(text).is_err(), "{text}");
        }
    }

    /// Packet amounts and their spellings.
    #[test]
    fn every_amount_spelling() {
        for text in ["5pkt", "5pkts", "5packets"] {
            assert_eq!(parse_amount(text, false), Ok(Amount::Packets(5.0)), "{text}");
        }
        assert_eq!(parse_amount("5KB", false), Ok(Amount::Bytes(5000.0)));
        for text in ["5PKT", "5p", "5", "5kb"] {
            assert!(parse_amount(text, true).is_err(), "{text}");
        }
    }
}
