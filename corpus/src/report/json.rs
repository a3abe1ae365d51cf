//! The corpus report as JSON: the report's own fields (`Report` and the types it holds), pretty
//! printed, one newline at the end.

use super::Report;

/// The report as pretty-printed JSON with a final newline.
pub fn json(report: &Report) -> serde_json::Result<String> {
    let mut json = serde_json::to_string_pretty(report)?;
    json.push('\n');
    Ok(json)
}
