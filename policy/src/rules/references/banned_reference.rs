//! REF201 banned-reference.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::rules::Rule;
use crate::semantic::QualName;

pub(crate) const DOC: &str = r#"# REF201 banned-reference

## What it does
Denies every *reference* to a qualified name listed in `references.deny` — called, passed as a value,
stored in a container, used as a decorator or default — not only calls. Patterns are dotted names
(`os.system`, `pandas.read_pickle`, `builtins.open`) or subtrees (`subprocess.*`); a member of a banned
name is banned too (`os.system.__call__`).

## Why is this bad?
Policy authors ban what their deployment must never do (deserialisation, clipboard access…). Matching
calls only is the classic mistake: `f = pickle.loads; f(data)` or `list(map(os.system, cmds))` never
call the banned name directly.

## Example
```python
import pandas as pd
df = pd.read_pickle("data.pkl")
```
Use a safe format such as CSV or Parquet.

## Evasions handled
- Import aliases, `from m import f as g`, assignment aliases (`g = m.f`), builtins by bare name
  (`builtins.exec` matches `exec`), references in any position (call, argument, container, decorator,
  default value, annotation, class base).

- `numpy.load(..., allow_pickle=True)` (or any non-literal-false value) is reported as a banned
  reference: loading arrays is allowed, unpickling is not.

## Known gaps
- Values that flow through containers, function returns or attributes of objects are not followed
  (`fs = [m.f]; fs[0]()` is caught at `m.f`, but `obj.f = m.f` passed through unknown code is only
  caught where `m.f` is written).
"#;

/// Loaders that are safe unless told to unpickle: `numpy.load(..., allow_pickle=True)`.
pub(crate) fn check_call(
    checker: &mut Checker<'_>,
    call: &crate::parse::ast::ExprCall,
    callee: &[QualName],
) {
    use crate::parse::ast::Expr;
    use ruff_text_size::Ranged;
    if !callee.iter().any(|q| q.path == "numpy.load") {
        return;
    }
    let Some(keyword) = call.arguments.find_keyword("allow_pickle") else {
        return;
    };
    if !matches!(keyword.value, Expr::BooleanLiteral(ref b) if !b.value) {
        checker.report(
            Rule::BannedReference,
            keyword.range(),
            "`numpy.load` with `allow_pickle` unpickles: deserialisation runs code",
            "save arrays with `np.save` (no object arrays) and load them without `allow_pickle`",
        );
    }
}

/// The hint for a banned name: what to do instead, where warden knows better than "use an alternative".
fn hint_for(pattern: &str) -> &'static str {
    if pattern.starts_with("nltk.download") || pattern == "nltk.data.load" {
        "nltk's data (punkt, stopwords, wordnet…) is not installed and cannot be downloaded: the program has \
         no network and no vetted package ships it; use nltk tools that need no data (RegexpTokenizer, \
         TreebankWordTokenizer, PorterStemmer, ngrams, FreqDist), str.split or re, and your own stopword list"
    } else if pattern == "builtins.input" {
        "nobody answers: put the values in the program (variables, a list of test cases), or read them \
         from an input file in the work dir (`warden run --input FILE`)"
    } else {
        "this function is not available here; use an allowed alternative"
    }
}

pub(crate) fn check_reference(checker: &mut Checker<'_>, name: &QualName, range: TextRange) {
    let segments = name.segments();
    let Some(pattern) = checker
        .policy
        .denied_references
        .first_matching_prefix_of(&segments)
    else {
        return;
    };
    let pattern = pattern.to_string();
    let message = if pattern == "builtins.input" {
        // Not a capability but a dead end: warden's runs have no terminal and an empty stdin.
        format!(
            "`{}` reads standard input, which is empty in warden's runs (it would raise EOFError); \
             banned by the policy (`{pattern}`)",
            name.path
        )
    } else {
        format!("`{}` is banned by the policy (`{pattern}`)", name.path)
    };
    checker.report(Rule::BannedReference, range, message, hint_for(&pattern));
}
