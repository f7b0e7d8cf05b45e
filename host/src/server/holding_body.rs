//! A response body that holds a value until it has been written (or dropped): how graceful
//! termination's wait group and the connection table count a request until its answer is
//! out, not only until its handler returned.

use axum::body::{Body, Bytes};
use http_body::{Frame, SizeHint};
use std::pin::Pin;
use std::task::{Context, Poll};

/// `inner`, with `held` dropped when the body is done or dropped.
pub struct HoldingBody<T> {
    inner: Body,
    _held: T,
}

/// `inner` holding `held` (a guard) as a [`Body`].
pub fn holding<T: Send + Unpin + 'static>(inner: Body, held: T) -> Body {
    Body::new(HoldingBody { inner, _held: held })
}

impl<T: Unpin> http_body::Body for HoldingBody<T> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
