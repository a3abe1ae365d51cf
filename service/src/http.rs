//! The HTTP/JSON API (axum): routes, authentication, status codes. (`listen.rs` accepts the
//! connections.)
//!
//! 200 for every request that was judged or executed (denied, failed and timed out included: the
//! agent needs the body); 400/401/403/404/405/408/413 for requests that are wrong; 429 or 503 with
//! `Retry-After` when the server is at capacity or shutting down; 500 when the server itself failed.
//! Errors have a JSON body `{"error": {"code", "message"}}`.
//!
//! On the Unix socket the file's mode and group decide who may connect, and the peer's uid and pid
//! are its identity; a bearer token there is optional but, when given, must be valid and limits the
//! policies. Over TCP a valid bearer token is required for everything but `/healthz`. Authentication
//! uses the headers alone and comes before the body is read, so a caller without a valid token
//! costs the server a request head, never a buffered body.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Bytes;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::rejection::{BytesRejection, PathRejection};
use axum::extract::{
    ConnectInfo, DefaultBodyLimit, FromRequest, FromRequestParts, Path, Request, State,
};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use hyper::body::Frame;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::admission::Rejection;
use super::sessions::Chunk;
use super::{Caller, ExecuteBody, Service, ServiceError, SessionBody};

/// Who is at the other end of a connection (put in each request's extensions by `listen.rs`).
#[derive(Debug, Clone)]
pub enum Peer {
    Unix { uid: Option<u32>, pid: Option<i32> },
    Tcp(SocketAddr),
}

/// The API's routes over `service`. Every route but `/healthz` authenticates from the headers
/// first ([`authenticated`]): a caller without a valid token gets its 401 before one byte of its
/// body is read. `mcp` serves MCP over Streamable HTTP at `/mcp` (`mcp_http.rs`).
pub fn router(service: Arc<Service>, mcp: super::mcp_http::Endpoint) -> Router {
    let limit = service.config.max_request_bytes;
    Router::new()
        .route("/v1/run", post(run))
        .route("/v1/check", post(check))
        .route("/v1/policies", get(policies))
        .route("/v1/sessions", post(create_session).get(list_sessions))
        .route("/v1/sessions/{id}", get(session_info).delete(end_session))
        .route("/v1/sessions/{id}/execute", post(execute))
        .route("/v1/sessions/{id}/files", get(list_files).post(upload_json))
        .route(
            "/v1/sessions/{id}/files/{*path}",
            get(download).put(upload_raw),
        )
        .route("/v1/reviews", get(list_reviews))
        .route("/v1/reviews/{id}", get(review_info))
        .route("/v1/reviews/{id}/approve", post(approve_review))
        .route("/v1/reviews/{id}/reject", post(reject_review))
        .route("/v1/reviews/{id}/run", post(run_review))
        .route("/metrics", get(metrics))
        .route(
            "/mcp",
            axum::routing::any(move |request: Request| async move { mcp.handle(request).await }),
        )
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&service),
            authenticated,
        ))
        .route("/healthz", get(healthz))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(limit))
        .layer(middleware::map_response_with_state(
            Arc::clone(&service),
            count_refused,
        ))
        .with_state(service)
}

/// Establishes the caller from the connection and the headers, and hands it to the handler in
/// the request's extensions; answers 401 without touching the body otherwise.
async fn authenticated(
    State(service): State<Arc<Service>>,
    ConnectInfo(peer): ConnectInfo<Peer>,
    mut request: Request,
    next: Next,
) -> Response {
    match authenticate(&service, &peer, request.headers()) {
        Ok(caller) => {
            // The connection has proved who uses it: out of the unauthenticated budget.
            if let Some(unproven) = request.extensions().get::<crate::listen::Unproven>() {
                unproven.settle();
            }
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        // The body is dropped unread: hyper answers and closes the connection.
        Err(response) => *response,
    }
}

async fn run(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
    request: Request,
) -> Response {
    match read_body::<super::RunBody>(&service, request).await {
        Ok(body) => answer(service.run(&caller, body, "run").await),
        Err(response) => *response,
    }
}

async fn check(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
    request: Request,
) -> Response {
    match read_body::<super::CheckBody>(&service, request).await {
        Ok(body) => answer(service.check_record(&caller, body, "check").await),
        Err(response) => *response,
    }
}

/// Reads (within `max_request_bytes` and `body_timeout`) and parses an authenticated caller's
/// body. A `Content-Length` over the cap is refused before reading.
async fn read_body<T: serde::de::DeserializeOwned>(
    service: &Service,
    request: Request,
) -> Result<T, Box<Response>> {
    parse_body(read_bytes(service, request).await?)
}

/// Reads an authenticated caller's body as bytes, within `max_request_bytes` and `body_timeout`.
async fn read_bytes(
    service: &Service,
    request: Request,
) -> Result<Result<Bytes, BytesRejection>, Box<Response>> {
    let limit = service.config.max_request_bytes;
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(Box::new(error_body(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            &format!("the body is over the server's limit of {limit} bytes"),
        )));
    }
    let timeout = service.config.body_timeout;
    let Ok(body) = tokio::time::timeout(timeout, Bytes::from_request(request, &())).await else {
        return Err(Box::new(error_body(
            StatusCode::REQUEST_TIMEOUT,
            "body_timeout",
            &format!("the body did not arrive within {} ms", timeout.as_millis()),
        )));
    };
    Ok(body)
}

fn answer(result: Result<impl serde::Serialize, ServiceError>) -> Response {
    match result {
        Ok(value) => (StatusCode::OK, axum::Json(value)).into_response(),
        Err(err) => err.into_response(),
    }
}

async fn policies(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
) -> Response {
    (StatusCode::OK, axum::Json(service.policies(&caller))).into_response()
}

async fn healthz(State(service): State<Arc<Service>>) -> Response {
    axum::Json(json!({
        "status": "ok",
        "running": service.running(),
        "max_concurrent_runs": service.config.max_concurrent_runs,
        "sessions": service.sessions().count(),
        "max_sessions": service.config.sessions.max_sessions,
        "node": super::sessions::node(),
    }))
    .into_response()
}

async fn metrics(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4"),
        )],
        service.metrics_text_for(&caller),
    )
        .into_response()
}

async fn not_found() -> Response {
    error_body(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such endpoint; see docs/serve.md",
    )
}

async fn method_not_allowed() -> Response {
    error_body(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "wrong method for this endpoint",
    )
}

/// Establishes the caller from the connection and the `Authorization` header.
fn authenticate(
    service: &Service,
    peer: &Peer,
    headers: &HeaderMap,
) -> Result<Caller, Box<Response>> {
    let bearer = match headers.get(header::AUTHORIZATION) {
        None => None,
        Some(value) => {
            let token = value
                .to_str()
                .ok()
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(str::trim);
            match token {
                Some(token) if !token.is_empty() => Some(token.to_owned()),
                _ => {
                    return Err(Box::new(unauthorized(
                        service,
                        "the Authorization header must be `Bearer <token>`",
                    )))
                }
            }
        }
    };
    let token = match &bearer {
        Some(secret) => match service.config.token_for(secret) {
            Some(token) => Some(token),
            None => return Err(Box::new(unauthorized(service, "the token is not valid"))),
        },
        None => None,
    };
    match (peer, token) {
        (_, Some(token)) => Ok(Caller {
            identity: match peer {
                Peer::Tcp(addr) => format!("token:{} addr:{addr}", token.name),
                Peer::Unix { uid, pid } => {
                    format!("token:{} uid:{} pid:{}", token.name, show(*uid), show(*pid))
                }
            },
            policies: Some(token.policies.clone()),
            owner: format!("token:{}", token.name),
        }),
        (Peer::Unix { uid, pid }, None) => Ok(Caller {
            identity: format!("uid:{} pid:{}", show(*uid), show(*pid)),
            policies: None,
            owner: format!("uid:{}", show(*uid)),
        }),
        (Peer::Tcp(_), None) => Err(Box::new(unauthorized(
            service,
            "a bearer token is required over TCP",
        ))),
    }
}

fn show<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "?".to_owned(), |v| v.to_string())
}

fn unauthorized(_service: &Service, message: &str) -> Response {
    let mut response = error_body(StatusCode::UNAUTHORIZED, "unauthorized", message);
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

fn parse_body<T: serde::de::DeserializeOwned>(
    body: Result<Bytes, BytesRejection>,
) -> Result<T, Box<Response>> {
    let bytes = body.map_err(|rejection| {
        let status = rejection.status();
        let code = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "too_large"
        } else {
            "bad_request"
        };
        Box::new(error_body(status, code, &rejection.body_text()))
    })?;
    serde_json::from_slice(&bytes).map_err(|err| {
        Box::new(error_body(
            StatusCode::BAD_REQUEST,
            "bad_request",
            &format!("the body is not a valid request: {err}"),
        ))
    })
}

impl IntoResponse for ServiceError {
    /// The error body (`{"error": {"code", "message"}}`, with `node` for `wrong_node`), its
    /// status code, and `Retry-After` when the caller may retry.
    fn into_response(self) -> Response {
        error_response(&self)
    }
}

fn error_response(err: &ServiceError) -> Response {
    let status = match err {
        ServiceError::BadRequest(_) => StatusCode::BAD_REQUEST,
        ServiceError::Forbidden(_) => StatusCode::FORBIDDEN,
        ServiceError::NotFound(_) => StatusCode::NOT_FOUND,
        ServiceError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
        ServiceError::SessionLimit(..) | ServiceError::Rejected(Rejection::QueueFull, _) => {
            StatusCode::TOO_MANY_REQUESTS
        }
        ServiceError::Rejected(_, _) => StatusCode::SERVICE_UNAVAILABLE,
        ServiceError::WrongNode(..) => StatusCode::MISDIRECTED_REQUEST,
        ServiceError::SessionLost(_) => StatusCode::GONE,
        ServiceError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        ServiceError::Conflict(..) => StatusCode::CONFLICT,
    };
    let mut response = match err {
        // The node that holds the session, for a client or router that sends it there.
        ServiceError::WrongNode(node, message) => {
            let body = json!({"error": {"code": err.code(), "node": node, "message": message}});
            (status, axum::Json(body)).into_response()
        }
        _ => error_body(status, err.code(), &err.message()),
    };
    // Counted by the service already.
    response.extensions_mut().remove::<Refused>();
    if let ServiceError::Rejected(_, seconds) | ServiceError::SessionLimit(_, seconds) = err {
        if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
    }
    response
}

pub(crate) fn error_body(status: StatusCode, code: &'static str, message: &str) -> Response {
    let body: Value = json!({"error": {"code": code, "message": message}});
    let mut response = (status, axum::Json(body)).into_response();
    response.extensions_mut().insert(Refused(code));
    response
}

/// Marks a response that turned a request away before the service judged it (a malformed body, an
/// unknown endpoint, a missing token…), so that [`count_refused`] counts it in
/// `warden_requests_rejected_total`. What the service itself refuses it counts on its own (for
/// every front end), and [`error_response`] leaves those unmarked.
#[derive(Debug, Clone, Copy)]
struct Refused(&'static str);

async fn count_refused(State(service): State<Arc<Service>>, response: Response) -> Response {
    if let Some(Refused(code)) = response.extensions().get::<Refused>() {
        service.note_rejected(code);
    }
    response
}

// Sessions (docs/serve.md, "Sessions").

async fn create_session(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
    request: Request,
) -> Response {
    match read_body::<SessionBody>(&service, request).await {
        Ok(body) => answer(
            service
                .create_session(&caller, body, "session_create")
                .await,
        ),
        Err(response) => *response,
    }
}

async fn list_sessions(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
) -> Response {
    (StatusCode::OK, axum::Json(service.list_sessions(&caller))).into_response()
}

async fn session_info(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
    Ids(id): Ids<String>,
) -> Response {
    answer(service.session_info(&caller, &id))
}

async fn end_session(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
    Ids(id): Ids<String>,
) -> Response {
    answer(service.end_session(&caller, &id, "session_delete").await)
}

/// `POST /v1/sessions/{id}/execute`: the cell's record; with `Accept: text/event-stream` or
/// `?stream=1`, Server-Sent Events: `stream` events (`{"name": "stdout"|"stderr", "text"}`) as
/// the cell writes, then one `record` event (the record), or one `error` event.
async fn execute(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
    Ids(id): Ids<String>,
    request: Request,
) -> Response {
    let stream = wants_stream(request.headers(), request.uri());
    let body = match read_body::<ExecuteBody>(&service, request).await {
        Ok(body) => body,
        Err(response) => return *response,
    };
    if !stream {
        return answer(
            service
                .execute_cell(&caller, &id, body.code, None, None, "session_execute")
                .await,
        );
    }
    // An unknown session is a plain 404, before the event stream starts.
    if !service.session_alive(&caller, &id) {
        return answer(service.session_info(&caller, &id));
    }
    let (events, body_rx) = mpsc::channel::<Bytes>(64);
    tokio::spawn(stream_cell(service, caller, id, body.code, events));
    let mut response = Response::new(axum::body::Body::new(ChannelBody { rx: body_rx }));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Runs a cell, turning its output into events as it comes. The cell runs to its end even when
/// the client goes away (its record is still audited).
async fn stream_cell(
    service: Arc<Service>,
    caller: Caller,
    id: String,
    code: String,
    events: mpsc::Sender<Bytes>,
) {
    let (chunks, mut chunks_rx) = mpsc::channel::<Chunk>(256);
    let run = service.execute_cell(&caller, &id, code, Some(chunks), None, "session_execute");
    tokio::pin!(run);
    let mut open = true;
    let result = loop {
        tokio::select! {
            chunk = chunks_rx.recv(), if open => match chunk {
                Some(chunk) => {
                    let _ = events.send(chunk_event(&chunk)).await;
                }
                None => open = false,
            },
            result = &mut run => break result,
        }
    };
    while let Ok(chunk) = chunks_rx.try_recv() {
        let _ = events.send(chunk_event(&chunk)).await;
    }
    let last = match result {
        Ok(record) => sse_event("record", &record),
        Err(err) => sse_event(
            "error",
            &json!({"error": {"code": err.code(), "message": err.message()}}),
        ),
    };
    let _ = events.send(last).await;
}

fn chunk_event(chunk: &Chunk) -> Bytes {
    sse_event("stream", &json!({"name": chunk.name, "text": chunk.text}))
}

/// One Server-Sent Event (compact JSON holds no newline).
fn sse_event(name: &str, data: &impl serde::Serialize) -> Bytes {
    let data = serde_json::to_string(data).unwrap_or_else(|_| "null".to_owned());
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

/// `Accept: text/event-stream`, or `stream=1` / `stream=true` in the query.
fn wants_stream(headers: &HeaderMap, uri: &Uri) -> bool {
    let accepts = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|value| value.contains("text/event-stream"));
    let asked = uri.query().is_some_and(|query| {
        query
            .split('&')
            .any(|pair| matches!(pair, "stream" | "stream=1" | "stream=true"))
    });
    accepts || asked
}

/// A response body fed by a channel: each message is one frame, written as it comes.
struct ChannelBody {
    rx: mpsc::Receiver<Bytes>,
}

impl hyper::body::Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.rx
            .poll_recv(cx)
            .map(|next| next.map(|bytes| Ok(Frame::data(bytes))))
    }
}

async fn list_files(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
    Ids(id): Ids<String>,
) -> Response {
    answer(service.list_files(&caller, &id, "session_files").await)
}

/// `POST /v1/sessions/{id}/files` with `{"name", "content_base64"}`: the body is staged on disk as
/// it arrives (under the upload's run slot, within `max_request_bytes` and `body_timeout`), then
/// its base64 is decoded a piece at a time into the file the worker reads (`uploads.rs`).
async fn upload_json(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
    Ids(id): Ids<String>,
    request: Request,
) -> Response {
    if let Some(response) = over_the_limit(&service, &request) {
        return response;
    }
    let upload = match service.begin_upload(&caller, &id).await {
        Ok(upload) => upload,
        Err(err) => return err.into_response(),
    };
    let mut scratch = match service.upload_scratch() {
        Ok(scratch) => scratch,
        Err(err) => return err.into_response(),
    };
    if let Err(response) = stream_body(&service, request, |bytes| scratch.write(bytes)).await {
        return response;
    }
    let decoded = tokio::task::spawn_blocking(move || {
        let mut upload = upload;
        let name = scratch
            .reader()
            .map_err(|err| err.to_string())
            .and_then(|reader| upload.write_json(reader));
        (upload, name)
    })
    .await;
    let (upload, name) = match decoded {
        Ok((upload, Ok(name))) => (upload, name),
        Ok((_, Err(err))) => {
            return error_body(
                StatusCode::BAD_REQUEST,
                "bad_request",
                &format!("the body is not an upload: {err}"),
            )
        }
        Err(err) => {
            return error_body(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                &format!("the upload failed: {err}"),
            )
        }
    };
    answer(
        service
            .upload_file(&caller, &id, &name, upload, "session_upload")
            .await,
    )
}

/// `PUT /v1/sessions/{id}/files/{path}` with the file's bytes as the body, written to the staged
/// file frame by frame as they arrive (within `max_request_bytes` and `body_timeout`), under the
/// upload's run slot.
async fn upload_raw(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
    Ids((id, name)): Ids<(String, String)>,
    request: Request,
) -> Response {
    if let Some(response) = over_the_limit(&service, &request) {
        return response;
    }
    let mut upload = match service.begin_upload(&caller, &id).await {
        Ok(upload) => upload,
        Err(err) => return err.into_response(),
    };
    if let Err(response) = stream_body(&service, request, |bytes| upload.write(bytes)).await {
        return response;
    }
    answer(
        service
            .upload_file(&caller, &id, &name, upload, "session_upload")
            .await,
    )
}

/// A `Content-Length` over `max_request_bytes`, refused before anything is spent on the body.
fn over_the_limit(service: &Service, request: &Request) -> Option<Response> {
    let limit = service.config.max_request_bytes as u64;
    request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok())
        .is_some_and(|length| length > limit)
        .then(|| too_large(limit))
}

/// Hands the body to `sink` frame by frame as it arrives, within `max_request_bytes` and
/// `body_timeout`: what the server holds of it is one frame.
async fn stream_body(
    service: &Service,
    request: Request,
    mut sink: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> Result<(), Response> {
    use hyper::body::Body as _;
    let limit = service.config.max_request_bytes as u64;
    let mut body = request.into_body();
    let mut read = 0u64;
    let streamed = async {
        while let Some(frame) =
            std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await
        {
            let frame = frame.map_err(|err| {
                error_body(
                    StatusCode::BAD_REQUEST,
                    "bad_request",
                    &format!("the body could not be read: {err}"),
                )
            })?;
            if let Ok(data) = frame.into_data() {
                read += data.len() as u64;
                if read > limit {
                    return Err(too_large(limit));
                }
                sink(&data).map_err(|err| {
                    error_body(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "internal",
                        &format!("cannot stage the upload: {err}"),
                    )
                })?;
            }
        }
        Ok(())
    };
    let timeout = service.config.body_timeout;
    match tokio::time::timeout(timeout, streamed).await {
        Ok(result) => result,
        Err(_) => Err(error_body(
            StatusCode::REQUEST_TIMEOUT,
            "body_timeout",
            &format!("the body did not arrive within {} ms", timeout.as_millis()),
        )),
    }
}

fn too_large(limit: u64) -> Response {
    error_body(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        &format!("the body is over the server's limit of {limit} bytes"),
    )
}

/// `GET /v1/sessions/{id}/files/{path}`: the file's bytes.
async fn download(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
    Ids((id, name)): Ids<(String, String)>,
) -> Response {
    match service
        .download_file(&caller, &id, &name, "session_download")
        .await
    {
        Ok(bytes) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            )],
            bytes,
        )
            .into_response(),
        Err(err) => err.into_response(),
    }
}

/// The ids in a request's path (a session's or a review's id; a session's id and a file's
/// path): axum's [`Path`], refused as every other bad request is (400 `bad_request`, counted).
struct Ids<T>(T);

impl<T, S> FromRequestParts<S> for Ids<T>
where
    T: serde::de::DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(ids)) => Ok(Ids(ids)),
            Err(rejection) => Err(bad_path(&rejection)),
        }
    }
}

fn bad_path(rejection: &PathRejection) -> Response {
    error_body(
        StatusCode::BAD_REQUEST,
        "bad_request",
        &format!("bad path: {}", rejection.body_text()),
    )
}

// Reviews (docs/serve.md, "Review"; service/src/review.rs).

async fn list_reviews(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
) -> Response {
    answer(service.list_reviews(&caller))
}

async fn review_info(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
    Ids(id): Ids<String>,
) -> Response {
    answer(service.review_info(&caller, &id))
}

async fn approve_review(
    state: State<Arc<Service>>,
    caller: Extension<Caller>,
    Ids(id): Ids<String>,
    request: Request,
) -> Response {
    decide_review(state, caller, id, request, true).await
}

async fn reject_review(
    state: State<Arc<Service>>,
    caller: Extension<Caller>,
    Ids(id): Ids<String>,
    request: Request,
) -> Response {
    decide_review(state, caller, id, request, false).await
}

async fn decide_review(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
    id: String,
    request: Request,
    approve: bool,
) -> Response {
    match read_optional_body::<super::review::DecideBody>(&service, request).await {
        Ok(body) => answer(service.decide_review(&caller, &id, approve, body)),
        Err(response) => *response,
    }
}

async fn run_review(
    State(service): State<Arc<Service>>,
    Extension(caller): Extension<Caller>,
    Ids(id): Ids<String>,
    request: Request,
) -> Response {
    match read_optional_body::<super::review::RunReviewBody>(&service, request).await {
        Ok(body) => answer(service.run_reviewed(&caller, &id, body, "review_run").await),
        Err(response) => *response,
    }
}

/// [`read_body`] for a body that may be left out (an empty body is the default).
async fn read_optional_body<T: serde::de::DeserializeOwned + Default>(
    service: &Service,
    request: Request,
) -> Result<T, Box<Response>> {
    match read_bytes(service, request).await? {
        Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Ok(T::default()),
        body => parse_body(body),
    }
}
