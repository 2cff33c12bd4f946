//! The platform's error format: a status code, and an empty body except for 400 and 409, which
//! carry `{"message": ...}` saying what is wrong, and the few refusals a client could not guess
//! the reason of (a full media quota: 413; a WebDAV request Herald does not serve: 403 or 405),
//! which carry one too. Faults (5xx) are logged and never explained to
//! the client.

use axum::extract::rejection::PathRejection;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::rsql::FilterError;
use crate::store::{StoreError, Unavailable};

pub type ApiResult<T> = Result<T, ApiError>;

#[derive(Debug)]
pub enum ApiError {
    BadRequest(String),
    Unauthorized,
    Forbidden,
    NotFound,
    NotAcceptable,
    Conflict(String),
    PayloadTooLarge,
    UnsupportedMediaType,
    /// A refusal with another status that says why (the client's mistake: never a 5xx).
    Explained(StatusCode, String),
    /// A filter names a selector that does not exist (the spec's 422).
    UnknownSelector(String),
    /// A limit is reached; retry after this many seconds.
    TooManyRequests {
        retry_after: u64,
    },
    /// The database cannot be reached (down, restarting, refusing connections): not a fault in
    /// Herald, and the caller may come back (503 with `Retry-After`).
    Unavailable(String),
    Internal(anyhow::Error),
}

/// Seconds a caller is asked to wait when the database is unreachable.
const UNAVAILABLE_RETRY_AFTER: u32 = 5;

impl ApiError {
    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError::BadRequest(message.into())
    }

    pub fn forbidden_because(message: impl Into<String>) -> ApiError {
        ApiError::Explained(StatusCode::FORBIDDEN, message.into())
    }

    /// A write that would take the instance's media area past its quota.
    pub fn quota_exceeded(message: impl Into<String>) -> ApiError {
        ApiError::Explained(StatusCode::PAYLOAD_TOO_LARGE, message.into())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, message) = match self {
            ApiError::BadRequest(m) => (StatusCode::BAD_REQUEST, Some(m)),
            ApiError::Conflict(m) => (StatusCode::CONFLICT, Some(m)),
            ApiError::Explained(status, m) => (status, Some(m)),
            ApiError::Unauthorized => {
                let mut r = StatusCode::UNAUTHORIZED.into_response();
                r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"herald\""));
                return r;
            }
            ApiError::Forbidden => (StatusCode::FORBIDDEN, None),
            ApiError::NotFound => (StatusCode::NOT_FOUND, None),
            ApiError::NotAcceptable => (StatusCode::NOT_ACCEPTABLE, None),
            ApiError::PayloadTooLarge => (StatusCode::PAYLOAD_TOO_LARGE, None),
            ApiError::UnsupportedMediaType => (StatusCode::UNSUPPORTED_MEDIA_TYPE, None),
            ApiError::UnknownSelector(selector) => {
                (StatusCode::UNPROCESSABLE_ENTITY, Some(format!("the filter names '{selector}', which is not a field here")))
            }
            ApiError::TooManyRequests { retry_after } => {
                let mut r = StatusCode::TOO_MANY_REQUESTS.into_response();
                r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
                return r;
            }
            ApiError::Unavailable(e) => {
                tracing::warn!(error = %e, "the database cannot be reached");
                let mut r = StatusCode::SERVICE_UNAVAILABLE.into_response();
                r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(UNAVAILABLE_RETRY_AFTER));
                return r;
            }
            ApiError::Internal(e) => {
                tracing::error!(error = ?e, "request failed");
                (StatusCode::INTERNAL_SERVER_ERROR, None)
            }
        };
        match message {
            Some(message) => (status, axum::Json(crate::http::openapi::schemas::Message { message })).into_response(),
            None => status.into_response(),
        }
    }
}

impl ApiError {
    /// An instance that could not be activated: `missing` when there is no such instance (each
    /// door says it its own way: 401 for a credential, 404 for a route), 503 when its store
    /// cannot be opened now (the registry logged why).
    pub fn inactive(activation: crate::tenants::Activation, missing: ApiError) -> ApiError {
        match activation {
            crate::tenants::Activation::Missing => missing,
            crate::tenants::Activation::Unavailable(_) => ApiError::Unavailable("the instance's data cannot be opened".into()),
        }
    }
}

impl From<crate::domain::DomainError> for ApiError {
    fn from(e: crate::domain::DomainError) -> ApiError {
        use crate::domain::DomainError;
        match e {
            DomainError::NotFound => ApiError::NotFound,
            DomainError::Invalid(m) => ApiError::BadRequest(m),
            DomainError::Conflict(m) => ApiError::Conflict(m),
            DomainError::UnknownSelector(s) => ApiError::UnknownSelector(s),
            DomainError::Store(e) => e.into(),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::Conflict(m) => ApiError::Conflict(m),
            StoreError::Invalid(m) => ApiError::BadRequest(m),
            StoreError::Db(e) if e.is_unavailable() => ApiError::Unavailable(e.to_string()),
            StoreError::Db(e) => ApiError::Internal(e.into()),
        }
    }
}

impl From<crate::tenants::MediaError> for ApiError {
    fn from(e: crate::tenants::MediaError) -> ApiError {
        match e {
            crate::tenants::MediaError::Store(e) => e.into(),
            crate::tenants::MediaError::Disk(e) => ApiError::Internal(e.into()),
        }
    }
}

impl From<FilterError> for ApiError {
    fn from(e: FilterError) -> ApiError {
        match e {
            FilterError::UnknownSelector(s) => ApiError::UnknownSelector(s),
            FilterError::Invalid(m) => ApiError::BadRequest(m),
        }
    }
}

/// A path the router matched but whose segments cannot be read. axum's own text names the
/// route's parameters and Rust types: the client is told what is wrong in its terms instead.
impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> ApiError {
        use axum::extract::path::ErrorKind;
        let message = match &r {
            PathRejection::FailedToDeserializePathParams(e) => match e.kind() {
                ErrorKind::InvalidUtf8InPathParam { .. } => super::extract::SEGMENT_NOT_UTF8,
                _ => "a path segment does not fit this resource",
            },
            _ => "the path does not fit this resource",
        };
        ApiError::bad(format!("invalid path: {message}"))
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> ApiError {
        // A store error carried through other layers keeps its meaning.
        let unavailable = e.chain().any(|cause| match cause.downcast_ref::<StoreError>() {
            Some(StoreError::Db(db)) => db.is_unavailable(),
            _ => cause.downcast_ref::<sqlx::Error>().is_some_and(Unavailable::is_unavailable),
        });
        if unavailable {
            ApiError::Unavailable(format!("{e:#}"))
        } else {
            ApiError::Internal(e)
        }
    }
}
