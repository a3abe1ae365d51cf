//! Session ids and where they point: 128 random bits, and with `WARDEN_NODE` the server's boot
//! epoch and node, so that a router sends a session's requests to the node that holds it and a
//! node tells its own sessions of an earlier life from ones that never existed
//! (docs/scale-out.md).
//!
//! Owns: making, reading and placing ids; the boot epoch; the node's name. Does not own: the
//! sessions (`sessions.rs`).

use std::io::Read;

/// A session id: 128 random bits, hex (unguessable; a session is also bound to its owner). When
/// `WARDEN_NODE` names this server's node, the id goes on with `-`, the server's boot epoch
/// (decimal), `.` and the node, so that a router in front of several servers sends a session's
/// requests to the node that holds it, and a node can tell its own sessions of an earlier life from
/// ones that never existed (docs/scale-out.md).
pub(super) fn new_id(epoch: u64) -> String {
    with_node(random_hex(), node().map(|node| (epoch, node)))
}

pub(super) fn with_node(hex: String, node: Option<(u64, &str)>) -> String {
    match node {
        Some((epoch, node)) => format!("{hex}-{epoch}.{node}"),
        None => hex,
    }
}

/// The node a session id names (what follows the first `.`), if it names one.
pub fn node_of(id: &str) -> Option<&str> {
    id.split_once('.')
        .map(|(_, node)| node)
        .filter(|node| !node.is_empty())
}

/// The boot epoch a session id names: the decimal after the 32 hex digits and `-`, before the `.`
/// (`None` for an id without one, such as the ids of servers before epochs).
pub(super) fn epoch_of(id: &str) -> Option<u64> {
    let (head, _) = id.split_once('.')?;
    let (hex, epoch) = head.split_once('-')?;
    let digits_ok =
        !epoch.is_empty() && epoch.len() <= 20 && epoch.bytes().all(|b| b.is_ascii_digit());
    (is_hex_id(hex) && digits_ok)
        .then(|| epoch.parse().ok())
        .flatten()
}

pub(super) fn is_hex_id(hex: &str) -> bool {
    hex.len() == 32 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Where a session this server does not hold is, as far as its id tells (only a server with a
/// node can tell; every other id is "no such session").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elsewhere {
    /// The id names another node (`421 wrong_node`).
    OtherNode(String),
    /// The id is this node's, from an earlier life of the server: the session is gone with that
    /// life (`410 session_lost`).
    EarlierLife,
}

/// Where the session `id` is when this server (`node`, `epoch`) does not hold it: another node's,
/// this node's from an earlier life, or `None` (an id that never existed, another client's, or
/// one of this life that has ended: 404, as a single server answers). Judged from the id alone, so
/// it says nothing about the sessions of other clients.
pub(super) fn elsewhere(id: &str, node: Option<&str>, epoch: u64) -> Option<Elsewhere> {
    let mine = node?;
    let (head, named) = id.split_once('.')?;
    let hex = head.split_once('-').map_or(head, |(hex, _)| hex);
    if !is_hex_id(hex) || !is_node_name(named) {
        return None;
    }
    if named != mine {
        return Some(Elsewhere::OtherNode(named.to_owned()));
    }
    // An id of this node without an epoch comes from a server before epochs: an earlier life.
    match epoch_of(id) {
        Some(then) if then >= epoch => None,
        Some(_) => Some(Elsewhere::EarlierLife),
        None if head == hex => Some(Elsewhere::EarlierLife),
        None => None,
    }
}

/// This server's boot epoch: the time it started, in milliseconds since 1970, and always past the
/// epoch the previous server on this state directory recorded (`<state_dir>/epoch`), so that a
/// clock set back does not give a new life the epoch of an old one. Called with the state
/// directory locked (`Executor::new`).
pub fn boot_epoch(state_dir: &std::path::Path) -> anyhow::Result<u64> {
    use anyhow::Context;
    let path = state_dir.join("epoch");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let previous = match std::fs::read_to_string(&path) {
        Ok(text) => text.trim().parse::<u64>().ok(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => {
            return Err(err).with_context(|| format!("cannot read {}", path.display()));
        }
    };
    let epoch = previous.map_or(now, |previous| now.max(previous.saturating_add(1)));
    let temporary = state_dir.join("epoch.new");
    std::fs::write(&temporary, format!("{epoch}\n"))
        .and_then(|()| std::fs::rename(&temporary, &path))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(epoch)
}

/// This server's node: `WARDEN_NODE` (in Kubernetes, the pod's `spec.nodeName` through the downward
/// API) when it is a DNS name (lower-case letters, digits, `-` and `.`, at most 253), else none.
pub fn node() -> Option<&'static str> {
    static NODE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    NODE.get_or_init(|| {
        std::env::var("WARDEN_NODE")
            .ok()
            .filter(|name| is_node_name(name))
    })
    .as_deref()
}

pub(super) fn is_node_name(name: &str) -> bool {
    let edges_ok =
        |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    name.len() <= 253
        && edges_ok(name.chars().next())
        && edges_ok(name.chars().last())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
}

pub(super) fn random_hex() -> String {
    let mut bytes = [0u8; 16];
    let filled = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if filled.is_err() {
        // Never reached on Linux; still unique within the server.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = (nanos ^ (u128::from(std::process::id()) << 64)).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn ids_are_long_hex_and_differ() {
        // The tests run without WARDEN_NODE: the id is the bare 128 bits, as before epochs.
        let a = new_id(7);
        let b = new_id(7);
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    pub(super) fn ids_name_the_node_and_the_epoch_when_there_is_a_node() {
        let hex = "0123456789abcdef0123456789abcdef".to_owned();
        let id = with_node(hex.clone(), Some((1_764_000_000_123, "worker-3.zone-b")));
        assert_eq!(id, format!("{hex}-1764000000123.worker-3.zone-b"));
        assert_eq!(node_of(&id), Some("worker-3.zone-b"));
        assert_eq!(epoch_of(&id), Some(1_764_000_000_123));
        assert_eq!(with_node(hex.clone(), None), hex);
        assert_eq!(node_of(&hex), None);
        assert_eq!(epoch_of(&hex), None);
        assert_eq!(node_of(&format!("{hex}.")), None);
        assert_eq!(epoch_of(&format!("{hex}-.n")), None);
        assert_eq!(epoch_of(&format!("{hex}-12a.n")), None);
        assert_eq!(epoch_of(&format!("{}-12.n", &hex[1..])), None);
        for good in ["n", "worker-3", "ip-10-0-0-7.ec2.internal"] {
            assert!(is_node_name(good), "{good}");
        }
        let long = "a".repeat(254);
        for bad in ["", "-a", "a-", "Node", "a/b", "a b", "a_b", &long] {
            assert!(!is_node_name(bad), "{bad}");
        }
    }

    #[test]
    pub(super) fn an_id_not_held_is_placed_by_its_node_and_epoch() {
        let hex = "0123456789abcdef0123456789abcdef";
        let here = Some("n1");
        // Another node's, with or without an epoch.
        assert_eq!(
            elsewhere(&format!("{hex}-5.n2.zone"), here, 9),
            Some(Elsewhere::OtherNode("n2.zone".to_owned()))
        );
        assert_eq!(
            elsewhere(&format!("{hex}.n2"), here, 9),
            Some(Elsewhere::OtherNode("n2".to_owned()))
        );
        // This node's, from an earlier life (or from a server before epochs).
        assert_eq!(
            elsewhere(&format!("{hex}-8.n1"), here, 9),
            Some(Elsewhere::EarlierLife)
        );
        assert_eq!(
            elsewhere(&format!("{hex}.n1"), here, 9),
            Some(Elsewhere::EarlierLife)
        );
        // This life's or a later one's, malformed ids, and any id on a server without a node:
        // no such session.
        for id in [
            format!("{hex}-9.n1"),
            format!("{hex}-10.n1"),
            format!("{hex}-x.n1"),
            hex.to_owned(),
            format!("{}-8.n1", &hex[2..]),
            format!("{hex}-8.N1"),
            format!("{hex}-8."),
            "../etc".to_owned(),
        ] {
            assert_eq!(elsewhere(&id, here, 9), None, "{id}");
        }
        assert_eq!(elsewhere(&format!("{hex}-5.n2"), None, 9), None);
    }

    #[test]
    pub(super) fn the_boot_epoch_only_grows() {
        let dir = tempfile::tempdir().unwrap();
        let first = boot_epoch(dir.path()).unwrap();
        let second = boot_epoch(dir.path()).unwrap();
        assert!(second > first, "{first} {second}");
        // A clock set back: the next life still comes after the recorded one.
        let ahead = second + 3_600_000;
        std::fs::write(dir.path().join("epoch"), format!("{ahead}\n")).unwrap();
        assert_eq!(boot_epoch(dir.path()).unwrap(), ahead + 1);
        assert!(!dir.path().join("epoch.new").exists());
    }
}
