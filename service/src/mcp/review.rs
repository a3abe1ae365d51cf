//! Reviews over MCP: a cell the policy sends to review is held, and the tools that follow it
//! (`review_status`, `run_reviewed`).
//!
//! Owns: the review tools' calls and results. Does not own: the reviews themselves
//! (`service/src/review.rs`).

use super::*;

// Reviews (service/src/review.rs): a cell the policy sends to review is held; once a person
// approves it, `run_reviewed` runs it once as a standalone program.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ReviewArgs {
    pub(super) id: String,
}

impl Warden {
    /// The tool result for a cell the policy sends to review: held, with its id and what to do.
    pub(super) fn held_for_review(
        &self,
        policy: &str,
        code: &str,
        record: &Value,
    ) -> CallToolResult {
        let findings = record
            .pointer("/check/findings")
            .cloned()
            .unwrap_or(Value::Null);
        let rules = findings
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| f.get("action").and_then(Value::as_str) == Some("review"))
            .map(|f| {
                format!(
                    "{} at line {}: {}",
                    f.get("rule").and_then(Value::as_str).unwrap_or("?"),
                    f.pointer("/span/line").and_then(Value::as_u64).unwrap_or(0),
                    f.get("message").and_then(Value::as_str).unwrap_or("")
                )
            })
            .collect::<Vec<_>>();
        let why = format!(
            "This cell did not run: policy {policy:?} requires a person to approve it first ({}). \
             The session kept its state.",
            rules.join("; ")
        );
        match self
            .service
            .hold_cell_for_review(&self.caller, policy, code, findings)
        {
            Ok(review) => CallToolResult::error(vec![ContentBlock::text(format!(
                "{why}\nIt awaits approval as review {id} (until {expires}). Tell the user: a \
                 person approves it with `warden review approve {id}` on the server, or POST \
                 /v1/reviews/{id}/approve. Check with the review_status tool ({{\"id\": \"{id}\"}}); \
                 once it is approved, the run_reviewed tool ({{\"id\": \"{id}\"}}) runs it once, as \
                 a standalone program in a fresh jail, not in this session: it must define or load \
                 everything it uses itself. Or write the cell without what needs review.",
                id = review.id,
                expires = review.expires_at,
            ))]),
            Err(err) => CallToolResult::error(vec![ContentBlock::text(format!(
                "{why}\nIt could not be held for review ({}): {}",
                err.code(),
                err.message()
            ))]),
        }
    }

    pub(super) fn review_status(&self, args: &ReviewArgs) -> CallToolResult {
        match self.service.own_review(&self.caller, &args.id) {
            Ok(review) => {
                let now = review.state_now();
                let next = match now {
                    "pending" => "It awaits a person's approval; check again later.",
                    "approved" => "Approved: call run_reviewed with this id to run it (once).",
                    "rejected" => "Rejected: it will not run; write the program another way.",
                    "used" => "It has run already; an approval is good for one run.",
                    "void" => "Void: the policy changed since; submit the program again.",
                    _ => "Expired: submit the program again.",
                };
                let mut text = format!("review {}: {now}. {next}", review.id);
                if let Some(by) = &review.decided_by {
                    let _ = write!(text, " Decided by {by}.");
                }
                if let Some(reason) = &review.reason {
                    let _ = write!(text, " Reason: {reason}");
                }
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            Err(err) => service_error(&err),
        }
    }

    pub(super) async fn run_reviewed(&self, args: &ReviewArgs) -> CallToolResult {
        let result = self
            .service
            .run_reviewed(
                &self.caller,
                &args.id,
                crate::review::RunReviewBody::default(),
                "run_reviewed",
            )
            .await;
        match result {
            // The text is rendered from the record's JSON form, as a cell's is.
            Ok(answer) => match serde_json::to_value(&answer) {
                Ok(record) => reviewed_result(&record),
                Err(err) => service_error(&crate::ServiceError::Internal(err.to_string())),
            },
            Err(err) => service_error(&err),
        }
    }
}
