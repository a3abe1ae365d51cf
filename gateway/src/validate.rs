//! Output validation: standard output must be one JSON document that satisfies the policy's schema.
//!
//! Owns compiling the schema (before anything runs: a bad schema is a configuration error) and judging
//! captured output. Knows nothing about how output was captured.

use serde::Serialize;

/// One way the output fails the schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct OutputError {
    /// JSON Pointer into the output (`/revenue_by_region/north`); empty for the document itself.
    pub instance_path: String,
    /// JSON Pointer into the schema to the keyword that failed (`/properties/rows/minimum`).
    pub schema_path: String,
    pub message: String,
}

/// The `validation` part of the result record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Validation {
    pub valid: bool,
    pub errors: Vec<OutputError>,
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
        }
    }

    /// No schema: nothing to check.
    pub fn not_required() -> Self {
        Self {
            valid: true,
            errors: Vec::new(),
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
        }
    }
}

/// At most this many errors are reported.
const MAX_ERRORS: usize = 20;

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
    /// Compiles a schema; references are resolved only within the document (no network, no files).
    pub fn compile(schema: &serde_json::Value) -> anyhow::Result<Self> {
        let validator = jsonschema::validator_for(schema)
            .map_err(|err| anyhow::anyhow!("invalid output schema: {err}"))?;
        Ok(Self { validator })
    }

    /// Judges captured standard output. `truncated` output is never valid: it was cut at the cap.
    pub fn validate(&self, stdout: &[u8], truncated: bool) -> Validation {
        if truncated {
            return Validation::fail(
                "standard output exceeded the policy's cap and was truncated".to_owned(),
            );
        }
        let text = match std::str::from_utf8(stdout) {
            Ok(text) => text.trim(),
            Err(err) => return Validation::fail(format!("standard output is not UTF-8: {err}")),
        };
        if text.is_empty() {
            return Validation::fail(
                "standard output is empty; expected one JSON document".to_owned(),
            );
        }
        let document: serde_json::Value = match serde_json::from_str(text) {
            Ok(document) => document,
            Err(err) => {
                return Validation::fail(format!(
                    "standard output is not one JSON document: {err}"
                ));
            }
        };
        let errors: Vec<OutputError> = self
            .validator
            .iter_errors(&document)
            .take(MAX_ERRORS)
            .map(|error| OutputError {
                instance_path: error.instance_path().to_string(),
                schema_path: error.schema_path().to_string(),
                message: error.to_string(),
            })
            .collect();
        Validation {
            valid: errors.is_empty(),
            errors,
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
}
