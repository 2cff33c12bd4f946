//! `herald extension run FILE.wasm`: one execution through the production runtime, its answer,
//! log and changes printed as JSON (exit status 1 unless its outcome is `ok`); an http extension
//! can also be served on a local address, every request logged to standard error.

use std::io::Read as _;
use std::sync::Arc;

use anyhow::{bail, Context};
use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value as Json};

use super::{file_id, report, Local};
use crate::cli::authoring::RunArgs;
use crate::runtime::{ExtensionKind, Journal, Prepared, RecordedInput};

pub async fn run(args: RunArgs) -> anyhow::Result<()> {
    let local = Local::open(&args.local, args.dry_run).await?;
    let (extension, kind) = local.load(&args.file, args.kind.map(|k| k.kind())).await?;
    let id = file_id(&args.file);
    if let Some(listen) = &args.listen {
        if kind != ExtensionKind::Http {
            bail!("--listen serves http extensions; {} is a {kind} extension", args.file.display());
        }
        return serve(local, extension, id, listen, args.dry_run).await;
    }
    let input = match &args.input {
        Some(file) => read_input(file)?,
        None => input_from_flags(&args, &local, kind).await?,
    };
    let journal = Journal::new();
    let call = local.call(extension, &id, &journal);
    let ran = local.runtime.run_input(call, kind, input).await.map_err(anyhow::Error::msg)?;
    println!("{}", serde_json::to_string_pretty(&report(kind, &ran, &journal, args.dry_run))?);
    if ran.outcome != crate::runtime::Outcome::Ok {
        bail!("the extension's outcome is '{}'", ran.name());
    }
    Ok(())
}

/// A recorded input (the `input` of an execution log), from a file or standard input.
pub(super) fn read_input(file: &std::path::Path) -> anyhow::Result<RecordedInput> {
    let mut text = String::new();
    if file.as_os_str() == "-" {
        std::io::stdin().read_to_string(&mut text)?;
    } else {
        text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    }
    serde_json::from_str(&text).with_context(|| format!("{} is not a recorded input ({{\"kind\": \"http\"|\"step\"|...}})", file.display()))
}

async fn input_from_flags(args: &RunArgs, local: &Local, kind: ExtensionKind) -> anyhow::Result<RecordedInput> {
    let context = args.context.as_deref().map(serde_json::from_str::<Json>).transpose().context("--context is not JSON")?;
    Ok(match kind {
        ExtensionKind::Step => RecordedInput::Step { recipient: recipient(args, local).await?, context },
        ExtensionKind::Condition => RecordedInput::Condition { recipient: recipient(args, local).await?, context },
        ExtensionKind::Monitor => RecordedInput::Monitor {},
        ExtensionKind::Authheader => {
            RecordedInput::Authheader { host: args.host.clone(), method: args.method.clone(), path: args.path.clone() }
        }
        ExtensionKind::Http => {
            let mut headers = Vec::new();
            for header in &args.headers {
                let (name, value) = header.split_once(':').with_context(|| format!("--header '{header}' is not `Name: value`"))?;
                headers.push((name.trim().to_string(), value.trim().to_string()));
            }
            let body = match args.body.as_deref() {
                Some(file) if file.starts_with('@') => {
                    Some(std::fs::read_to_string(&file[1..]).with_context(|| format!("cannot read {}", &file[1..]))?)
                }
                other => other.map(str::to_string),
            };
            RecordedInput::Http { method: args.method.clone(), uri: args.path.clone(), headers, body, body_base64: None, truncated: false }
        }
    })
}

/// The recipient a step or condition is given: read from the instance, or as the flags give it.
async fn recipient(args: &RunArgs, local: &Local) -> anyhow::Result<Map<String, Json>> {
    if let Some(id) = args.recipient_id {
        let tenant = &local.tenant;
        let index = tenant.model.def.recipient_id_index();
        let found = tenant.db.find_recipient(&tenant.model, index, &crate::model::Value::Number(id)).await?;
        let found = found.with_context(|| format!("instance '{}' has no recipient {id}", tenant.customer_id()))?;
        return Ok(crate::runtime::input::fields_to_json(&crate::runtime::person_fields(&tenant.model, &found.values)));
    }
    match args.recipient.as_deref() {
        Some(text) => match serde_json::from_str(text).context("--recipient is not JSON")? {
            Json::Object(map) => Ok(map),
            _ => bail!("--recipient must be a JSON object of Person Data fields"),
        },
        None => Ok(Map::new()),
    }
}

/// Serves the http extension on `listen` until interrupted: every path goes to it.
async fn serve(local: Local, extension: Prepared, id: String, listen: &str, dry_run: bool) -> anyhow::Result<()> {
    let shared = Arc::new((local, extension, id, dry_run));
    let app = axum::Router::new().fallback(move |request: Request| {
        let shared = Arc::clone(&shared);
        async move {
            let (local, extension, id, dry_run) = &*shared;
            one_request(local, extension.clone(), id, *dry_run, request).await
        }
    });
    let listener = tokio::net::TcpListener::bind(listen).await.with_context(|| format!("cannot listen on {listen}"))?;
    eprintln!("serving the extension at http://{} (every path; Ctrl-C stops)", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

/// One request to the served extension, and a JSON line on standard error: the request, the
/// outcome, the log and the changes.
async fn one_request(local: &Local, extension: Prepared, id: &str, dry_run: bool, request: Request) -> Response {
    let (method, path) = (request.method().to_string(), request.uri().to_string());
    let (mut parts, body) = request.into_parts();
    let host = parts.headers.get(axum::http::header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost").to_string();
    if let Ok(uri) = format!("http://{host}{path}").parse() {
        parts.uri = uri;
    }
    let journal = Journal::new();
    let call = local.call(extension, id, &journal);
    let (response, ran) = match local.runtime.call_http(call, hyper::Request::from_parts(parts, body)).await {
        Ok(response) => {
            let status = response.status().as_u16();
            let (parts, body) = response.into_parts();
            let body = http_body_util::BodyExt::map_err(body, |e| std::io::Error::other(format!("{e:?}")));
            let ran = if status >= 500 {
                crate::runtime::Ran::error(format!("answered {status}"), Some(json!({"status": status})))
            } else {
                crate::runtime::Ran::ok(json!({"status": status}))
            };
            (Response::from_parts(parts, Body::new(body)), ran)
        }
        Err(failure) => {
            let status = failure.outcome().caller_status().unwrap_or(axum::http::StatusCode::BAD_GATEWAY);
            (status.into_response(), crate::runtime::Ran::failed(failure))
        }
    };
    // The log and the changes are known once the execution ends (a streamed body may still be
    // running): reported from a task of their own.
    tokio::spawn(async move {
        journal.ended().await;
        let mut line = report(ExtensionKind::Http, &ran, &journal, dry_run);
        line["request"] = json!(format!("{method} {path}"));
        eprintln!("{line}");
    });
    response
}
