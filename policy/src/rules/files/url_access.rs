//! FILE703 url-access.
//!
//! Which strings are URLs is decided here; `files/mod.rs` finds the strings given to file APIs and
//! asks.

use ruff_text_size::TextRange;

use crate::checker::Checker;
use crate::rules::Rule;

pub(crate) const DOC: &str = r#"# FILE703 url-access

## What it does
Denies URLs (`http://`, `https://`, `ftp://`, `s3://`, `file://`…) given to file APIs such as
`pd.read_csv`, `np.loadtxt` or `open`.

## Why is this bad?
Data readers fetch URLs themselves: that is network access (exfiltration, server-side request forgery
against internal services) hidden in an innocent-looking call. The jail has no network, so the call
would fail anyway; denying it explains why.

## Example
```python
pd.read_csv("http://169.254.169.254/latest/meta-data/")
```
Pass data as input files; the program cannot use the network.

## Evasions handled
- Any scheme, through literals, variables bound to literals and f-string prefixes.

## Known gaps
- Computed URLs are reported as dynamic paths (FILE704); the network namespace blocks them.
"#;

/// Reports `text` when it is a URL (`scheme://…`); true when it was, and no path rule applies to it.
pub(crate) fn check(checker: &mut Checker<'_>, text: &str, api: &str, range: TextRange) -> bool {
    if !is_url(text) {
        return false;
    }
    let scheme = text.split("://").next().unwrap_or_default();
    checker.report(
        Rule::UrlAccess,
        range,
        format!("`{api}` is given a `{scheme}://` URL: that is network access"),
        "the program has no network; ask for the data to be provided as an input file",
    );
    true
}

fn is_url(text: &str) -> bool {
    let Some((scheme, _)) = text.split_once("://") else {
        return false;
    };
    !scheme.is_empty()
        && scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}
