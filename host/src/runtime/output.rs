//! A call's stdout and stderr: captured in memory up to a bound, the rest dropped (the guest is
//! not told: a `println!` past the bound must not make a Rust guest panic), and emptied between
//! the calls of a reused instance (`warm.rs`) so that each execution keeps only its own output.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use tokio::io::AsyncWrite;
use wasmtime_wasi::async_trait;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

#[derive(Debug, Clone)]
pub struct CapturedOutput {
    capacity: usize,
    buffer: Arc<Mutex<BytesMut>>,
}

impl CapturedOutput {
    pub fn new(capacity: usize) -> CapturedOutput {
        CapturedOutput { capacity, buffer: Arc::default() }
    }

    pub fn contents(&self) -> Bytes {
        self.buffer.lock().expect("output lock").clone().freeze()
    }

    pub fn clear(&self) {
        self.buffer.lock().expect("output lock").clear();
    }

    /// Keeps what fits; says all of it was taken.
    fn keep(&self, bytes: &[u8]) -> usize {
        let mut buffer = self.buffer.lock().expect("output lock");
        let room = self.capacity.saturating_sub(buffer.len());
        buffer.extend_from_slice(&bytes[..bytes.len().min(room)]);
        bytes.len()
    }
}

#[async_trait]
impl OutputStream for CapturedOutput {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        self.keep(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        // Always room: what does not fit is dropped.
        Ok(64 * 1024)
    }
}

#[async_trait]
impl Pollable for CapturedOutput {
    async fn ready(&mut self) {}
}

impl AsyncWrite for CapturedOutput {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Poll::Ready(Ok(self.keep(buf)))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for CapturedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CapturedOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_past_the_bound_is_dropped_and_clear_empties() {
        let out = CapturedOutput::new(4);
        assert_eq!(out.keep(b"abc"), 3);
        assert_eq!(out.keep(b"def"), 3);
        assert_eq!(&out.contents()[..], b"abcd");
        out.clear();
        assert!(out.contents().is_empty());
        out.keep(b"xy");
        assert_eq!(&out.contents()[..], b"xy");
    }
}
