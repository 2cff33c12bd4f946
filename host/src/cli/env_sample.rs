//! `.env.sample`, written from `herald serve`'s own flags: every setting with its environment
//! variable, its help and its default, so the file cannot fall behind the flags. A test compares
//! the committed file with what this writes.

use clap::CommandFactory;

/// The text of `.env.sample`: every environment variable `herald serve` reads, commented out at
/// its default (empty when it has none), under its help.
pub fn env_sample() -> String {
    let mut root = super::Cli::command();
    root.build();
    let serve = root.find_subcommand("serve").expect("herald serve exists");
    let mut out = String::from(
        "# Every setting of `herald serve`: each is a flag and an environment variable, shown here at\n\
         # its default. Written from the flags themselves (src/cli/env_sample.rs; a test compares).\n",
    );
    let mut seen = Vec::new();
    for arg in serve.get_arguments() {
        let Some(env) = arg.get_env().and_then(|e| e.to_str()) else { continue };
        if seen.contains(&env) {
            continue;
        }
        seen.push(env);
        let help = arg.get_long_help().or(arg.get_help()).map(|h| h.to_string()).unwrap_or_default();
        out.push('\n');
        for line in wrap(&help.replace('\n', " "), 96) {
            out.push_str("# ");
            out.push_str(&line);
            out.push('\n');
        }
        let default: Vec<String> = arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
        out.push_str(&format!("# {env}={}\n", default.join(",")));
    }
    // Read from the environment only, never flags.
    out.push_str(
        "\n# The secrets' keys themselves instead of a key file: base64 keys separated by commas, the\n\
         # first seals (an environment variable only: a flag could be read by other users of the machine)\n\
         # HERALD_SECRETS_KEY=\n",
    );
    out.push_str("\n# Which log lines are written (tracing's filter syntax)\n# RUST_LOG=info,sqlx=warn\n");
    out
}

/// `text` in lines of at most `width` characters, broken between words.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("one line at least");
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    /// The committed `.env.sample` is what the flags say. To write it again:
    /// `HERALD_WRITE_ENV_SAMPLE=1 cargo test -p herald-host --lib env_sample`.
    #[test]
    fn the_committed_env_sample_lists_every_setting() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../.env.sample");
        let written = super::env_sample();
        if std::env::var_os("HERALD_WRITE_ENV_SAMPLE").is_some() {
            std::fs::write(path, &written).unwrap();
        }
        let committed = std::fs::read_to_string(path).unwrap();
        assert!(
            committed == written,
            ".env.sample is not what `herald serve`'s flags say: run HERALD_WRITE_ENV_SAMPLE=1 cargo test -p herald-host --lib env_sample"
        );
        for env in ["HERALD_LISTEN=127.0.0.1:8080", "HERALD_DATABASE_URL=", "HERALD_IMPORT_MAX_MB=", "HERALD_LOG_FORMAT=text"] {
            assert!(written.contains(&format!("# {env}")), "{env} is missing");
        }
    }
}
