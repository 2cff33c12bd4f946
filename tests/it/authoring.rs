//! What an extension author uses besides the SDKs: `herald extension config`, which writes the
//! configuration section into a component any tool built, and the per-extension memory cap.

use herald_tests::process::herald_binary;
use herald_tests::reqwest::multipart::{Form, Part};
use herald_tests::reqwest::Method;
use herald_tests::{answer, Answer, Api, TestServer};

async fn herald(args: &[&str]) -> std::process::Output {
    tokio::process::Command::new(herald_binary()).args(args).output().await.expect("herald runs")
}

/// `component` with the section `herald extension config ... args` writes.
async fn configured(component: &str, args: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("configured.wasm");
    let mut all = vec!["extension", "config", component, "-o", out.to_str().unwrap()];
    all.extend_from_slice(args);
    let written = herald(&all).await;
    assert!(written.status.success(), "{}", String::from_utf8_lossy(&written.stderr));
    std::fs::read(out).unwrap()
}

async fn upload(api: &Api, name: &str, bytes: Vec<u8>) -> Answer {
    let form = Form::new().part("file", Part::bytes(bytes).file_name(name.to_string())).text("type", "http");
    answer(api.request(Method::POST, "/assets/extensions").multipart(form).send().await.unwrap()).await
}

#[tokio::test]
async fn the_config_tool_opens_an_extension_and_shows_its_section() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    // echo carries no section: secure. Written open, the open endpoint serves it.
    let open = configured(env!("GUEST_ECHO"), &["--open", "--timeout-ms", "5000"]).await;
    upload(&api, "echo.wasm", open).await.expect(201);
    let r = s.client.post(format!("{}/extensions/open/demo/echo", s.base)).body("hi").send().await.unwrap();
    assert_eq!(r.status(), 200);
    api.get("/extensions/secure/echo").await.expect(403);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("open.wasm");
    std::fs::write(&file, configured(env!("GUEST_ECHO"), &["--open", "--allowed-host", "api.example.com"]).await).unwrap();
    let shown = herald(&["extension", "config", file.to_str().unwrap(), "--show"]).await;
    let json: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(json, serde_json::json!({"open": true, "async": false, "allowed_hosts": ["api.example.com"]}));
    // Bad options are refused with the section's own messages; a Rust component whose core
    // module carries the section is left to its source.
    let bad = herald(&["extension", "config", file.to_str().unwrap(), "-o", "/dev/null", "--timeout-ms", "0"]).await;
    assert!(
        !bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("'timeout_ms' must be"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    // A second run changes only what its flags name: the timeout set by the build stays.
    let timed = dir.path().join("timed.wasm");
    std::fs::write(&timed, configured(env!("GUEST_ECHO"), &["--timeout-ms", "4000", "--allowed-host", "a.example.com"]).await).unwrap();
    let merged = dir.path().join("merged.wasm");
    std::fs::write(&merged, configured(timed.to_str().unwrap(), &["--open"]).await).unwrap();
    let shown = herald(&["extension", "config", merged.to_str().unwrap(), "--show"]).await;
    let json: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(json, serde_json::json!({"open": true, "async": false, "allowed_hosts": ["a.example.com"], "timeout_ms": 4000}));
    let nested = herald(&["extension", "config", env!("GUEST_FETCH"), "-o", "/dev/null", "--open"]).await;
    assert!(String::from_utf8_lossy(&nested.stderr).contains("core module carries"), "{}", String::from_utf8_lossy(&nested.stderr));
}

#[tokio::test]
async fn an_extension_asks_for_its_memory_within_the_operators_maximum() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    // More than the operator's maximum (256 MiB by default): refused at upload.
    let greedy = upload(&api, "greedy.wasm", configured(env!("GUEST_ECHO"), &["--memory-mb", "300"]).await).await;
    greedy.expect(400);
    assert!(
        greedy.message().contains("'memory_mb' asks for 300 MiB; this server lets an extension have at most 256 MiB"),
        "{}",
        greedy.message()
    );
    // 1 MiB is less than the guest's own stack: its calls fail (502), with the reason logged.
    upload(&api, "tiny.wasm", configured(env!("GUEST_ECHO"), &["--memory-mb", "1"]).await).await.expect(201);
    api.get("/extensions/secure/tiny").await.expect(502);
    // The default (64 MiB) and a larger cap both run it.
    upload(&api, "roomy.wasm", configured(env!("GUEST_ECHO"), &["--memory-mb", "128"]).await).await.expect(201);
    api.get("/extensions/secure/roomy").await.expect(200);
}
