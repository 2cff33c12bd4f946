//! `herald extension deploy FILE.wasm`: uploads an extension to a running Herald through the
//! Assets API (`POST /assets/extensions`, or `PUT` with `--replace`), with the instance's Public
//! Api credential, and prints where to call it. The type is the one whose export the component
//! has (or `--type`); the id is the file's name without `.wasm`, in `--folder` when given.

use anyhow::{bail, Context};

use crate::cli::authoring::DeployArgs;
use crate::runtime::ExtensionKind;

pub async fn run(args: DeployArgs) -> anyhow::Result<()> {
    let bytes = std::fs::read(&args.file).with_context(|| format!("cannot read {}", args.file.display()))?;
    let name = args
        .file
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| n.ends_with(".wasm") && n.len() > ".wasm".len())
        .with_context(|| format!("{}: an extension file is named NAME.wasm (NAME is its id)", args.file.display()))?
        .to_string();
    let kind = match args.kind {
        Some(kind) => kind.kind(),
        None => ExtensionKind::of_component(&bytes).map_err(|e| anyhow::anyhow!("{}: {e} (or give --type)", args.file.display()))?,
    };
    let base = args.url.trim_end_matches('/').to_string();
    let client = reqwest::Client::new();
    let form = |bytes: Vec<u8>| {
        let mut form = reqwest::multipart::Form::new()
            .part("file", reqwest::multipart::Part::bytes(bytes).file_name(name.clone()))
            .text("type", kind.name().to_string());
        if let Some(folder) = &args.folder {
            form = form.text("folder", folder.clone());
        }
        form
    };
    let send = |method: reqwest::Method, form: reqwest::multipart::Form| {
        client
            .request(method, format!("{base}/assets/extensions"))
            .basic_auth(&args.client_id, Some(&args.client_secret))
            .header("accept", "application/json")
            .multipart(form)
            .send()
    };
    let mut answer = send(reqwest::Method::POST, form(bytes.clone())).await.with_context(|| format!("cannot reach Herald at {base}"))?;
    let mut replaced = false;
    if answer.status() == reqwest::StatusCode::CONFLICT && args.replace {
        answer = send(reqwest::Method::PUT, form(bytes)).await.with_context(|| format!("cannot reach Herald at {base}"))?;
        replaced = true;
    }
    let status = answer.status();
    let body: serde_json::Value = answer.json().await.unwrap_or_default();
    let message = body["message"].as_str().unwrap_or_default();
    match status.as_u16() {
        200 | 201 => {}
        409 => bail!("{message}: give --replace to replace it"),
        401 => bail!("Herald at {base} refused the credential (HERALD_CLIENT_ID, HERALD_CLIENT_SECRET: a Public Api credential)"),
        403 => bail!("the credential is not the instance's Public Api credential"),
        400 | 413 => bail!("Herald refused the upload: {message}"),
        other => bail!("Herald answered {other} {message}"),
    }
    let path = body["path"].as_str().unwrap_or_default();
    println!("{} {path} ({kind})", if replaced { "replaced" } else { "created" });
    if let Some(url) = body["url"].as_str() {
        println!("call it at {base}{url}");
    }
    Ok(())
}
