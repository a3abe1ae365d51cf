//! The corpus runner's model of a case: what it is, where it lives and what it expects, whatever
//! format it came from (warden's headers or an external `index.jsonl`).

use std::path::PathBuf;

use super::effects::Effect;
use super::header::ExpectStatic;

/// One directory given to `warden corpus run`, with its cases.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// A short name for reports: the directory's name.
    pub name: String,
    pub dir: PathBuf,
    /// `headers` (warden's format) or `index` (`index.jsonl` of `../shared/corpora`).
    pub format: &'static str,
    pub cases: Vec<Case>,
}

/// One program and its expectation.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    /// The name of the corpus it belongs to.
    pub corpus: String,
    pub file: PathBuf,
    /// The row of the matrix it counts in (a group letter, `JAIL`, an external category…).
    pub group: String,
    pub technique: String,
    pub kind: Kind,
}

/// What a case is for.
#[derive(Debug, Clone)]
pub enum Kind {
    /// Must be stopped: denied statically or, with the policy off, contained by the jail.
    Attack(AttackSpec),
    /// Must be allowed and (unless `run` is false) run to a successful end.
    Benign(BenignSpec),
    /// Risky-looking code that does nothing harmful (RedCode's `no_runtime_harm`): run and
    /// reported on its own; stopping it is not a win and letting it run is not an escape.
    Harmless,
    /// Not run, with the reason (e.g. needs the network).
    Skipped(String),
}

impl Kind {
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Attack(_) => "attack",
            Kind::Benign(_) => "benign",
            Kind::Harmless => "harmless",
            Kind::Skipped(_) => "skipped",
        }
    }
}

/// What an attack expects.
#[derive(Debug, Clone)]
pub struct AttackSpec {
    /// The static verdict with the default policy; `None` when the corpus does not say (external
    /// corpora: either layer may stop them).
    pub expect_static: Option<ExpectStatic>,
    /// Rules that must be among the findings.
    pub expect_rules: Vec<String>,
    /// The rule the runtime layer must stop it with when the static layer is off
    /// (`expect-runtime`); `None`: no expectation of the runtime layer.
    pub expect_runtime: Option<String>,
    /// The effects named by the case (the runner adds [`Effect::baseline`]). A case holds the
    /// shared targets among them exclusively while it runs.
    pub effects: Vec<Effect>,
    /// Effects checked like the declared ones but, like the baseline, without holding their
    /// targets: host files every case of a corpus could reach (RedCode's `/etc/passwd`), watched
    /// for all its cases.
    pub watched: Vec<Effect>,
}

impl AttackSpec {
    /// The declared and watched effects plus the baseline, without duplicates, in a stable order.
    pub fn all_effects(&self) -> Vec<Effect> {
        let mut all: Vec<Effect> = Effect::baseline();
        all.extend(self.effects.iter().cloned());
        all.extend(self.watched.iter().cloned());
        all.sort();
        all.dedup();
        all
    }
}

/// What a benign case expects.
#[derive(Debug, Clone)]
pub struct BenignSpec {
    /// A substring stdout must contain; `None`: a successful end (status ok, exit 0) is enough.
    pub expect_output: Option<String>,
    /// `false`: only the static verdict is checked.
    pub run: bool,
    /// The file the policy judges, when it is not the file that runs: DS-1000's `program_file`
    /// (the model's solution) versus `file` (the solution inside its test harness).
    pub static_file: Option<PathBuf>,
    /// Run with `--no-policy`: the file that runs holds trusted harness code the policy is not
    /// meant to judge (its model-written part was judged through `static_file`).
    pub run_without_policy: bool,
}

impl Case {
    /// The file the policy pass judges.
    pub fn static_file(&self) -> &std::path::Path {
        match &self.kind {
            Kind::Benign(BenignSpec {
                static_file: Some(file),
                ..
            }) => file,
            _ => &self.file,
        }
    }
}
