//! The memory a pooled jail holds: the proportional set size (PSS) of a process tree, read from
//! `/proc`.
//!
//! Owns: reading `/proc/PID/smaps_rollup` and `/proc/PID/task/*/children`. Does not own: the
//! budget it is held to (`pool.rs`, `pool.memory_mib`).

use std::collections::BTreeSet;

/// The proportional memory (PSS, bytes) of `pid` and every process below it, from
/// `/proc/PID/smaps_rollup` (0 for what cannot be read).
pub fn tree_pss(pid: u32) -> u64 {
    let mut total = 0;
    let mut todo = vec![pid];
    let mut seen = BTreeSet::new();
    while let Some(pid) = todo.pop() {
        if !seen.insert(pid) || seen.len() > 4096 {
            continue;
        }
        total += smaps_field(pid, "Pss:");
        todo.extend(children(pid));
    }
    total
}

/// A field of `/proc/PID/smaps_rollup`, in bytes (0 when unreadable).
pub fn smaps_field(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|line| line.starts_with(field))
                .and_then(|line| line.split_whitespace().nth(1))
                .and_then(|kib| kib.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}

fn children(pid: u32) -> Vec<u32> {
    use std::io::Read;
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    for task in tasks.flatten() {
        // One `read`: the kernel renders the list anew at each read from an entry index, so a
        // child reaped between two smaller reads would hide a live sibling.
        let Ok(mut file) = std::fs::File::open(task.path().join("children")) else {
            continue;
        };
        let Ok(n) = file.read(&mut buf) else {
            continue;
        };
        found.extend(
            String::from_utf8_lossy(&buf[..n])
                .split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    found
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn the_memory_of_this_process_tree_is_measured() {
        assert!(tree_pss(std::process::id()) > 0);
    }
}
