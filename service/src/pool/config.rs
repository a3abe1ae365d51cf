//! `[pool]` of the server's configuration: as written ([`RawPool`]) and validated ([`PoolConfig`]).
//!
//! Owns: the keys, their defaults and their bounds. Does not own: what the pool does with them
//! (`pool.rs`).

use std::time::Duration;

use serde::Deserialize;

/// Default `pool.depth`: jails kept waiting per policy.
pub const DEFAULT_DEPTH: usize = 2;
/// Default `pool.memory_mib`: what the waiting jails may hold in all (their proportional share of
/// memory, PSS).
pub const DEFAULT_MEMORY_MIB: u64 = 1024;
/// Default `pool.max_idle_ms`: a jail waiting longer is discarded and replaced (10 minutes).
pub const DEFAULT_MAX_IDLE_MS: u64 = 600_000;
/// Default `pool.template_forks`: jails one template forks before a fresh one replaces it.
pub const DEFAULT_TEMPLATE_FORKS: u64 = 1000;
/// Default `pool.template_max_age_ms`: a template older than this is replaced (10 minutes).
pub const DEFAULT_TEMPLATE_MAX_AGE_MS: u64 = 600_000;
/// `[pool]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPool {
    enabled: Option<bool>,
    depth: Option<usize>,
    memory_mib: Option<u64>,
    max_idle_ms: Option<u64>,
    template: Option<bool>,
    template_forks: Option<u64>,
    template_max_age_ms: Option<u64>,
}

/// `[pool]`, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolConfig {
    /// Whether jails are pre-started at all (default true).
    pub enabled: bool,
    /// Jails kept waiting per policy.
    pub depth: usize,
    /// What the waiting jails may hold in all (PSS); none is started past it.
    pub memory_bytes: u64,
    /// A jail waiting longer is discarded and replaced.
    pub max_idle: Duration,
    /// Fork the pooled jails from a per-policy template that imported the preload once (default
    /// true); off: every pooled jail starts its own interpreter and imports the preload itself.
    pub template: bool,
    /// A template forks at most this many jails, then a fresh one (a new process: its own ASLR
    /// layout, stack canary and hash secret) takes over.
    pub template_forks: u64,
    /// ... and is replaced when it is older than this.
    pub template_max_age: Duration,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            depth: DEFAULT_DEPTH,
            memory_bytes: DEFAULT_MEMORY_MIB << 20,
            max_idle: Duration::from_millis(DEFAULT_MAX_IDLE_MS),
            template: true,
            template_forks: DEFAULT_TEMPLATE_FORKS,
            template_max_age: Duration::from_millis(DEFAULT_TEMPLATE_MAX_AGE_MS),
        }
    }
}

impl PoolConfig {
    pub(crate) fn from_raw(raw: &RawPool) -> anyhow::Result<Self> {
        let depth = raw.depth.unwrap_or(DEFAULT_DEPTH);
        anyhow::ensure!(
            (1..=64).contains(&depth),
            "pool.depth must be 1 to 64 (turn the pool off with pool.enabled = false)"
        );
        let memory_mib = raw.memory_mib.unwrap_or(DEFAULT_MEMORY_MIB);
        anyhow::ensure!(memory_mib >= 1, "pool.memory_mib must be at least 1");
        let max_idle_ms = raw.max_idle_ms.unwrap_or(DEFAULT_MAX_IDLE_MS);
        anyhow::ensure!(
            max_idle_ms >= 1000,
            "pool.max_idle_ms must be at least 1000"
        );
        let template_forks = raw.template_forks.unwrap_or(DEFAULT_TEMPLATE_FORKS);
        anyhow::ensure!(
            template_forks >= 1,
            "pool.template_forks must be at least 1"
        );
        let template_max_age_ms = raw
            .template_max_age_ms
            .unwrap_or(DEFAULT_TEMPLATE_MAX_AGE_MS);
        anyhow::ensure!(
            template_max_age_ms >= 1000,
            "pool.template_max_age_ms must be at least 1000"
        );
        Ok(Self {
            enabled: raw.enabled.unwrap_or(true),
            depth,
            memory_bytes: memory_mib.saturating_mul(1 << 20),
            max_idle: Duration::from_millis(max_idle_ms),
            template: raw.template.unwrap_or(true),
            template_forks,
            template_max_age: Duration::from_millis(template_max_age_ms),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parse(text: &str) -> anyhow::Result<PoolConfig> {
        let raw: RawPool =
            warden_policy::settings::parse_toml(text).map_err(|err| anyhow::anyhow!("{err}"))?;
        PoolConfig::from_raw(&raw)
    }

    #[test]
    fn the_pool_is_on_by_default_and_its_keys_are_checked() {
        assert_eq!(parse("").unwrap(), PoolConfig::default());
        let config = parse("enabled = false\ndepth = 3\nmemory_mib = 512\n").unwrap();
        assert!(!config.enabled);
        assert_eq!(config.depth, 3);
        assert_eq!(config.memory_bytes, 512 << 20);
        for bad in ["depth = 0", "memory_mib = 0", "max_idle_ms = 5", "size = 2"] {
            assert!(parse(bad).is_err(), "{bad} accepted");
        }
    }
}
