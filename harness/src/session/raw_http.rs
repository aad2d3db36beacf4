//! Raw HTTP exchanges (the `http` and `auth` steps): requests built outside the
//! transport's own rules, sent through the session so that their bodies pass the
//! tool-call gate like everything else the session writes.

use std::sync::{Arc, Mutex};

use super::gate::{self, Refused, ToolGate};
use crate::transport::http::HttpHandle;

/// The way out for a raw HTTP request: the connection's handle (its options, session id,
/// recorded headers) for building it, and [`RawHttp::execute`] for sending it.
#[derive(Clone, Debug)]
pub struct RawHttp {
    handle: HttpHandle,
    gate: Arc<Mutex<ToolGate>>,
}

/// Why a raw HTTP request got no response.
#[derive(Debug, thiserror::Error)]
pub enum RawHttpError {
    /// The tool-call gate kept it back: nothing was sent.
    #[error("{0}")]
    Refused(Refused),
    /// The request failed on its way (connection, TLS, protocol).
    #[error(transparent)]
    Http(#[from] crate::transport::http::SendError),
}

impl RawHttp {
    pub(super) fn new(handle: HttpHandle, gate: Arc<Mutex<ToolGate>>) -> Self {
        RawHttp { handle, gate }
    }

    /// Whether the gate would let `body` leave (nothing counted): a step checks first, so
    /// that a refused call skips it before anything is sent or recorded.
    pub fn check(&self, body: &[u8]) -> Result<(), Refused> {
        gate::lock(&self.gate).judge(body).map(drop)
    }

    /// Sends `request` on the connection's client once the gate admits its body (a body
    /// that is a stream, not bytes, is refused: the gate cannot read it).
    pub async fn execute(
        &self,
        request: reqwest::Request,
    ) -> Result<reqwest::Response, RawHttpError> {
        let body = match request.body() {
            None => None,
            Some(body) => Some(body.as_bytes().ok_or_else(|| {
                RawHttpError::Refused(Refused {
                    tool: "(a streamed body)".into(),
                    why: crate::outcome::Forbidden::Unreadable,
                })
            })?),
        };
        if let Some(bytes) = body {
            gate::lock(&self.gate)
                .admit(bytes)
                .map_err(RawHttpError::Refused)?;
        }
        Ok(self.handle.client().execute(request).await?)
    }
}

impl RawHttpError {
    /// What went wrong, secrets redacted, for the transcript and the finding.
    pub fn describe(&self, handle: &HttpHandle) -> String {
        match self {
            RawHttpError::Refused(r) => r.to_string(),
            RawHttpError::Http(e) => handle
                .options()
                .redact(&crate::transport::http::error_chain(e)),
        }
    }

    /// Whether it failed in the TLS handshake.
    pub fn is_tls(&self) -> bool {
        match self {
            RawHttpError::Refused(_) => false,
            RawHttpError::Http(e) => e.is_tls_failure(),
        }
    }
}

/// A raw exchange reads the connection's state and builds its requests on the handle; only
/// sending goes through [`RawHttp::execute`].
impl std::ops::Deref for RawHttp {
    type Target = HttpHandle;

    fn deref(&self) -> &HttpHandle {
        &self.handle
    }
}
