//! MCP over Streamable HTTP: `/mcp` on `warden serve`'s listeners, for MCP clients that cannot
//! spawn a local process. The tools are those of `warden mcp` ([`super::mcp`]); this file only
//! puts rmcp's Streamable HTTP transport behind the HTTP API's front door.
//!
//! - **Who may call**: `/mcp` sits behind the same authentication as the API (`http.rs`: bearer
//!   tokens checked from the headers before the body is read, peer credentials on the socket; a
//!   token's policy list applies to the tools). An MCP session (`Mcp-Session-Id`) belongs to the
//!   client that initialised it (its token, or its uid on the socket without one): anyone else
//!   gets 404, as for the API's sessions, and the tools run as that client.
//! - **Bounds**: the body within `max_request_bytes` (413) and `body_timeout_ms` (408); at most
//!   `admission.max_connections` MCP sessions at once (429 `session_limit` with `Retry-After`);
//!   an MCP session unused for `sessions.idle_timeout_ms` is closed. `run_python` cells run in
//!   sessions, so they take the session cap (`sessions.max_sessions`) like `POST /v1/sessions`;
//!   a refusal there is a tool error that says when to retry. During shutdown: 503 with
//!   `Retry-After`, and every MCP session is closed (its warden session with it).
//! - **Browsers** are refused: a request with an `Origin` header gets 403 (rmcp's check). The
//!   `Host` header is not checked: every TCP request carries a token, which DNS rebinding cannot
//!   supply, and the socket is not reachable from a browser.
//! - **Ending a session**: `DELETE /mcp` with its `Mcp-Session-Id` closes the MCP session (and its
//!   warden session) and answers 200, as the official clients expect when they exit.
//! - **Audit and metrics**: each tool call writes the audit line of the service call it makes
//!   (`run_python`, `check_python`…); every refused request is counted in
//!   `warden_requests_rejected_total`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::http::error_body;
use super::mcp::Warden;
use super::{Caller, Service};

/// The header that names an MCP session.
const SESSION_HEADER: &str = "mcp-session-id";

/// Seconds a client is told to wait when the MCP session cap is reached or the server stops.
const RETRY_AFTER_SECONDS: u64 = 5;

tokio::task_local! {
    /// The authenticated caller of the request being handled, for the MCP session rmcp creates
    /// while handling an `initialize`.
    static CALLER: Caller;
}

/// The `/mcp` endpoint. Clones share their state.
#[derive(Clone)]
pub struct Endpoint {
    service: Arc<Service>,
    mcp: StreamableHttpService<Warden, LocalSessionManager>,
    manager: Arc<LocalSessionManager>,
    /// Each live MCP session's owner ([`Caller::owner`]), and each session being created
    /// ([`Reserved`]).
    owners: Arc<Mutex<HashMap<String, String>>>,
    /// Numbers the reservations.
    reservations: Arc<AtomicU64>,
}

/// The key prefix of a session being created (no session id rmcp makes starts with a NUL).
const RESERVED: &str = "\0reserved-";

/// A session being created, counted in its owner's share until its request has been answered
/// (by then the session, when one was made, is counted under its own id).
struct Reserved {
    owners: Arc<Mutex<HashMap<String, String>>>,
    key: String,
}

impl Drop for Reserved {
    fn drop(&mut self) {
        if let Ok(mut owners) = self.owners.lock() {
            owners.remove(&self.key);
        }
    }
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("mcp_http::Endpoint")
    }
}

impl Endpoint {
    pub fn new(service: Arc<Service>) -> Self {
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(service.config.sessions.idle_timeout);
        let manager = Arc::new(manager);
        let mut config = StreamableHttpServerConfig::default()
            .disable_allowed_hosts()
            .enforce_origin_validation();
        config.max_request_body_bytes = service.config.max_request_bytes;
        let for_sessions = Arc::clone(&service);
        let mcp = StreamableHttpService::new(
            move || {
                // Fail closed: an MCP session exists only for an authenticated caller.
                CALLER
                    .try_with(Caller::clone)
                    .map(|caller| Warden::over_http(Arc::clone(&for_sessions), caller))
                    .map_err(|_| std::io::Error::other("no authenticated caller"))
            },
            Arc::clone(&manager),
            config,
        );
        Self {
            service,
            mcp,
            manager,
            owners: Arc::new(Mutex::new(HashMap::new())),
            reservations: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Shutting down: refuse new requests and close every MCP session (their open streams end).
    pub fn stop(&self) {
        self.mcp.config.cancellation_token.cancel();
    }

    /// Answers one request to `/mcp` (authenticated: the caller is in its extensions).
    pub async fn handle(&self, request: Request) -> Response {
        let Some(caller) = request.extensions().get::<Caller>().cloned() else {
            return error_body(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "no authenticated caller",
            );
        };
        if self.mcp.config.cancellation_token.is_cancelled() {
            return retry_later(
                StatusCode::SERVICE_UNAVAILABLE,
                "shutting_down",
                "the server is shutting down",
            );
        }
        let session = request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let mut _reserved = None;
        match &session {
            Some(id) if !self.owned_by(id, &caller.owner) => {
                return error_body(
                    StatusCode::NOT_FOUND,
                    "not_found",
                    "no such MCP session for this client; initialise a new one",
                );
            }
            Some(_) => {}
            None => match self.room_for_a_session(&caller.owner).await {
                Ok(reserved) => _reserved = Some(reserved),
                Err(why) => {
                    return retry_later(StatusCode::TOO_MANY_REQUESTS, "session_limit", why)
                }
            },
        }
        let deleting = request.method() == axum::http::Method::DELETE;
        let request = match self.read_body(request).await {
            Ok(request) => request,
            Err(response) => return *response,
        };
        let owner = caller.owner.clone();
        let mut response = CALLER
            .scope(caller, self.mcp.handle(request))
            .await
            .into_response();
        if deleting && response.status() == StatusCode::ACCEPTED {
            // The session is closed by now. rmcp answers 202, which the official clients take for
            // a failure ("Session termination failed: 202"): the protocol's answer to a DELETE
            // that ended the session is 200.
            *response.status_mut() = StatusCode::OK;
        }
        self.after(session.as_deref(), deleting, &owner, &response);
        // rmcp's own refusals (a malformed message, an unknown session…); the server's failures
        // are not refusals.
        if response.status().is_client_error() {
            self.service.note_rejected(refusal_code(response.status()));
        }
        response
    }

    fn owned_by(&self, id: &str, owner: &str) -> bool {
        self.owners
            .lock()
            .is_ok_and(|owners| owners.get(id).is_some_and(|o| o == owner))
    }

    /// Whether another MCP session may start for `owner`: within the server's cap
    /// (`admission.max_connections`) and the client's share of it
    /// (`admission.max_mcp_sessions_per_client`). Sessions rmcp has closed are forgotten first.
    async fn room_for_a_session(&self, owner: &str) -> Result<Reserved, &'static str> {
        let live: Vec<String> = self
            .manager
            .sessions
            .read()
            .await
            .keys()
            .map(ToString::to_string)
            .collect();
        let Ok(mut owners) = self.owners.lock() else {
            return Err("the server cannot count its MCP sessions; retry later");
        };
        owners.retain(|id, _| id.starts_with(RESERVED) || live.contains(id));
        let config = &self.service.config;
        if owners.values().filter(|o| *o == owner).count() >= config.max_mcp_sessions_per_client {
            return Err("this client holds its share of MCP sessions \
                 (admission.max_mcp_sessions_per_client); end one (DELETE /mcp) or retry later");
        }
        if owners.len() >= config.max_connections.max(1) {
            return Err("the server holds as many MCP sessions as it may; retry later");
        }
        // Counted from now on, so that concurrent first requests of one client cannot all pass
        // the check before any of their sessions exists.
        let key = format!(
            "{RESERVED}{}",
            self.reservations.fetch_add(1, Ordering::SeqCst)
        );
        owners.insert(key.clone(), owner.to_owned());
        Ok(Reserved {
            owners: Arc::clone(&self.owners),
            key,
        })
    }

    /// Records the owner of a session just created; forgets one just deleted.
    fn after(&self, session: Option<&str>, deleting: bool, owner: &str, response: &Response) {
        let Ok(mut owners) = self.owners.lock() else {
            return;
        };
        match session {
            Some(id) if deleting && response.status().is_success() => {
                owners.remove(id);
            }
            Some(_) => {}
            None => {
                if let Some(id) = response
                    .headers()
                    .get(SESSION_HEADER)
                    .and_then(|value| value.to_str().ok())
                {
                    owners.insert(id.to_owned(), owner.to_owned());
                }
            }
        }
    }

    /// The body, read within `max_request_bytes` and `body_timeout` (as the API's).
    async fn read_body(&self, request: Request) -> Result<Request, Box<Response>> {
        let limit = self.service.config.max_request_bytes;
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<u64>().ok());
        let too_large = || {
            Box::new(error_body(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_large",
                &format!("the body is over the server's limit of {limit} bytes"),
            ))
        };
        if declared.is_some_and(|length| length > limit as u64) {
            return Err(too_large());
        }
        let (parts, body) = request.into_parts();
        let timeout = self.service.config.body_timeout;
        match tokio::time::timeout(timeout, axum::body::to_bytes(body, limit)).await {
            Err(_) => Err(Box::new(error_body(
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                &format!("the body did not arrive within {} ms", timeout.as_millis()),
            ))),
            Ok(Err(_)) => Err(too_large()),
            Ok(Ok(bytes)) => Ok(Request::from_parts(parts, Body::from(bytes))),
        }
    }
}

/// A refusal with a `Retry-After`.
fn retry_later(status: StatusCode, code: &'static str, message: &str) -> Response {
    let mut response = error_body(status, code, message);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
    response
}

/// The reason an error status from rmcp is counted under.
fn refusal_code(status: StatusCode) -> &'static str {
    match status {
        StatusCode::BAD_REQUEST => "bad_request",
        StatusCode::FORBIDDEN => "forbidden",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::NOT_ACCEPTABLE => "not_acceptable",
        StatusCode::PAYLOAD_TOO_LARGE => "too_large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        _ => "bad_request",
    }
}
