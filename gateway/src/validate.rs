//! Output validation: the program's result must be one JSON document that satisfies the policy's
//! schema. The result is read from where the run says ([`ResultFrom`]): the whole of standard output
//! (the default), its last non-empty line (so debug prints before it do not fail the run), or
//! `result.json` in the work dir.
//!
//! Owns compiling the schema (before anything runs: a bad schema is a configuration error), reading
//! the result from where it was delivered, and judging it. Knows nothing about how output was
//! captured.
//!
//! A schema may come from a client of the server, so what it can cost is bounded before it is
//! compiled ([`check_bounds`]: size, nesting depth, number of references), and compiling and
//! validating run on a thread of their own with a stack sized for the worst schema those bounds
//! admit (a `$ref` chain is followed recursively while validating, once per level of the output).

use std::path::Path;

use serde::Serialize;
pub use warden_policy::settings::ResultFrom;

/// The file a program writes its result to with [`ResultFrom::File`], in its work dir.
pub const RESULT_FILE: &str = "result.json";

/// One way the output fails the schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct OutputError {
    /// JSON Pointer into the output (`/revenue_by_region/north`); empty for the document itself.
    pub instance_path: String,
    /// JSON Pointer into the schema to the keyword that failed (`/properties/rows/minimum`).
    pub schema_path: String,
    pub message: String,
}

/// The `validation` part of the result record (`null` there when no schema applies).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Validation {
    pub valid: bool,
    pub errors: Vec<OutputError>,
    /// Where the result was read from: `stdout`, `last_line` or `file`.
    #[serde(default)]
    pub result: ResultFrom,
}

impl Validation {
    /// A schema applies but the run did not end in a way that can be validated.
    pub fn not_validated(status: crate::pipeline::RunStatus) -> Self {
        Self {
            valid: false,
            errors: vec![OutputError {
                instance_path: String::new(),
                schema_path: String::new(),
                message: format!(
                    "not validated: the run ended with status {}",
                    status.as_str()
                ),
            }],
            result: ResultFrom::default(),
        }
    }

    fn fail(message: String) -> Self {
        Self {
            valid: false,
            errors: vec![OutputError {
                instance_path: String::new(),
                schema_path: String::new(),
                message,
            }],
            result: ResultFrom::default(),
        }
    }
}

/// How a result is delivered, for the error that says the delivery failed: what applied, and how
/// to use the other ways (the same words for the command line, the HTTP API and MCP).
pub fn delivery_help(from: ResultFrom) -> String {
    let applied = match from {
        ResultFrom::Stdout => {
            "The result is read from the whole of standard output (result = stdout), which must be \
             exactly one JSON document"
        }
        ResultFrom::LastLine => {
            "The result is read from the last non-empty line of standard output (result = \
             last_line), which must be one JSON document on one line"
        }
        ResultFrom::File => {
            "The result is read from result.json in the work dir (result = file), which the program \
             must write"
        }
    };
    let others: Vec<&str> = ResultFrom::ALL
        .into_iter()
        .filter(|other| *other != from)
        .map(|other| match other {
            ResultFrom::Stdout => "result = stdout: print only the JSON document",
            ResultFrom::LastLine => {
                "result = last_line: print the JSON document on one line, last (other prints may \
                 come before it)"
            }
            ResultFrom::File => {
                "result = file: write the JSON document to result.json in the work dir \
                 (standard output is free)"
            }
        })
        .collect();
    format!(
        "{applied}; other ways ({}, the run request's \"result\", or [output] result in the rules \
         file): {}",
        "warden run --result stdout|last-line|file",
        others.join("; ")
    )
}

/// Reads the result from where it was delivered: the JSON text, or why there is none.
fn delivered(
    from: ResultFrom,
    stdout: &[u8],
    truncated: bool,
    workdir: Option<&Path>,
    max_bytes: u64,
) -> Result<String, String> {
    match from {
        ResultFrom::Stdout | ResultFrom::LastLine => {
            if truncated {
                return Err(
                    "standard output exceeded the policy's cap and was truncated".to_owned(),
                );
            }
            let text = std::str::from_utf8(stdout)
                .map_err(|err| format!("standard output is not UTF-8: {err}"))?;
            let text = if from == ResultFrom::LastLine {
                text.lines().rev().find(|line| !line.trim().is_empty())
            } else {
                Some(text)
            }
            .unwrap_or_default()
            .trim();
            if text.is_empty() {
                return Err("standard output is empty; expected one JSON document".to_owned());
            }
            Ok(text.to_owned())
        }
        ResultFrom::File => {
            let Some(dir) = workdir else {
                return Err(format!("{RESULT_FILE}: the run had no work dir"));
            };
            read_result_file(&dir.join(RESULT_FILE), max_bytes)
        }
    }
}

/// Reads `result.json` from the host work dir (the jail's copy, which the program can no longer
/// change): a regular file (never through a symlink), within `max_bytes`, UTF-8.
fn read_result_file(path: &Path, max_bytes: u64) -> Result<String, String> {
    use std::io::Read;
    let meta = std::fs::symlink_metadata(path).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound => format!("{RESULT_FILE} was not written in the work dir"),
        _ => format!("{RESULT_FILE} cannot be read: {err}"),
    })?;
    if !meta.is_file() {
        return Err(format!("{RESULT_FILE} is not a regular file"));
    }
    let file =
        std::fs::File::open(path).map_err(|err| format!("{RESULT_FILE} cannot be read: {err}"))?;
    if meta.len() > max_bytes {
        return Err(format!(
            "{RESULT_FILE} is over the result's cap ({max_bytes} bytes, the policy's stdout_bytes)"
        ));
    }
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("{RESULT_FILE} cannot be read: {err}"))?;
    if bytes.len() as u64 > max_bytes {
        return Err(format!(
            "{RESULT_FILE} is over the result's cap ({max_bytes} bytes, the policy's stdout_bytes)"
        ));
    }
    let text =
        String::from_utf8(bytes).map_err(|err| format!("{RESULT_FILE} is not UTF-8: {err}"))?;
    if text.trim().is_empty() {
        return Err(format!(
            "{RESULT_FILE} is empty; expected one JSON document"
        ));
    }
    Ok(text)
}

/// At most this many errors are reported.
const MAX_ERRORS: usize = 20;

/// Largest schema accepted, serialized as compact JSON.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;
/// Deepest nesting of objects and arrays in a schema (the document itself is depth 1).
pub const MAX_SCHEMA_DEPTH: usize = 32;
/// Most `$ref`s in a schema (shared targets multiply the work: two `$ref`s under an `anyOf` per
/// level double it per level).
pub const MAX_SCHEMA_REFS: usize = 16;
/// Most regular expressions in a schema (`pattern` values, `patternProperties` keys). Each is
/// compiled within [`REGEX_SIZE_LIMIT`], which takes at most a few milliseconds.
pub const MAX_SCHEMA_PATTERNS: usize = 32;
/// Largest compiled size of one regular expression: a pattern such as `(\p{L}{100}){100}` is
/// refused after ~6 ms instead of ~60 ms with the engine's default (10 MiB). Ample for real patterns.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Stack of the thread that compiles a schema and validates output against it. Without cycles, the
/// deepest recursion the bounds admit is a chain of every `$ref`, each through the deepest nesting
/// (about 550 levels); that fits in 1 MiB (tested below), and this is 16 times as much, whatever
/// the stack of the calling thread (a tokio blocking thread has 2 MiB). Only touched pages cost
/// memory.
const STACK_SIZE: usize = 16 * 1024 * 1024;

/// Checks the bounds on a schema before anything compiles it: the same check for a policy's
/// schema, `warden run --schema`, and a server client's (which the server applies before a run
/// slot is spent). Cheap: walks that stop at the first bound exceeded.
///
/// Besides size, depth and the number of references, a schema may not refer to itself: validating
/// a recursive schema can take time exponential in the output's depth (two `$ref`s under an
/// `anyOf` that leads back to it double the work per level), so only references that resolve
/// within the document by JSON pointer (`#`, `#/$defs/row`) and lead to no cycle are accepted.
pub fn check_bounds(schema: &serde_json::Value) -> Result<(), String> {
    /// Counts serialized bytes and stops the serializer past the cap.
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            if self.0 > MAX_SCHEMA_BYTES {
                return Err(std::io::Error::other("too large"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    if serde_json::to_writer(&mut Counter(0), schema).is_err() {
        return Err(format!(
            "the output schema is over {MAX_SCHEMA_BYTES} bytes (as compact JSON)"
        ));
    }
    let graph = SchemaGraph::of(schema)?;
    graph.check_acyclic()
}

/// The objects and arrays of a schema, with their children and where their `$ref` leads.
struct SchemaGraph<'a> {
    nodes: Vec<&'a serde_json::Value>,
    /// Per node: its container children, then its `$ref` target (indexes into `nodes`).
    edges: Vec<Vec<usize>>,
}

impl<'a> SchemaGraph<'a> {
    fn of(root: &'a serde_json::Value) -> Result<Self, String> {
        use serde_json::Value;
        let is_container = |value: &Value| value.is_object() || value.is_array();
        let mut nodes: Vec<&Value> = Vec::new();
        let mut depths = Vec::new();
        let mut index = std::collections::HashMap::new();
        if is_container(root) {
            nodes.push(root);
            depths.push(1usize);
            index.insert(std::ptr::from_ref(root), 0usize);
        }
        let mut edges: Vec<Vec<usize>> = Vec::new();
        let mut refs: Vec<(usize, &str)> = Vec::new();
        let mut patterns = 0usize;
        let mut nested_id = false;
        let mut next = 0;
        while next < nodes.len() {
            let (node, depth) = (nodes[next], depths[next]);
            if depth > MAX_SCHEMA_DEPTH {
                return Err(format!(
                    "the output schema nests objects and arrays deeper than {MAX_SCHEMA_DEPTH} levels"
                ));
            }
            let children: Box<dyn Iterator<Item = &Value>> = match node {
                Value::Object(map) => {
                    for key in ["$dynamicRef", "$recursiveRef"] {
                        if map.contains_key(key) {
                            return Err(format!(
                                "the output schema uses {key}: recursive schemas are not accepted"
                            ));
                        }
                    }
                    if let Some(target) = map.get("$ref") {
                        let Some(target) = target.as_str() else {
                            return Err(
                                "the output schema has a $ref that is not a string".to_owned()
                            );
                        };
                        refs.push((next, target));
                        if refs.len() > MAX_SCHEMA_REFS {
                            return Err(format!(
                                "the output schema has more than {MAX_SCHEMA_REFS} $ref references"
                            ));
                        }
                    }
                    patterns += usize::from(map.get("pattern").is_some_and(Value::is_string))
                        + map
                            .get("patternProperties")
                            .and_then(Value::as_object)
                            .map_or(0, serde_json::Map::len);
                    if patterns > MAX_SCHEMA_PATTERNS {
                        return Err(format!(
                            "the output schema has more than {MAX_SCHEMA_PATTERNS} regular expressions (pattern, patternProperties)"
                        ));
                    }
                    if next > 0
                        && ["$id", "id"]
                            .iter()
                            .any(|key| map.get(*key).is_some_and(Value::is_string))
                    {
                        nested_id = true;
                    }
                    Box::new(map.values())
                }
                Value::Array(items) => Box::new(items.iter()),
                _ => Box::new(std::iter::empty()),
            };
            let mut own = Vec::new();
            for child in children.filter(|child| is_container(child)) {
                own.push(nodes.len());
                index.insert(std::ptr::from_ref(child), nodes.len());
                nodes.push(child);
                depths.push(depth + 1);
            }
            edges.push(own);
            next += 1;
        }
        for (from, target) in refs {
            let pointer = match target.strip_prefix('#') {
                Some(pointer) if !nested_id && (pointer.is_empty() || pointer.starts_with('/')) => {
                    percent_decode(pointer)
                }
                _ => {
                    return Err(format!(
                        "the output schema has the reference {target:?}: only references within the \
                         document by JSON pointer (\"#/$defs/name\") are accepted, with no $id below the root"
                    ))
                }
            };
            // A pointer that leads nowhere is the compiler's error to report.
            if let Some(to) = root
                .pointer(&pointer)
                .and_then(|target| index.get(&std::ptr::from_ref(target)))
            {
                edges[from].push(*to);
            }
        }
        Ok(Self { nodes, edges })
    }

    /// Refuses a cycle (one that goes through a `$ref`: containment alone is a tree).
    fn check_acyclic(&self) -> Result<(), String> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Open,
            Done,
        }
        let mut marks = vec![Mark::New; self.nodes.len()];
        for start in 0..self.nodes.len() {
            if marks[start] != Mark::New {
                continue;
            }
            // (node, next edge to follow)
            let mut stack = vec![(start, 0usize)];
            marks[start] = Mark::Open;
            while let Some((node, edge)) = stack.last_mut() {
                let Some(&to) = self.edges[*node].get(*edge) else {
                    marks[*node] = Mark::Done;
                    stack.pop();
                    continue;
                };
                *edge += 1;
                match marks[to] {
                    Mark::New => {
                        marks[to] = Mark::Open;
                        stack.push((to, 0));
                    }
                    Mark::Open => {
                        return Err("the output schema refers to itself ($ref in a cycle): \
                                    recursive schemas are not accepted"
                            .to_owned())
                    }
                    Mark::Done => {}
                }
            }
        }
        Ok(())
    }
}

/// Decodes `%XX` escapes of a URI fragment (a JSON pointer's `~0`/`~1` are `pointer`'s).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (byte, _, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs `work` on a thread with a [`STACK_SIZE`] stack.
fn on_deep_stack<T: Send>(work: impl FnOnce() -> T + Send) -> anyhow::Result<T> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("warden-schema".to_owned())
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, work)
            .map_err(|err| anyhow::anyhow!("cannot start the schema thread: {err}"))?
            .join()
            .map_err(|_| anyhow::anyhow!("the schema thread panicked"))
    })
}

/// A compiled output schema.
pub struct OutputSchema {
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputSchema")
    }
}

impl OutputSchema {
    /// Checks the bounds, then compiles a schema; references are resolved only within the document
    /// (no network, no files).
    pub fn compile(schema: &serde_json::Value) -> anyhow::Result<Self> {
        check_bounds(schema).map_err(|err| anyhow::anyhow!("invalid output schema: {err}"))?;
        let validator = on_deep_stack(|| {
            jsonschema::options()
                .with_pattern_options(
                    jsonschema::PatternOptions::fancy_regex()
                        .size_limit(REGEX_SIZE_LIMIT)
                        .dfa_size_limit(REGEX_SIZE_LIMIT),
                )
                .build(schema)
        })?
        .map_err(|err| anyhow::anyhow!("invalid output schema: {err}"))?;
        Ok(Self { validator })
    }

    /// Judges captured standard output as one JSON document. `truncated` output is never valid:
    /// it was cut at the cap.
    pub fn validate(&self, stdout: &[u8], truncated: bool) -> Validation {
        self.validate_result(ResultFrom::Stdout, stdout, truncated, None, 0)
    }

    /// Judges the result where `from` says it was delivered: standard output (`truncated` output is
    /// never valid), its last non-empty line, or `result.json` in `workdir` (at most `max_bytes`).
    /// When there is no JSON document there, the error says which way applied and how to use the
    /// others ([`delivery_help`]).
    pub fn validate_result(
        &self,
        from: ResultFrom,
        stdout: &[u8],
        truncated: bool,
        workdir: Option<&Path>,
        max_bytes: u64,
    ) -> Validation {
        let mut validation =
            self.judge(from, delivered(from, stdout, truncated, workdir, max_bytes));
        validation.result = from;
        validation
    }

    fn judge(&self, from: ResultFrom, text: Result<String, String>) -> Validation {
        let where_ = match from {
            ResultFrom::Stdout => "standard output",
            ResultFrom::LastLine => "the last non-empty line of standard output",
            ResultFrom::File => RESULT_FILE,
        };
        let document: serde_json::Value = match text.and_then(|text| {
            serde_json::from_str(&text)
                .map_err(|err| format!("{where_} is not one JSON document: {err}"))
        }) {
            Ok(document) => document,
            Err(err) => return Validation::fail(format!("{err}. {}", delivery_help(from))),
        };
        let judged = on_deep_stack(|| {
            self.validator
                .iter_errors(&document)
                .take(MAX_ERRORS)
                .map(|error| OutputError {
                    instance_path: error.instance_path().to_string(),
                    schema_path: error.schema_path().to_string(),
                    message: error.to_string(),
                })
                .collect::<Vec<_>>()
        });
        let errors = match judged {
            Ok(errors) => errors,
            Err(err) => return Validation::fail(format!("output not validated: {err}")),
        };
        Validation {
            valid: errors.is_empty(),
            errors,
            result: from,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> OutputSchema {
        OutputSchema::compile(&json!({
            "type": "object",
            "required": ["rows"],
            "properties": {"rows": {"type": "integer", "minimum": 1}, "by": {"type": "object", "additionalProperties": {"type": "number"}}}
        }))
        .expect("schema")
    }

    #[test]
    fn valid_output_passes() {
        assert!(schema().validate(b"{\"rows\": 3}\n", false).valid);
    }

    #[test]
    fn errors_carry_instance_and_schema_paths() {
        let result = schema().validate(br#"{"rows": 0, "by": {"north": "x"}}"#, false);
        assert!(!result.valid);
        let paths: Vec<(&str, &str)> = result
            .errors
            .iter()
            .map(|e| (e.instance_path.as_str(), e.schema_path.as_str()))
            .collect();
        assert!(
            paths.contains(&("/rows", "/properties/rows/minimum")),
            "{paths:?}"
        );
        assert!(
            paths.contains(&("/by/north", "/properties/by/additionalProperties/type")),
            "{paths:?}"
        );
    }

    #[test]
    fn non_json_truncated_and_empty_output_fail() {
        assert!(!schema().validate(b"rows: 3", false).valid);
        assert!(!schema().validate(b"{\"rows\": 3}", true).valid);
        assert!(!schema().validate(b"  \n", false).valid);
        assert!(
            !schema()
                .validate(b"{\"rows\": 1}\n{\"rows\": 2}\n", false)
                .valid
        );
    }

    #[test]
    fn invalid_schema_is_a_configuration_error() {
        assert!(OutputSchema::compile(&json!({"type": 12})).is_err());
    }

    /// The deepest schema the bounds admit: every `$ref` in one chain, each target nested as deep
    /// as allowed. Returns the schema and an output that walks all of it.
    fn deepest_admitted() -> (serde_json::Value, String) {
        let mut defs = serde_json::Map::new();
        let links = MAX_SCHEMA_REFS - 1;
        for i in 0..=links {
            // `$defs` entries sit at depth 3; each `allOf` wrapper adds two levels.
            let mut node = if i < links {
                json!({"$ref": format!("#/$defs/d{}", i + 1)})
            } else {
                json!({"type": "object", "required": ["x"]})
            };
            for _ in 0..(MAX_SCHEMA_DEPTH - 3) / 2 {
                node = json!({"allOf": [node]});
            }
            defs.insert(format!("d{i}"), node);
        }
        let schema = json!({"$ref": "#/$defs/d0", "$defs": defs});
        (schema, "{\"y\": 1}".to_owned())
    }

    #[test]
    fn the_deepest_admitted_schema_compiles_and_validates_on_a_small_stack() {
        let (schema, output) = deepest_admitted();
        check_bounds(&schema).unwrap();
        let compiled = OutputSchema::compile(&schema).unwrap();
        let result = compiled.validate(output.as_bytes(), false);
        assert!(!result.valid, "{result:?}");
        assert!(
            result.errors[0].schema_path.contains("required"),
            "{result:?}"
        );
        // The same work on a sixteenth of the stack the module gives it.
        let small = std::thread::Builder::new()
            .stack_size(STACK_SIZE / 16)
            .spawn(move || {
                let validator = jsonschema::validator_for(&schema).unwrap();
                let document: serde_json::Value = serde_json::from_str(&output).unwrap();
                validator.iter_errors(&document).count()
            })
            .unwrap();
        assert_eq!(small.join().unwrap(), 1);
    }

    #[test]
    fn schemas_over_the_bounds_are_refused_before_compiling() {
        let big = json!({"enum": ["x".repeat(MAX_SCHEMA_BYTES)]});
        assert!(check_bounds(&big).unwrap_err().contains("bytes"));
        let mut deep = json!({"type": "object"});
        for _ in 0..MAX_SCHEMA_DEPTH {
            deep = json!({"not": deep});
        }
        assert!(check_bounds(&deep).unwrap_err().contains("deeper"));
        let defs: serde_json::Map<String, serde_json::Value> = (0..=MAX_SCHEMA_REFS)
            .map(|i| {
                (
                    format!("d{i}"),
                    json!({"$ref": format!("#/$defs/d{}", i + 1)}),
                )
            })
            .collect();
        let many = json!({"$defs": defs});
        assert!(check_bounds(&many).unwrap_err().contains("$ref"));
        let regexes: serde_json::Map<String, serde_json::Value> = (0..=MAX_SCHEMA_PATTERNS)
            .map(|i| (format!("p{i}"), json!({"pattern": format!("^{i}")})))
            .collect();
        let regexes = json!({"properties": regexes});
        assert!(check_bounds(&regexes)
            .unwrap_err()
            .contains("regular expressions"));
        // A pattern over the compiled-size limit is refused (~6 ms; ~60 ms with the engine's default).
        assert!(OutputSchema::compile(&json!({"pattern": "(\\p{L}{100}){100}"})).is_err());
        // The error reaches whoever compiles.
        let err = OutputSchema::compile(&deep).unwrap_err().to_string();
        assert!(
            err.contains("invalid output schema") && err.contains("deeper"),
            "{err}"
        );
    }

    #[test]
    fn recursive_and_unresolvable_references_are_refused() {
        for (schema, expected) in [
            (json!({"properties": {"a": {"$ref": "#"}}}), "cycle"),
            (
                json!({"$ref": "#/$defs/a", "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}]}, "b": {"$ref": "#/$defs/a"}}}),
                "cycle",
            ),
            (
                json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}),
                "cycle",
            ),
            (json!({"$dynamicRef": "#node"}), "recursive"),
            (
                json!({"$ref": "#node", "$defs": {"n": {"$anchor": "node"}}}),
                "JSON pointer",
            ),
            (
                json!({"$ref": "https://example.com/s.json"}),
                "JSON pointer",
            ),
            (
                json!({"properties": {"a": {"$id": "https://x/a", "$ref": "#/p"}}}),
                "$id",
            ),
        ] {
            let err = check_bounds(&schema).unwrap_err();
            assert!(err.contains(expected), "{schema}: {err}");
        }
        // Shared targets (no cycle), escaped pointers and the root's own $id are fine.
        let shared = json!({
            "$id": "https://example.com/out.json",
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/row"},
                "b": {"type": "array", "items": {"$ref": "#/$defs/row"}},
                "c": {"$ref": "#/$defs/a~1b%20c"},
            },
            "$defs": {"row": {"type": "object", "properties": {"n": {"type": "integer"}}}, "a/b c": {"type": "string"}},
        });
        check_bounds(&shared).unwrap();
        let compiled = OutputSchema::compile(&shared).unwrap();
        assert!(
            compiled
                .validate(br#"{"a": {"n": 1}, "b": [{"n": 2}], "c": "x"}"#, false)
                .valid
        );
        assert!(!compiled.validate(br#"{"b": [{"n": "2"}]}"#, false).valid);
    }
}
