//! The passes a case can go through — one per layer or combination of layers under test — and the
//! selection a run makes (`--passes`).
//!
//! A pass is either the policy alone (`warden check`) or one `warden run` with the flags that pick
//! its layers: the policy alone, the runtime hooks alone (with the jail they run in), the jail
//! alone, all of them. Adding a pass is a new variant here with its `warden run` flags in
//! [`Pass::run_flags`] (and, for a layer only newer wardens have, the flag that shows it in
//! [`Pass::needs_flag`]), its place in the runner (`runner/attack.rs`, `runner/benign.rs`) and its
//! column in `report.rs`; everything else (the command line, the JSON report's `passes`, which
//! columns show) follows from this list.
//! Owns: the names, the order and the selection. Does not own: running a pass (`runner.rs`).

use std::collections::BTreeSet;
use std::fmt;

use serde::Serialize;

/// One pass of the corpus runner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Pass {
    /// The policy alone: `warden check --format json` over every file.
    Policy,
    /// The runtime layer alone: `warden run --no-policy` with warden's audit hook on (in the jail,
    /// which a program cannot run without); an attack is stopped by it when the result record's
    /// `stopped_by` names the runtime layer, and every host-side check must hold.
    Runtime,
    /// The jail alone: `warden run --no-policy` (and `--no-hooks` when warden has runtime hooks);
    /// attacks must be contained.
    Jail,
    /// The full pipeline: `warden run` (attacks denied or contained; benign programs run).
    Full,
    /// Through the warm pool: each attack sent to a `warden serve` the runner started with its
    /// pool on and the static layer off (`pool.rs`); every host-side check must hold and the
    /// record must say the program ran in a pooled jail (`"warm": true`). Only when asked for.
    Pool,
}

impl Pass {
    /// The passes a run makes unless `--passes` says otherwise, in the order they run and are
    /// reported. The pool pass comes after them, when it is asked for.
    pub const ALL: [Pass; 4] = [Pass::Policy, Pass::Runtime, Pass::Jail, Pass::Full];

    /// The pass's name on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Pass::Policy => "policy",
            Pass::Runtime => "runtime",
            Pass::Jail => "jail",
            Pass::Full => "full",
            Pass::Pool => "pool",
        }
    }

    /// The flags `warden run` takes for this pass; `None` for a pass that runs nothing (the
    /// policy pass is `warden check`).
    pub fn run_flags(self) -> Option<RunFlags> {
        match self {
            // The pool pass runs programs over HTTP, not with `warden run`.
            Pass::Policy | Pass::Pool => None,
            // No static layer; the runtime hooks stay on (the policy's `[runtime] hooks`).
            Pass::Runtime => Some(RunFlags {
                always: &["--no-policy"],
                if_known: &[],
            }),
            // The jail alone: no policy, and no runtime hooks in a warden that has them.
            Pass::Jail => Some(RunFlags {
                always: &["--no-policy"],
                if_known: &["--no-hooks"],
            }),
            Pass::Full => Some(RunFlags {
                always: &[],
                if_known: &[],
            }),
        }
    }

    /// Whether this pass runs programs (as opposed to judging them statically).
    pub fn runs_programs(self) -> bool {
        self.run_flags().is_some() || self == Pass::Pool
    }

    /// The `warden run` flag whose presence in `warden run --help` shows that the binary has the
    /// layer this pass measures; `None` for passes every warden can make. A warden without runtime
    /// hooks has no `--no-hooks` (nothing to turn off), and no runtime pass.
    pub fn needs_flag(self) -> Option<&'static str> {
        match self {
            Pass::Runtime => Some("--no-hooks"),
            Pass::Policy | Pass::Jail | Pass::Full | Pass::Pool => None,
        }
    }
}

/// How `warden run` is called for a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunFlags {
    /// Flags every warden has.
    pub always: &'static [&'static str],
    /// Flags that turn off a layer only newer wardens have: given when `warden run --help` lists
    /// them (a warden without the flag has no such layer to turn off).
    pub if_known: &'static [&'static str],
}

impl RunFlags {
    /// The whole gateway but the static layer: how a benign program runs within the full pass when
    /// the policy judged its model-written part in another file (DS-1000's harness), or when the
    /// full pipeline gives no record (an older warden). Reported as a jail pass, as before passes
    /// could be chosen.
    pub const NO_POLICY: RunFlags = RunFlags {
        always: &["--no-policy"],
        if_known: &[],
    };
}

impl fmt::Display for Pass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The passes a run makes (never empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passes(BTreeSet<Pass>);

impl Default for Passes {
    /// All of them.
    fn default() -> Self {
        Passes(Pass::ALL.into_iter().collect())
    }
}

impl Passes {
    /// The given passes; `None` when the list is empty.
    pub fn new(passes: impl IntoIterator<Item = Pass>) -> Option<Passes> {
        let set: BTreeSet<Pass> = passes.into_iter().collect();
        (!set.is_empty()).then_some(Passes(set))
    }

    pub fn contains(&self, pass: Pass) -> bool {
        self.0.contains(&pass)
    }

    /// Whether any selected pass runs programs (as opposed to judging them statically).
    pub fn runs_programs(&self) -> bool {
        self.0.iter().any(|p| p.runs_programs())
    }

    /// The selected passes in order.
    pub fn list(&self) -> Vec<Pass> {
        self.0.iter().copied().collect()
    }
}

impl fmt::Display for Passes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|p| p.as_str()).collect();
        f.write_str(&names.join(","))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn selections_keep_the_pass_order_and_refuse_nothing() {
        let passes = Passes::new([Pass::Full, Pass::Jail, Pass::Full, Pass::Runtime]).unwrap();
        assert_eq!(passes.list(), [Pass::Runtime, Pass::Jail, Pass::Full]);
        assert_eq!(passes.to_string(), "runtime,jail,full");
        assert!(passes.runs_programs());
        assert!(Passes::new([Pass::Runtime]).unwrap().runs_programs());
        assert!(!Passes::new([Pass::Policy]).unwrap().runs_programs());
        let pool = Passes::new([Pass::Pool, Pass::Policy]).unwrap();
        assert!(pool.runs_programs() && Pass::Pool.run_flags().is_none());
        assert_eq!(pool.to_string(), "policy,pool");
        assert!(Passes::new([]).is_none());
        assert_eq!(Passes::default().to_string(), "policy,runtime,jail,full");
        assert_eq!(Pass::Runtime.needs_flag(), Some("--no-hooks"));
        assert_eq!(
            Pass::Runtime.run_flags().map(|f| f.always),
            Some(&["--no-policy"][..])
        );
    }
}
