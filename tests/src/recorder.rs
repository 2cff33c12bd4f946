//! A small HTTP/1.1 server on loopback that stands in for the outside world of extensions (a CRM,
//! an OAuth2 token endpoint, a status page) and records every request it receives with its
//! headers. `GET /token` or `POST /token` answers `{"access_token": "tok-<n>", "expires_in": <s>}`
//! (n counts the tokens handed out); `/health` answers the status set with `set_health`; `/slow`
//! answers after 10 s; anything else answers 200 `ok`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    /// Header names in lower case.
    pub headers: HashMap<String, String>,
    pub body: String,
}

#[derive(Clone)]
pub struct Recorder {
    pub port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    tokens: Arc<AtomicU64>,
    health: Arc<AtomicU16>,
    pub token_lifetime: Arc<AtomicU64>,
}

impl Recorder {
    pub async fn start() -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let recorder = Recorder {
            port: listener.local_addr().unwrap().port(),
            seen: Arc::default(),
            tokens: Arc::default(),
            health: Arc::new(AtomicU16::new(200)),
            token_lifetime: Arc::new(AtomicU64::new(3600)),
        };
        let shared = recorder.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let shared = shared.clone();
                tokio::spawn(async move { shared.serve(stream).await });
            }
        });
        recorder
    }

    /// `http://<host>:<port><path>`.
    pub fn url(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.port)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The requests to `path`.
    pub fn seen_at(&self, path: &str) -> Vec<Seen> {
        self.seen().into_iter().filter(|s| s.path == path).collect()
    }

    pub fn tokens_handed_out(&self) -> u64 {
        self.tokens.load(Ordering::SeqCst)
    }

    pub fn set_health(&self, status: u16) {
        self.health.store(status, Ordering::SeqCst);
    }

    async fn serve(&self, mut stream: TcpStream) {
        let mut buffer = Vec::new();
        let mut chunk = [0u8; 4096];
        let head_end = loop {
            if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
        let mut lines = head.split("\r\n");
        let mut first = lines.next().unwrap_or_default().split(' ');
        let (method, path) = (first.next().unwrap_or_default().to_string(), first.next().unwrap_or_default().to_string());
        let headers: HashMap<String, String> =
            lines.filter_map(|l| l.split_once(':')).map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string())).collect();
        let length: usize = headers.get("content-length").and_then(|l| l.parse().ok()).unwrap_or(0);
        let mut body = buffer[head_end + 4..].to_vec();
        while body.len() < length {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => body.extend_from_slice(&chunk[..n]),
            }
        }
        let body = String::from_utf8_lossy(&body).into_owned();
        self.seen.lock().unwrap().push(Seen { method, path: path.clone(), headers, body });
        let (status, answer) = match path.as_str() {
            "/token" => {
                let n = self.tokens.fetch_add(1, Ordering::SeqCst) + 1;
                let lifetime = self.token_lifetime.load(Ordering::SeqCst);
                (200, format!(r#"{{"access_token": "tok-{n}", "token_type": "Bearer", "expires_in": {lifetime}}}"#))
            }
            "/health" => (self.health.load(Ordering::SeqCst), "health".to_string()),
            "/slow" => {
                tokio::time::sleep(std::time::Duration::from_secs(10)).await;
                (200, "slow".to_string())
            }
            _ => (200, "ok".to_string()),
        };
        let response = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}", answer.len());
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
    }
}
