//! The memory an expansion (`count = N`) will need, estimated before anything is allocated,
//! against what the machine has: a typo like `count = 100000000000` is refused at once with the
//! estimate, instead of filling the machine.

/// What a driver keeps per resolved entry beyond the entry itself, as a round lower bound (a
/// flow's sender, receiver and record are of this order).
const DRIVER_BYTES_PER_ENTRY: u64 = 1024;

/// Bytes one copy of `entry` takes to expand, type and run: its text, the `Value` copy being
/// typed, the typed entry, and the driver's state.
pub fn per_entry_bytes<T>(entry: &serde_json::Value) -> u64 {
    let text = serde_json::to_string(entry).map_or(0, |t| t.len() as u64);
    3 * text + std::mem::size_of::<T>() as u64 + DRIVER_BYTES_PER_ENTRY
}

/// Refuses a total above the memory available now (`MemAvailable`); no limit where the
/// machine does not say.
pub fn check(total: u64, per_copy: u64, copies: u64) -> Result<(), String> {
    match available_bytes() {
        Some(avail) if total > avail => Err(format!(
            "count = {copies} would need about {} of memory (about {} each, with the entries before), \
             more than the {} this machine has available",
            human(total),
            human(per_copy),
            human(avail)
        )),
        _ => Ok(()),
    }
}

/// `MemAvailable` of /proc/meminfo, in bytes.
fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

fn human(bytes: u64) -> String {
    let b = bytes as f64;
    match b {
        b if b >= 1e12 => format!("{:.1} TB", b / 1e12),
        b if b >= 1e9 => format!("{:.1} GB", b / 1e9),
        b if b >= 1e6 => format!("{:.1} MB", b / 1e6),
        b if b >= 1e3 => format!("{:.1} KB", b / 1e3),
        b => format!("{b} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expansion_beyond_the_machine_is_refused_with_the_estimate() {
        let entry = serde_json::json!({"name": "h{i}"});
        let per = per_entry_bytes::<u64>(&entry);
        assert!(per > 1024 && per < 2048, "{per}");
        let err = check(per * 100_000_000_000, per, 100_000_000_000).unwrap_err();
        assert!(err.contains("TB") && err.contains("available"), "{err}");
        assert!(check(per * 10, per, 10).is_ok());
    }
}
