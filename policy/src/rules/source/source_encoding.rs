//! SYN003 source-encoding.
//!
//! Only the documentation lives here. The check is the decoding in `source.rs` (`source::decode`),
//! which must run before anything can be parsed, and the finding is made by the crate's entry point
//! (`lib.rs`, `source_error`).

pub(crate) const DOC: &str = r#"# SYN003 source-encoding

## What it does
Denies source that is not plain UTF-8: invalid UTF-8, NUL bytes, and PEP 263 coding declarations naming
any encoding other than UTF-8.

## Why is this bad?
A coding declaration changes how CPython decodes the file. With `# coding: utf-7`, text that a UTF-8
reader sees inside a comment (`+AAo-import os`) becomes a new line of code for CPython: the checker and
the interpreter would read different programs. NUL bytes and invalid UTF-8 are other ways to make
tools disagree.

## Example
```python
# -*- coding: utf-7 -*-
# +AAo-print(open('/etc/shadow').read())
```
Save the program as UTF-8 without a coding declaration.

## Evasions handled
- Declarations on line 1 or 2, `coding:` and `coding=`, editor-style (`vim: set fileencoding=…`).
- A UTF-8 byte-order mark is accepted and removed; CR and CRLF line ends are normalised before checking,
  and the interpreter is given the normalised text.

## Known gaps
- None known: warden decodes once and the interpreter runs what warden decoded.
"#;
