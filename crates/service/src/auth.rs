//! Bearer-token check on every RPC.
//!
//! With a token configured, each request must carry `authorization: Bearer
//! <token>`; a missing or different header is `UNAUTHENTICATED`. The comparison
//! looks at every byte whatever the first mismatch, so the answer time does not
//! tell how much of a guess was right.

use tonic::{Request, Status};

/// The interceptor installed in front of the service.
#[derive(Clone, Debug)]
pub struct TokenCheck {
    expected: Option<Vec<u8>>,
}

impl TokenCheck {
    /// `None` lets every request through.
    pub fn new(token: Option<&str>) -> Self {
        Self {
            expected: token.map(|t| format!("Bearer {t}").into_bytes()),
        }
    }
}

impl tonic::service::Interceptor for TokenCheck {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let Some(expected) = &self.expected else {
            return Ok(request);
        };
        let given = request
            .metadata()
            .get("authorization")
            .map(|v| v.as_bytes());
        match given {
            Some(given) if same(given, expected) => Ok(request),
            Some(_) => Err(Status::unauthenticated("wrong bearer token")),
            None => Err(Status::unauthenticated("missing bearer token")),
        }
    }
}

fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::service::Interceptor as _;

    fn with_header(value: Option<&str>) -> Request<()> {
        let mut r = Request::new(());
        if let Some(v) = value {
            r.metadata_mut().insert("authorization", v.parse().unwrap());
        }
        r
    }

    #[test]
    fn checks_the_bearer_token() {
        let mut check = TokenCheck::new(Some("s3cret"));
        assert!(check.call(with_header(Some("Bearer s3cret"))).is_ok());
        let wrong = check.call(with_header(Some("Bearer s3cre7"))).unwrap_err();
        assert_eq!(wrong.code(), tonic::Code::Unauthenticated);
        let missing = check.call(with_header(None)).unwrap_err();
        assert_eq!(missing.code(), tonic::Code::Unauthenticated);
        assert!(check.call(with_header(Some("s3cret"))).is_err());
    }

    #[test]
    fn no_token_lets_everything_through() {
        assert!(TokenCheck::new(None).call(with_header(None)).is_ok());
    }
}
