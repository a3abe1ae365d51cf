//! A session cell's result judged against an output schema the caller gave with the call (MCP's
//! `run_python` with `schema`): the same validation as a run's record, for a cell.
//!
//! Owns: reading the result from where it is delivered (stdout, its last line, or `result.json`
//! in the session's work dir) and naming the file in the errors when the result was one. Does not
//! own: the schema language (`warden_gateway::validate`) or how the verdict is worded for a model
//! (`mcp/render.rs`).

use serde_json::Value;
use warden_gateway::validate::{
    delivery_help, OutputError, OutputSchema, ResultFrom, Validation, RESULT_FILE,
};

use super::ServiceError;

/// Validates a cell's result (its `stdout`; `truncated`: cut at the cap) against the caller's schema, read from where `from` says: its stdout,
/// the last line of it, or `result.json` in the session's work dir (`file`: its download), compiled
/// and run off the async threads.
pub async fn validate_cell(
    schema: Value,
    from: ResultFrom,
    stdout: &str,
    truncated: bool,
    file: Option<Result<Vec<u8>, ServiceError>>,
) -> Validation {
    let stdout = stdout.as_bytes().to_vec();
    let (text, from_text) = match (from, file) {
        (ResultFrom::File, Some(Ok(bytes))) => (bytes, ResultFrom::Stdout),
        (ResultFrom::File, Some(Err(ServiceError::NotFound(_))) | None) => {
            let mut validation = failed_validation(format!(
                "{RESULT_FILE} was not written in the work dir. {}",
                delivery_help(ResultFrom::File)
            ));
            validation.result = ResultFrom::File;
            return validation;
        }
        (ResultFrom::File, Some(Err(err))) => {
            let mut validation =
                failed_validation(format!("{RESULT_FILE} cannot be read: {}", err.message()));
            validation.result = ResultFrom::File;
            return validation;
        }
        (other, _) => (stdout, other),
    };
    let judged = tokio::task::spawn_blocking(move || {
        OutputSchema::compile(&schema).map(|compiled| {
            compiled.validate_result(
                from_text,
                &text,
                truncated && from != ResultFrom::File,
                None,
                0,
            )
        })
    })
    .await;
    let mut validation = match judged {
        Ok(Ok(validation)) => validation,
        Ok(Err(err)) => failed_validation(format!("{err:#}")),
        Err(err) => failed_validation(format!("the schema check failed: {err}")),
    };
    if from == ResultFrom::File {
        // The file's text was judged as a document of its own: name it as what it is.
        validation.result = ResultFrom::File;
        for error in &mut validation.errors {
            if error.instance_path.is_empty() && error.schema_path.is_empty() {
                error.message = error
                    .message
                    .replace(
                        "standard output is empty",
                        &format!("{RESULT_FILE} is empty"),
                    )
                    .replace("standard output is not", &format!("{RESULT_FILE} is not"))
                    .replace(
                        &delivery_help(ResultFrom::Stdout),
                        &delivery_help(ResultFrom::File),
                    );
            }
        }
    }
    validation
}

fn failed_validation(message: String) -> Validation {
    Validation {
        valid: false,
        errors: vec![OutputError {
            instance_path: String::new(),
            schema_path: String::new(),
            message,
        }],
        result: Default::default(),
    }
}
