//! Lexical path normalisation in the jail's view of the file system.

/// Normalises an absolute path lexically (`.` and `..` resolved, repeated `/` collapsed).
/// `None` when `..` climbs above `/`.
pub fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// True when `path` is `root` or below it (both normalised absolute paths).
pub fn is_within(path: &str, root: &str) -> bool {
    root == "/"
        || path == root
        || (path.starts_with(root) && path.as_bytes().get(root.len()) == Some(&b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_dots_and_rejects_climbing_out() {
        assert_eq!(normalize("/work/./a/../b").as_deref(), Some("/work/b"));
        assert_eq!(normalize("/work/../../etc"), None);
        assert_eq!(normalize("//etc//passwd").as_deref(), Some("/etc/passwd"));
    }

    #[test]
    fn within_respects_segment_boundaries() {
        assert!(is_within("/work/a.csv", "/work"));
        assert!(is_within("/work", "/work"));
        assert!(!is_within("/workshop/a", "/work"));
    }
}
