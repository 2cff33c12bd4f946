//! Assets API over real HTTP with real multipart bodies and real zip archives, and the media area
//! over WebDAV.

use std::io::Write;

use herald_tests::{answer, json, reqwest, Answer, Api, TestServer};
use reqwest::multipart::{Form, Part};
use reqwest::Method;

async fn send(api: &Api, method: Method, path: &str, form: Form) -> Answer {
    let r = api.request(method, path).multipart(form).send().await.unwrap();
    answer(r).await
}

fn file(name: &str, bytes: impl Into<Vec<u8>>) -> Form {
    Form::new().part("file", Part::bytes(bytes.into()).file_name(name.to_string()))
}

fn naming(path: &str) -> Form {
    Form::new().text("file", path.to_string())
}

fn zip(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in entries {
        if name.ends_with('/') {
            out.add_directory(*name, options).unwrap();
        } else {
            out.start_file(*name, options).unwrap();
            out.write_all(bytes).unwrap();
        }
    }
    out.finish().unwrap().into_inner()
}

fn names(a: &Answer) -> Vec<String> {
    a.json().as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn resources_upload_list_replace_and_delete() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let created = send(&api, Method::POST, "/assets/resources", file("a.png", "png-1").text("folder", "images")).await;
    created.expect(201);
    assert_eq!(created.json(), json!({"path": "resources/images/a.png", "size": 5}));
    let again = send(&api, Method::POST, "/assets/resources", file("a.png", "png-2").text("folder", "images")).await;
    again.expect(409);
    assert!(again.message().contains("resources/images/a.png exists"));
    send(&api, Method::PUT, "/assets/resources", file("a.png", "png-22").text("folder", "images")).await.expect(200);
    send(&api, Method::PUT, "/assets/resources", file("b.txt", "b").text("folder", "images")).await.expect(201);

    assert_eq!(api.get("/assets/resources/list").await.json(), json!([{"name": "images", "isFolder": true}]));
    let listed = api.get("/assets/resources/list?folder=images").await;
    assert_eq!(
        listed.json(),
        json!([{"name": "a.png", "isFolder": false, "referenced": false}, {"name": "b.txt", "isFolder": false, "referenced": false}])
    );
    api.get("/assets/resources/list?folder=nope").await.expect(404);
    api.get("/assets/resources/list?folder=..%2Fetc").await.expect(400);

    send(&api, Method::DELETE, "/assets/resources", naming("b.txt").text("folder", "images")).await.expect(204);
    send(&api, Method::DELETE, "/assets/resources", naming("images/b.txt")).await.expect(404);
    assert_eq!(names(&api.get("/assets/resources/list?folder=images").await), ["a.png"]);

    // Another instance sees nothing of it.
    let staging = s.staging().await;
    assert_eq!(staging.get("/assets/resources/list").await.json(), json!([]));
}

#[tokio::test]
async fn names_are_checked() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    for folder in ["../up", "a/../../b", ".hidden", "bad\u{1}name"] {
        let a = send(&api, Method::POST, "/assets/resources", file("x.txt", "x").text("folder", folder.to_string())).await;
        a.expect(400);
        assert!(a.message().contains("folder"), "{folder}: {}", a.message());
    }
    send(&api, Method::POST, "/assets/resources", file("..", "x")).await.expect(400);
    send(&api, Method::POST, "/assets/resources", Form::new().text("folder", "x")).await.expect(400);
    send(&api, Method::POST, "/assets/resources", file("x.txt", "x").text("colour", "red")).await.expect(400);
    let not_multipart = api.post("/assets/resources", json!({"file": "x"})).await;
    not_multipart.expect(415);
}

#[tokio::test]
async fn templates_reference_resources_and_commit() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    send(&api, Method::POST, "/assets/resources", file("logo.png", "png").text("folder", "img")).await.expect(201);
    let html = r#"<html><img src="resources/img/logo.png"></html>"#;
    send(&api, Method::POST, "/assets/templates", file("welcome.html", html).text("folder", "mail")).await.expect(201);
    assert_eq!(api.get("/assets/resources/list?folder=img").await.json()[0]["referenced"], true);
    let blocked = send(&api, Method::DELETE, "/assets/resources", naming("img/logo.png")).await;
    blocked.expect(409);
    assert!(blocked.message().contains("templates/mail/welcome.html"), "{}", blocked.message());

    let committed = send(&api, Method::POST, "/assets/templates/:commit", naming("welcome.html").text("folder", "mail")).await;
    committed.expect(200);
    assert_eq!(committed.json(), json!({"path": "templates/mail/welcome.html", "committed": true}));
    send(&api, Method::POST, "/assets/templates/:commit", naming("nope.html").text("folder", "mail")).await.expect(404);
    send(&api, Method::POST, "/assets/templates/:publish", naming("welcome.html").text("folder", "mail")).await.expect(404);

    // The working copy drops the reference; the committed version still holds it.
    send(&api, Method::PUT, "/assets/templates", file("welcome.html", "<html>plain</html>").text("folder", "mail")).await.expect(200);
    send(&api, Method::DELETE, "/assets/resources", naming("img/logo.png")).await.expect(409);
    send(&api, Method::POST, "/assets/templates/:commit", naming("mail/welcome.html")).await.expect(200);
    assert_eq!(api.get("/assets/resources/list?folder=img").await.json()[0]["referenced"], false);
    send(&api, Method::DELETE, "/assets/resources", naming("img/logo.png")).await.expect(204);
    assert_eq!(
        api.get("/assets/templates/list?folder=mail").await.json(),
        json!([{"name": "welcome.html", "isFolder": false, "referenced": false}])
    );
}

#[tokio::test]
async fn context_schemas_only_grow() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let v1 = r#"{"models": [{"name": "CUSTOMER", "type": "person_data", "fields": [{"name": "EMAIL", "data_type": "string", "required": true}]}]}"#;
    let v2 = r#"{"models": [{"name": "CUSTOMER", "type": "person_data", "fields": [{"name": "EMAIL", "data_type": "string", "required": true}, {"name": "TIER", "data_type": "number"}]},
                            {"name": "LINES", "type": "otm", "fields": [{"name": "SKU", "data_type": "string"}]}]}"#;
    let changed = r#"{"models": [{"name": "CUSTOMER", "type": "person_data", "fields": [{"name": "EMAIL", "data_type": "number"}]}]}"#;
    send(&api, Method::POST, "/assets/contexts", file("order.json", v1)).await.expect(201);
    send(&api, Method::POST, "/assets/contexts", file("order.json", v1)).await.expect(409);
    send(&api, Method::PUT, "/assets/contexts", file("order.json", v2)).await.expect(200);
    let refused = send(&api, Method::PUT, "/assets/contexts", file("order.json", changed)).await;
    refused.expect(409);
    assert!(refused.message().contains("CUSTOMER.EMAIL"), "{}", refused.message());
    let malformed =
        send(&api, Method::POST, "/assets/contexts", file("bad.json", r#"{"models": [{"name": "X", "type": "people", "fields": []}]}"#))
            .await;
    malformed.expect(400);
    assert!(malformed.message().contains("schema"));
    send(&api, Method::POST, "/assets/contexts", file("notes.txt", v1)).await.expect(400);
    send(&api, Method::PUT, "/assets/contexts", file("fresh.json", v1)).await.expect(201);
    assert_eq!(names(&api.get("/assets/contexts/list").await), ["fresh.json", "order.json"]);
}

#[tokio::test]
async fn webapps_are_expanded_served_and_checked() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let shop = zip(&[("shop/", b""), ("shop/index.html", b"<h1>Shop</h1>"), ("shop/css/site.css", b"h1{}")]);
    let created = send(&api, Method::POST, "/assets/webapps", file("upload-123.zip", shop.clone())).await;
    created.expect(201);
    assert_eq!(created.json(), json!({"name": "shop", "url": "/webapps/demo/shop/"}));
    send(&api, Method::POST, "/assets/webapps", file("shop.zip", shop.clone())).await.expect(409);
    let v2 = zip(&[("shop/index.html", b"<h1>Shop v2</h1>")]);
    send(&api, Method::PUT, "/assets/webapps", file("shop.zip", v2)).await.expect(200);

    let page = s.client.get(format!("{}/webapps/demo/shop/", s.base)).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.text().await.unwrap(), "<h1>Shop v2</h1>");
    assert_eq!(s.client.get(format!("{}/webapps/demo/shop/css/site.css", s.base)).send().await.unwrap().status(), 404, "replaced whole");
    assert_eq!(s.client.get(format!("{}/webapps/demo-staging/shop/", s.base)).send().await.unwrap().status(), 404);
    assert_eq!(s.client.get(format!("{}/webapps/demo/shop/..%2F..%2Fcontrol.db", s.base)).send().await.unwrap().status(), 404);
    assert_eq!(names(&api.get("/assets/webapps/list").await), ["shop"]);

    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("two.zip", zip(&[("a/index.html", b"a"), ("b/index.html", b"b")]), "2 top-level folders"),
        ("loose.zip", zip(&[("index.html", b"a")]), "exactly one top-level folder"),
        ("escape.zip", zip(&[("app/index.html", b"a"), ("app/../../evil.txt", b"x")]), "outside the webapp"),
        ("absolute.zip", zip(&[("/etc/evil", b"x")]), "outside the webapp"),
        ("empty.zip", zip(&[]), "empty"),
        ("text.zip", b"not a zip".to_vec(), "not a zip"),
    ];
    for (name, bytes, reason) in cases {
        let a = send(&api, Method::POST, "/assets/webapps", file(name, bytes)).await;
        a.expect(400);
        assert!(a.message().contains(reason), "{name}: {}", a.message());
    }
    send(&api, Method::POST, "/assets/webapps", file("shop.tar", shop)).await.expect(400);
}

#[tokio::test]
async fn a_zip_bomb_is_refused() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    // 210 MB of zeros compress to about 200 KB: more than a webapp may expand to.
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated).large_file(true);
    out.start_file("bomb/zeros.bin", options).unwrap();
    let block = vec![0u8; 1024 * 1024];
    for _ in 0..210 {
        out.write_all(&block).unwrap();
    }
    let bytes = out.finish().unwrap().into_inner();
    assert!(bytes.len() < 2 * 1024 * 1024);
    let refused = send(&api, Method::POST, "/assets/webapps", file("bomb.zip", bytes)).await;
    refused.expect(400);
    assert!(refused.message().contains("expands to more than"), "{}", refused.message());
    assert_eq!(api.get("/assets/webapps/list").await.json(), json!([]));
}

#[tokio::test]
async fn extensions_are_stored_with_their_type() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let echo = std::fs::read(env!("GUEST_ECHO")).unwrap();
    let created =
        send(&api, Method::POST, "/assets/extensions", file("hook.wasm", echo.clone()).text("type", "http").text("folder", "web")).await;
    created.expect(201);
    assert_eq!(created.json()["type"], "http");
    assert_eq!(created.json()["path"], "extensions/web/hook.wasm");
    assert_eq!(created.json()["sha256"].as_str().unwrap().len(), 64);
    send(&api, Method::POST, "/assets/extensions", file("hook.wasm", echo.clone()).text("type", "http").text("folder", "web"))
        .await
        .expect(409);
    send(&api, Method::POST, "/assets/extensions", file("other.wasm", "x")).await.expect(400);
    let bad = send(&api, Method::POST, "/assets/extensions", file("other.wasm", "x").text("type", "cron")).await;
    bad.expect(400);
    assert!(bad.message().contains("step, condition, http, monitor, authheader"));
    let replaced = send(&api, Method::PUT, "/assets/extensions", file("hook.wasm", echo.clone()).text("folder", "web")).await;
    replaced.expect(200);
    assert_eq!(replaced.json()["type"], "http");
    assert_eq!(replaced.json()["url"], "/extensions/secure/web%252Fhook", "where it is called, its folder's '/' encoded twice");
    send(&api, Method::PUT, "/assets/extensions", file("ghost.wasm", echo.clone()).text("folder", "web")).await.expect(404);
    // The echo guest has no configuration section: the defaults, as Herald applies them.
    assert_eq!(
        api.get("/assets/extensions/list?folder=web").await.json(),
        json!([{"name": "hook.wasm", "isFolder": false, "type": "http", "size": echo.len(),
            "config": {"open": false, "async": false, "allowed_hosts": []}, "url": "/extensions/secure/web%252Fhook"}])
    );
    send(&api, Method::DELETE, "/assets/extensions", naming("web/hook.wasm")).await.expect(204);
    assert_eq!(api.get("/assets/extensions/list?folder=web").await.json(), json!([]));
}

#[tokio::test]
async fn a_replaced_or_deleted_extension_is_served_as_it_now_is() {
    // Calls find extensions through a cache of their records: uploads must show at once.
    let s = TestServer::start().await;
    let api = s.demo().await;
    let (echo, hello) = (std::fs::read(env!("GUEST_ECHO")).unwrap(), std::fs::read(env!("GUEST_HELLO")).unwrap());
    let open = |path: &str| format!("{}/extensions/open/demo/{path}", s.base);
    // Asked for before it exists, then uploaded: found at once.
    assert_eq!(s.client.get(open("swap/x")).send().await.unwrap().status(), 404);
    send(&api, Method::POST, "/assets/extensions", file("swap.wasm", hello.clone()).text("type", "http")).await.expect(201);
    let first = s.client.get(open("swap/x")).send().await.unwrap();
    assert_eq!(first.status(), 200);
    assert_eq!(first.text().await.unwrap(), "hello");
    // Replaced by a secure extension: the open endpoint refuses it, the secure one runs the new code.
    send(&api, Method::PUT, "/assets/extensions", file("swap.wasm", echo)).await.expect(200);
    assert_eq!(s.client.get(open("swap/x")).send().await.unwrap().status(), 403);
    let replaced = api.get("/extensions/secure/swap/x").await;
    replaced.expect(200);
    assert_eq!(replaced.json()["path"], "/x");
    // Deleted: gone at once.
    send(&api, Method::DELETE, "/assets/extensions", naming("swap.wasm")).await.expect(204);
    api.get("/extensions/secure/swap/x").await.expect(404);
}

#[tokio::test]
async fn uploads_over_20_mb_are_413_and_app_credentials_get_403() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    send(&api, Method::POST, "/assets/resources", file("big.bin", vec![0u8; 20 * 1024 * 1024 + 1])).await.expect(413);
    assert_eq!(api.get("/assets/resources/list").await.json(), json!([]));
    let app = s.api("demo-app-key", "demo-app-secret").await;
    send(&app, Method::POST, "/assets/resources", file("x.txt", "x")).await.expect(403);
}

#[tokio::test]
async fn the_media_area_is_reachable_over_webdav() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    send(&api, Method::POST, "/assets/resources", file("logo.png", "png").text("folder", "img")).await.expect(201);
    send(&api, Method::POST, "/assets/templates", file("t.html", "resources/img/logo.png")).await.expect(201);
    let dav = |method: &str, path: &str| {
        s.client
            .request(Method::from_bytes(method.as_bytes()).unwrap(), format!("{}/dav/{path}", s.base))
            .basic_auth("demo-public-key", Some("demo-public-secret"))
    };
    let listing = dav("PROPFIND", "resources/img/").header("Depth", "1").send().await.unwrap();
    assert_eq!(listing.status(), 207);
    assert!(listing.text().await.unwrap().contains("logo.png"));

    let put = dav("PUT", "resources/img/new.txt").body("hello").send().await.unwrap();
    assert!(put.status().is_success(), "{}", put.status());
    assert_eq!(names(&api.get("/assets/resources/list?folder=img").await), ["logo.png", "new.txt"]);
    assert_eq!(dav("GET", "resources/img/new.txt").send().await.unwrap().text().await.unwrap(), "hello");

    assert_eq!(dav("DELETE", "resources/img/logo.png").send().await.unwrap().status(), 409, "referenced");
    assert_eq!(dav("PUT", "contexts/x.json").body("{}").send().await.unwrap().status(), 403, "schemas change only through the API");
    assert!(dav("DELETE", "resources/img/new.txt").send().await.unwrap().status().is_success());
    let anonymous = s.client.request(Method::from_bytes(b"PROPFIND").unwrap(), format!("{}/dav/", s.base)).send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    // Each instance has its own media area.
    let other = s
        .client
        .request(Method::from_bytes(b"PROPFIND").unwrap(), format!("{}/dav/resources/img/", s.base))
        .basic_auth("demo-staging-public-key", Some("demo-staging-public-secret"))
        .header("Depth", "1")
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 404);
}

// The hostile-input probe's WebDAV and disk findings (issue: hardening): requests checked before
// the WebDAV library sees them, and every way in kept to the payload limit and the media quota.

fn dav(s: &TestServer, method: &str, path: &str) -> reqwest::RequestBuilder {
    s.client
        .request(Method::from_bytes(method.as_bytes()).unwrap(), format!("{}/dav/{path}", s.base))
        .basic_auth("demo-public-key", Some("demo-public-secret"))
}

async fn status_and_message(r: reqwest::RequestBuilder) -> (u16, String) {
    let r = r.send().await.expect("an answer, not a dropped connection");
    let status = r.status().as_u16();
    let body: serde_json::Value = r.json().await.unwrap_or(serde_json::Value::Null);
    (status, body["message"].as_str().unwrap_or("").to_string())
}

#[tokio::test]
async fn webdav_requests_are_checked_before_the_library_sees_them() {
    let s = TestServer::start().await;
    assert_eq!(dav(&s, "PUT", "resources/a.txt").body("a").send().await.unwrap().status(), 201);
    assert_eq!(dav(&s, "PUT", "resources/a.txt").body("b").send().await.unwrap().status(), 204, "replaced");
    let host = s.base.trim_start_matches("http://").to_string();
    for (destination, expected) in [
        ("/dav", 403),
        ("/dav/", 403),
        ("/dav/resources", 403),
        ("http://evil.example/dav/resources/b.txt", 400),
        ("/elsewhere/b.txt", 400),
    ] {
        for method in ["COPY", "MOVE"] {
            let (status, message) = status_and_message(dav(&s, method, "resources/a.txt").header("Destination", destination)).await;
            assert_eq!(status, expected, "{method} to {destination}: {message}");
            assert!(!message.is_empty(), "{method} to {destination} says why");
        }
    }
    let same_host = format!("http://{host}/dav/resources/b.txt");
    assert_eq!(dav(&s, "COPY", "resources/a.txt").header("Destination", same_host).send().await.unwrap().status(), 201);
    assert_eq!(dav(&s, "GET", "resources/b.txt").send().await.unwrap().text().await.unwrap(), "b");
    let (status, message) = status_and_message(dav(&s, "PROPFIND", "").header("Depth", "infinity")).await;
    assert_eq!(status, 403, "{message}");
    assert!(message.contains("Depth"), "{message}");
    let proppatch = r#"<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><D:displayname>x</D:displayname></D:prop></D:set></D:propertyupdate>"#;
    assert_eq!(dav(&s, "PROPPATCH", "resources/a.txt").body(proppatch).send().await.unwrap().status(), 403);
    assert_eq!(dav(&s, "DELETE", "resources").send().await.unwrap().status(), 403, "a top folder cannot go");
    assert_eq!(dav(&s, "PUT", "loose.txt").body("x").send().await.unwrap().status(), 403, "nothing beside the folders");
    assert_eq!(dav(&s, "PUT", "resources/nofolder/a.txt").body("x").send().await.unwrap().status(), 409, "MKCOL first");
    assert_eq!(dav(&s, "GET", "resources/a.txt").send().await.unwrap().text().await.unwrap(), "b", "nothing refused changed anything");
}

fn chunked(total: usize) -> reqwest::Body {
    let chunk = vec![b'x'; 64 * 1024];
    let count = total.div_ceil(chunk.len());
    reqwest::Body::wrap_stream(futures_util::stream::iter((0..count).map(move |_| Ok::<_, std::io::Error>(chunk.clone()))))
}

#[tokio::test]
async fn every_way_in_keeps_to_the_payload_limit_and_the_media_quota() {
    let s = TestServer::start().await;
    // A chunked body declares no length: it is cut off at the limit, and nothing is stored.
    let r = dav(&s, "PUT", "resources/big.bin").body(chunked(21 * 1024 * 1024)).send().await;
    if let Ok(r) = r {
        assert_eq!(r.status(), 413);
    }
    assert_eq!(dav(&s, "GET", "resources/big.bin").send().await.unwrap().status(), 404);
    drop(s);

    let quota = 1024 * 1024;
    let s = TestServer::start_with(herald_tests::Settings { media_quota: quota, ..Default::default() }).await;
    let api = s.demo().await;
    let part = vec![b'y'; 600 * 1024];
    assert_eq!(dav(&s, "PUT", "resources/one.bin").body(part.clone()).send().await.unwrap().status(), 201);
    let (status, message) = status_and_message(dav(&s, "PUT", "resources/two.bin").body(part.clone())).await;
    assert_eq!(status, 413);
    assert!(message.contains("quota"), "{message}");
    let (status, _) = status_and_message(dav(&s, "COPY", "resources/one.bin").header("Destination", "/dav/resources/copy.bin")).await;
    assert_eq!(status, 413, "a copy takes room too");
    let form = reqwest::multipart::Form::new().part("file", reqwest::multipart::Part::bytes(part.clone()).file_name("three.bin"));
    let upload = api.request(reqwest::Method::POST, "/assets/resources").multipart(form).send().await.unwrap();
    assert_eq!(upload.status(), 413);
    assert!(upload.text().await.unwrap().contains("quota"));
    // Room comes back when files go.
    assert!(dav(&s, "DELETE", "resources/one.bin").send().await.unwrap().status().is_success());
    assert_eq!(dav(&s, "PUT", "resources/two.bin").body(part).send().await.unwrap().status(), 201);
}

fn listed(answer: &Answer) -> Vec<String> {
    answer.json().as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap().to_string()).collect()
}

/// The instance's store holds its media area; a node's disk is a copy. Files found on disk from
/// before the store held them are taken in once (a marker says so); after that, what the store
/// does not hold is not served, and what the disk lost is fetched again.
#[tokio::test]
async fn the_store_holds_the_media_area_and_takes_in_files_from_before_once() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.get("/assets/resources/list").await.expect(200);
    let instance = s.data_dir.join("instances").join("demo");
    assert!(instance.join(".media-in-store").exists(), "the first look took in what the disk held");

    // A file put on disk behind Herald's back is not the store's: gone after a restart.
    std::fs::create_dir_all(instance.join("media/resources")).unwrap();
    std::fs::write(instance.join("media/resources/stray.txt"), b"stray").unwrap();
    let s = s.restart().await;
    let api = s.demo().await;
    assert!(!listed(&api.get("/assets/resources/list").await).contains(&"stray.txt".to_string()));
    assert!(!instance.join("media/resources/stray.txt").exists());

    // An instance from before the media moved into the store: its files are taken in.
    std::fs::create_dir_all(instance.join("media/resources/old")).unwrap();
    std::fs::write(instance.join("media/resources/old/logo.txt"), b"old logo").unwrap();
    std::fs::remove_file(instance.join(".media-in-store")).unwrap();
    let s = s.restart().await;
    let api = s.demo().await;
    assert_eq!(listed(&api.get("/assets/resources/list?folder=old").await), vec!["logo.txt"]);
    // Now in the store: a disk that loses it gets it back.
    std::fs::remove_dir_all(instance.join("media")).unwrap();
    let s = s.restart().await;
    let api = s.demo().await;
    let logo = api.request(Method::GET, "/dav/resources/old/logo.txt").send().await.unwrap();
    assert_eq!((logo.status().as_u16(), logo.text().await.unwrap()), (200, "old logo".to_string()));
    assert!(listed(&api.get("/assets/templates/list").await).contains(&"welcome.html".to_string()), "the demo's own template too");
}
