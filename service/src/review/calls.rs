//! The review requests of the [`Service`]: hold a program for review, list and describe reviews,
//! approve or reject one, run an approved program once.
//!
//! Owns: each request's checks (who may approve, whose review it is, the binding to the program
//! and the policy), its audit line and its answer. Does not own: the store and the review's
//! states (`review.rs`), who is calling (the front ends).

use super::*;

impl Service {
    /// Whether `caller` may approve and reject reviews: a token with `approve = true`, or a peer
    /// on the Unix socket (without a token) whose uid is the server's or root's.
    pub fn may_approve(&self, caller: &Caller) -> bool {
        if let Some(name) = caller.owner.strip_prefix("token:") {
            return self
                .config
                .tokens
                .iter()
                .any(|token| token.name == name && token.approve);
        }
        caller
            .owner
            .strip_prefix("uid:")
            .and_then(|uid| uid.parse::<u32>().ok())
            .is_some_and(|uid| uid == 0 || uid == nix::unistd::geteuid().as_raw())
    }

    /// After a run whose status is `review_required` (HTTP): holds the program for review and
    /// adds `review` to the answer (`{"id", "status": "pending", "expires_at"}`, or `null` with
    /// the reason in `message` when it could not be held). The review's id, for the run's audit
    /// line.
    pub(crate) fn hold_for_review(
        &self,
        caller: &Caller,
        program: Option<Program>,
        answer: &mut RunAnswer,
    ) -> Option<String> {
        let record = &answer.record;
        if record.status != RunStatus::ReviewRequired {
            return None;
        }
        let policy = record
            .policy
            .registered_as
            .clone()
            .unwrap_or_else(|| record.policy.name.clone());
        let findings = serde_json::to_value(&record.check.findings).unwrap_or(Value::Null);
        let held = match program {
            None if self.config.review.max_reviews == 0 => Err(ServiceError::Forbidden(
                "this server holds no programs for review (review.max_reviews = 0)".to_owned(),
            )),
            None => Err(too_large(&self.config.review)),
            Some(program) if sha256(program.code.as_bytes()) != record.program_sha256 => Err(
                ServiceError::Internal("the program held differs from the one judged".to_owned()),
            ),
            Some(program) => self.store_review(
                NewReview {
                    caller,
                    endpoint: "run",
                    policy: &policy,
                    policy_sha256: &record.policy.sha256,
                    findings,
                },
                &program,
            ),
        };
        match held {
            Ok(review) => {
                let id = review.id.clone();
                answer.review = Some(Some(review.brief(now_ms())));
                answer.record.message = Some(format!(
                    "the policy requires a review before this program runs; it is held for \
                         review as {id} until {}: once a person approves it, run it with POST \
                         /v1/reviews/{id}/run (GET /v1/reviews/{id} says where it stands)",
                    review.expires_at
                ));
                Some(id)
            }
            Err(err) => {
                answer.review = Some(None);
                answer.record.message = Some(format!(
                    "the policy requires a review before this program runs, and it could not \
                         be held for review: {}",
                    err.message()
                ));
                None
            }
        }
    }

    /// Holds a cell an MCP client sent (policy `policy`, findings from its record) for review.
    pub(crate) fn hold_cell_for_review(
        &self,
        caller: &Caller,
        policy: &str,
        code: &str,
        findings: Value,
    ) -> Result<Review, ServiceError> {
        let program = Program {
            code: code.to_owned(),
            inputs: Vec::new(),
            schema: None,
            result: None,
            limits: CallerLimits::default(),
            return_files: false,
        };
        let registered = self
            .config
            .policies
            .get(policy)
            .ok_or_else(|| ServiceError::Internal(format!("no policy is named {policy:?}")))?;
        self.submit_review(
            NewReview {
                caller,
                endpoint: "run_python",
                policy,
                policy_sha256: &registered.policy.sha256,
                findings,
            },
            &program,
        )
    }

    /// [`Service::store_review`] with its own `review_submit` audit line (an MCP cell's line is
    /// written by its session, before it is held).
    fn submit_review(&self, new: NewReview<'_>, program: &Program) -> Result<Review, ServiceError> {
        let started = Instant::now();
        let mut audit = AuditRecord::new(&new.caller.identity, "review_submit");
        audit.code_sha256 = Some(sha256(program.code.as_bytes()));
        audit.policy = Some(new.policy.to_owned());
        audit.policy_sha256 = Some(new.policy_sha256.to_owned());
        audit.decision = Some("review".to_owned());
        let result = self.store_review(new, program);
        if let Ok(review) = &result {
            audit.review = Some(review.id.clone());
        }
        self.finish_audit(audit, &result, started);
        result
    }

    fn store_review(&self, new: NewReview<'_>, program: &Program) -> Result<Review, ServiceError> {
        let settings = &self.config.review;
        if settings.max_reviews == 0 {
            return Err(ServiceError::Forbidden(
                "this server holds no programs for review (review.max_reviews = 0)".to_owned(),
            ));
        }
        let bytes = serde_json::to_vec(program)
            .map_err(|err| store_error(&format!("cannot encode the program: {err}")))?;
        if bytes.len() > settings.max_bytes {
            return Err(too_large(settings));
        }
        let store = Store::new(settings);
        let _locked = store.lock()?;
        let now = now_ms();
        store.sweep(now);
        let mut reviews = store.all();
        let waiting = reviews
            .iter()
            .filter(|r| {
                r.owner == new.caller.owner && matches!(r.state(now), "pending" | "approved")
            })
            .count();
        if waiting >= settings.max_per_client {
            return Err(ServiceError::Conflict(
                "review_limit",
                format!(
                    "this client has {waiting} programs awaiting review already, its maximum \
                     (review.max_reviews_per_client); ask for them to be approved or rejected, or \
                     retry once one has run or expired"
                ),
            ));
        }
        // Make room: finished and expired reviews go first, oldest first.
        let mut finished = reviews
            .iter()
            .filter(|r| !matches!(r.state(now), "pending" | "approved"))
            .map(|r| r.id.clone())
            .collect::<Vec<_>>()
            .into_iter();
        while reviews.len() >= settings.max_reviews {
            let Some(id) = finished.next() else {
                return Err(ServiceError::Conflict(
                    "review_limit",
                    format!(
                        "{} programs await review already (review.max_reviews); ask for them to \
                         be approved or rejected, or retry later",
                        reviews.len()
                    ),
                ));
            };
            store.remove(&id);
            reviews.retain(|r| r.id != id);
        }
        let id = new_id()?;
        let expires = now.saturating_add(millis(settings.ttl));
        let review = Review {
            id: id.clone(),
            status: Status::Pending,
            owner: new.caller.owner.clone(),
            submitted_by: new.caller.identity.clone(),
            endpoint: new.endpoint.to_owned(),
            policy: new.policy.to_owned(),
            policy_sha256: new.policy_sha256.to_owned(),
            program_sha256: sha256(program.code.as_bytes()),
            findings: capped_findings(new.findings),
            inputs: program.inputs.iter().map(|i| i.name.clone()).collect(),
            bytes: bytes.len() as u64,
            created_at: rfc3339(now),
            created_ms: now,
            expires_at: rfc3339(expires),
            expires_ms: expires,
            decided_by: None,
            decided_at: None,
            reason: None,
            run_status: None,
        };
        // The program first: a state file always has its program.
        write_whole(&store.program_path(&id), &bytes)?;
        if let Err(err) = store.save(&review) {
            store.remove(&id);
            return Err(err);
        }
        Ok(review)
    }

    /// `GET /v1/reviews`: every review for an approver, the caller's own otherwise.
    pub fn list_reviews(&self, caller: &Caller) -> Result<Value, ServiceError> {
        let approver = self.may_approve(caller);
        let store = Store::new(&self.config.review);
        let now = now_ms();
        let reviews: Vec<Value> = store
            .all()
            .iter()
            .filter(|review| approver || review.owner == caller.owner)
            .map(|review| review.describe(now))
            .collect();
        Ok(json!({
            "reviews": reviews,
            "approver": approver,
            "max_reviews": self.config.review.max_reviews,
            "ttl_ms": millis(self.config.review.ttl),
        }))
    }

    /// `GET /v1/reviews/{id}`: the review with its program (to an approver, or to its submitter).
    pub fn review_info(&self, caller: &Caller, id: &str) -> Result<Value, ServiceError> {
        let store = Store::new(&self.config.review);
        let review = store
            .load(id)
            .filter(|review| review.owner == caller.owner || self.may_approve(caller))
            .ok_or_else(|| no_review(id))?;
        let program = store.program(id)?;
        let mut answer = review.describe(now_ms());
        if let Some(object) = answer.as_object_mut() {
            object.insert("code".to_owned(), json!(program.code));
            object.insert("schema".to_owned(), json!(program.schema));
            object.insert("limits".to_owned(), json!(program.limits));
        }
        Ok(answer)
    }

    /// `POST /v1/reviews/{id}/approve` and `/reject`: an approver's decision on a pending review
    /// (a rejection also withdraws an approval not yet used). One audit line with the approver.
    pub fn decide_review(
        &self,
        caller: &Caller,
        id: &str,
        approve: bool,
        body: DecideBody,
    ) -> Result<Value, ServiceError> {
        let started = Instant::now();
        let endpoint = if approve {
            "review_approve"
        } else {
            "review_reject"
        };
        let mut audit = AuditRecord::new(&caller.identity, endpoint);
        audit.review = Some(id.chars().take(64).collect());
        audit.approver = Some(caller.identity.clone());
        let result = self.decide_inner(caller, id, approve, body, &mut audit);
        self.finish_audit(audit, &result, started);
        result
    }

    fn decide_inner(
        &self,
        caller: &Caller,
        id: &str,
        approve: bool,
        body: DecideBody,
        audit: &mut AuditRecord,
    ) -> Result<Value, ServiceError> {
        if !self.may_approve(caller) {
            return Err(ServiceError::Forbidden(
                "this client may not approve or reject reviews: a token needs `approve = true` in \
                 the server's configuration, or call over the Unix socket as the server's user \
                 or root"
                    .to_owned(),
            ));
        }
        let store = Store::new(&self.config.review);
        let _locked = store.lock()?;
        let mut review = store.load(id).ok_or_else(|| no_review(id))?;
        audit.code_sha256 = Some(review.program_sha256.clone());
        audit.policy = Some(review.policy.clone());
        audit.policy_sha256 = Some(review.policy_sha256.clone());
        let now = now_ms();
        let state = review.state(now);
        let allowed = matches!(
            (approve, state),
            (true, "pending") | (false, "pending" | "approved")
        );
        if !allowed {
            return Err(conflict(state, id));
        }
        if approve {
            // A policy whose text changed since submission voids the review now rather than at
            // its run (a policy this server does not hold is checked when it runs).
            if let Some(current) = self.config.policies.get(&review.policy) {
                if current.policy.sha256 != review.policy_sha256 {
                    review.status = Status::Void;
                    store.save(&review)?;
                    return Err(conflict("void", id));
                }
            }
        }
        review.status = if approve {
            Status::Approved
        } else {
            Status::Rejected
        };
        review.decided_by = Some(caller.identity.clone());
        review.decided_at = Some(rfc3339(now));
        review.reason = body
            .reason
            .map(|reason| reason.chars().take(MAX_REASON_CHARS).collect());
        store.save(&review)?;
        Ok(review.describe(now))
    }

    /// `POST /v1/reviews/{id}/run` (and the MCP `run_reviewed` tool): runs an approved program
    /// once, for the client that submitted it (404 for anyone else). The approval binds to the
    /// program's and the policy's SHA-256; the record's `approval` names the approver.
    pub async fn run_reviewed(
        &self,
        caller: &Caller,
        id: &str,
        body: RunReviewBody,
        endpoint: &str,
    ) -> Result<RunAnswer, ServiceError> {
        let (review, program) = match self.take_review(caller, id, body.code.as_deref()) {
            Ok(taken) => taken,
            Err(err) => {
                let mut audit = AuditRecord::new(&caller.identity, endpoint);
                audit.review = Some(id.chars().take(64).collect());
                self.finish_audit(audit, &Err::<(), _>(err.clone()), Instant::now());
                return Err(err);
            }
        };
        let reviewed = Reviewed {
            id: review.id.clone(),
            approval: Approval {
                method: "review".to_owned(),
                by: review.decided_by.clone().unwrap_or_default(),
            },
        };
        let run = RunBody {
            code: program.code,
            policy: Some(review.policy.clone()),
            inputs: program.inputs,
            schema: program.schema,
            result: program.result,
            limits: program.limits,
            return_files: program.return_files,
        };
        let result = self
            .run_record_with(caller, run, endpoint, Some(&reviewed))
            .await;
        // Nothing ran when the request was turned away: the approval stays for a retry.
        let ran = match &result {
            Ok(record) => Some(record.status.as_str().to_owned()),
            Err(ServiceError::Rejected(..) | ServiceError::BadRequest(_)) => None,
            Err(err) => Some(err.code().to_owned()),
        };
        let review = self.finish_review(id, ran).unwrap_or(review);
        Ok(RunAnswer {
            record: result?,
            review: Some(Some(review.brief(now_ms()))),
        })
    }

    /// Checks that `id` is the caller's, approved and unexpired, for the same program and an
    /// unchanged policy, and marks it used (so that it runs once, whoever else asks at the same
    /// time).
    fn take_review(
        &self,
        caller: &Caller,
        id: &str,
        code: Option<&str>,
    ) -> Result<(Review, Program), ServiceError> {
        let store = Store::new(&self.config.review);
        let _locked = store.lock()?;
        let mut review = store
            .load(id)
            .filter(|review| review.owner == caller.owner)
            .ok_or_else(|| no_review(id))?;
        let state = review.state(now_ms());
        if state != "approved" {
            return Err(conflict(state, id));
        }
        let program = store.program(id)?;
        if sha256(program.code.as_bytes()) != review.program_sha256 {
            return Err(store_error(&format!(
                "the program of review {id} does not match its digest"
            )));
        }
        if let Some(code) = code {
            if sha256(code.as_bytes()) != review.program_sha256 {
                return Err(ServiceError::Conflict(
                    "review_mismatch",
                    format!(
                        "review {id} approved another program (SHA-256 {}); this one needs a \
                         review of its own",
                        review.program_sha256
                    ),
                ));
            }
        }
        // The caller may still use the policy, and its text is the one the approver saw.
        let (_, registered) = self.policy(caller, Some(&review.policy)).map_err(|err| {
            ServiceError::Conflict(
                "review_void",
                format!("review {id} cannot run: {}", err.message()),
            )
        })?;
        if registered.policy.sha256 != review.policy_sha256 {
            review.status = Status::Void;
            store.save(&review)?;
            return Err(conflict("void", id));
        }
        review.status = Status::Used;
        store.save(&review)?;
        Ok((review, program))
    }

    /// Records how the run of a review ended, or gives the approval back when nothing ran.
    fn finish_review(&self, id: &str, ran: Option<String>) -> Option<Review> {
        let store = Store::new(&self.config.review);
        let _locked = store.lock().ok()?;
        let mut review = store.load(id)?;
        match ran {
            Some(status) => review.run_status = Some(status),
            None => review.status = Status::Approved,
        }
        store.save(&review).ok()?;
        Some(review)
    }

    /// The review `id` as its submitter sees it (for the MCP `review_status` tool).
    pub fn own_review(&self, caller: &Caller, id: &str) -> Result<Review, ServiceError> {
        Store::new(&self.config.review)
            .load(id)
            .filter(|review| review.owner == caller.owner)
            .ok_or_else(|| no_review(id))
    }
}
