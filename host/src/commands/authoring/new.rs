//! `herald extension new NAME --lang rust|js|python --type ...`: a ready project. Its source is a
//! working example of the type (`templates/new`), with `build.sh` (one command to a component),
//! `test.sh` (builds it and runs it once with `herald extension run --dry-run`), and under
//! `herald/` the SDK of its language and Herald's WIT package, copied from this binary so that the
//! project builds anywhere, offline once its language's tool is installed.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use include_dir::{include_dir, Dir};

use crate::cli::authoring::{Language, NewArgs, TypeArg};

static TEMPLATES: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/templates/new");
static WIT: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../wit");
static SDK_RUST: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../sdk/src");
static SDK_JS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../sdk/js");
static SDK_PYTHON: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../sdk/python/herald_sdk");

pub fn run(args: &NewArgs) -> anyhow::Result<()> {
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from(&args.name));
    let written = write(args, &dir)?;
    println!(
        "{}: a {} {} extension ({} files). Next: cd {} && ./test.sh",
        dir.display(),
        language_name(args.lang),
        args.kind.kind(),
        written,
        dir.display()
    );
    Ok(())
}

/// Writes the project into `dir` (new or empty); returns how many files it wrote.
pub fn write(args: &NewArgs, dir: &Path) -> anyhow::Result<usize> {
    check_name(&args.name)?;
    if args.open && args.kind != TypeArg::Http {
        bail!("--open is for http extensions");
    }
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        bail!("{} exists and is not empty", dir.display());
    }
    let values = Values::new(args);
    let mut files: Vec<(PathBuf, Vec<u8>, bool)> = Vec::new();
    let text = |path: &str| TEMPLATES.get_file(path).and_then(|f| f.contents_utf8()).with_context(|| format!("template {path} is missing"));
    let lang = match args.lang {
        Language::Rust => "rust",
        Language::Js => "js",
        Language::Python => "python",
    };
    let source = format!("{}{}", args.kind.kind(), if args.open { "-open" } else { "" });
    let source = match args.lang {
        Language::Rust => (format!("rust/{source}.rs"), "src/lib.rs"),
        Language::Js => (format!("js/{source}.js"), "app.js"),
        Language::Python => (format!("python/{source}.py"), "app.py"),
    };
    files.push((source.1.into(), values.fill(text(&source.0)?).into_bytes(), false));
    files.push(("README.md".into(), values.fill(text("README.md")?).into_bytes(), false));
    files.push(("test.sh".into(), values.fill(text("test.sh")?).into_bytes(), true));
    files.push(("build.sh".into(), values.fill(text(&format!("{lang}/build.sh"))?).into_bytes(), true));
    files.push((".gitignore".into(), b"*.wasm\n.herald-data/\ntarget/\nnode_modules/\n__pycache__/\n".to_vec(), false));
    match args.lang {
        Language::Rust => {
            files.push(("Cargo.toml".into(), values.fill(text("rust/Cargo.toml")?).into_bytes(), false));
            files.push(("herald/sdk/Cargo.toml".into(), text("rust/sdk.toml")?.as_bytes().to_vec(), false));
            copy_tree(&SDK_RUST, Path::new("herald/sdk/src"), &mut files);
        }
        Language::Js => {
            files.push(("package.json".into(), values.fill(text("js/package.json")?).into_bytes(), false));
            copy_tree(&SDK_JS, Path::new("herald/sdk"), &mut files);
        }
        Language::Python => copy_tree(&SDK_PYTHON, Path::new("herald/sdk/herald_sdk"), &mut files),
    }
    copy_tree(&WIT, Path::new("herald/wit"), &mut files);
    for (path, contents, executable) in &files {
        let target = dir.join(path);
        std::fs::create_dir_all(target.parent().expect("a file has a parent"))?;
        std::fs::write(&target, contents).with_context(|| format!("cannot write {}", target.display()))?;
        if *executable {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(files.len())
}

fn copy_tree(dir: &Dir<'_>, under: &Path, files: &mut Vec<(PathBuf, Vec<u8>, bool)>) {
    for file in dir.files() {
        // Build leftovers of the repository's copy stay out.
        if file.path().components().any(|c| c.as_os_str() == "__pycache__") {
            continue;
        }
        let relative = file.path().strip_prefix(dir.path()).unwrap_or(file.path());
        files.push((under.join(relative), file.contents().to_vec(), false));
    }
    for sub in dir.dirs() {
        if sub.path().file_name().is_some_and(|n| n == "__pycache__") {
            continue;
        }
        let relative = sub.path().strip_prefix(dir.path()).unwrap_or(sub.path());
        copy_tree(sub, &under.join(relative), files);
    }
}

fn check_name(name: &str) -> anyhow::Result<()> {
    let fine = !name.is_empty()
        && name.len() <= 64
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !fine {
        bail!("the name '{name}' must start with a letter and hold only letters, digits, '-' and '_' (at most 64)");
    }
    Ok(())
}

fn language_name(lang: Language) -> &'static str {
    match lang {
        Language::Rust => "Rust",
        Language::Js => "JavaScript",
        Language::Python => "Python",
    }
}

/// Where a project's README sends its author for every function of the SDK.
fn reference(lang: Language) -> &'static str {
    match lang {
        Language::Js => "`herald/sdk/README.md`: every function, its arguments, what it returns and throws, with examples",
        Language::Python => "`herald/sdk/herald_sdk/README.md`: every function, its arguments, what it returns and raises, with examples",
        Language::Rust => "the documentation comments of `herald/sdk/src/` (each module opens with what it is for)",
    }
}

/// The componentize-py a Python project installs for itself when none is given or on PATH: the
/// version the test suite builds its Python guests with (`scripts/guest-tools.sh`).
const COMPONENTIZE_PY: &str = "0.25.1";

/// What the templates' `{{placeholders}}` become.
struct Values(Vec<(&'static str, String)>);

impl Values {
    fn new(args: &NewArgs) -> Values {
        let kind = args.kind.kind();
        let world = match (args.kind, args.open) {
            (TypeArg::Http, true) => "open-http-extension".to_string(),
            _ => format!("{kind}-extension"),
        };
        // The configuration a JavaScript or Python build writes (a Rust source has its own).
        let config_flags = match (args.kind, args.open) {
            (TypeArg::Http, true) => "--open --timeout-ms 5000",
            (TypeArg::Http, false) => "--timeout-ms 5000",
            (TypeArg::Monitor, _) => "--schedule 'every 5m'",
            (TypeArg::Authheader, _) => "--bound-host api.example.com",
            _ => "",
        };
        // What test.sh gives the extension, and what it prepares first.
        let (prepare, run_flags) = match (args.kind, args.open) {
            (TypeArg::Http, true) => (
                "",
                r#"--method POST --path / --header 'content-type: application/json' --body '{"email": "ann@example.com", "first_name": "Ann", "purchases": [{"id": "order-1", "product": "Tea", "amount": 12.5, "at": "2026-11-27T10:00:00.000Z"}]}'"#,
            ),
            (TypeArg::Http, false) => ("", "--path '/?email=ann@example.com'"),
            (TypeArg::Step | TypeArg::Condition, _) => (
                r#"[ -e "$DATA/.seeded" ] || { "$HERALD" seed --instance demo --count 3 --data-dir "$DATA" && touch "$DATA/.seeded"; }"#,
                r#"--recipient-id 1 --context '{"country": "DE"}'"#,
            ),
            (TypeArg::Monitor, _) => ("", ""),
            (TypeArg::Authheader, _) => (
                r#"echo test-token | "$HERALD" secrets set --instance demo API_TOKEN --data-dir "$DATA" >/dev/null"#,
                "--host api.example.com --method GET --path /contacts",
            ),
        };
        Values(vec![
            ("name", args.name.clone()),
            ("crate", args.name.replace('-', "_")),
            ("type", kind.to_string()),
            ("language", language_name(args.lang).to_string()),
            ("world", world),
            ("config_flags", config_flags.to_string()),
            ("prepare", prepare.to_string()),
            ("run_flags", run_flags.to_string()),
            ("componentize_py", COMPONENTIZE_PY.to_string()),
            ("reference", reference(args.lang).to_string()),
        ])
    }

    fn fill(&self, template: &str) -> String {
        let mut out = template.to_string();
        for (key, value) in &self.0 {
            out = out.replace(&format!("{{{{{key}}}}}"), value);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(lang: Language, kind: TypeArg, open: bool) -> NewArgs {
        NewArgs { name: "my-ext".into(), lang, kind, dir: None, open }
    }

    #[test]
    fn every_language_and_type_has_its_template_and_no_placeholder_is_left() {
        for lang in [Language::Rust, Language::Js, Language::Python] {
            for (kind, open) in [
                (TypeArg::Http, false),
                (TypeArg::Http, true),
                (TypeArg::Step, false),
                (TypeArg::Condition, false),
                (TypeArg::Monitor, false),
                (TypeArg::Authheader, false),
            ] {
                let dir = tempfile::tempdir().unwrap();
                let project = dir.path().join("p");
                let written = write(&args(lang, kind, open), &project).unwrap();
                assert!(written > 10, "{lang:?} {kind:?}: {written} files");
                for file in ["README.md", "test.sh", "build.sh", "herald/wit/extensions.wit"] {
                    let text = std::fs::read_to_string(project.join(file)).unwrap();
                    assert!(!text.contains("{{"), "{lang:?} {kind:?} {file}: {text}");
                }
            }
        }
    }

    /// The names a source file makes public: what follows `prefix` up to a non-identifier byte.
    fn public_names(source: &str, prefixes: &[&str]) -> Vec<String> {
        let mut names = Vec::new();
        for line in source.lines() {
            for prefix in prefixes {
                if let Some(rest) = line.strip_prefix(prefix) {
                    let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    if !name.is_empty() && !name.starts_with('_') {
                        names.push(name);
                    }
                }
            }
        }
        names
    }

    /// Every function of the JavaScript and Python SDKs is in its reference (the README that
    /// `new` copies into each project beside the SDK), named as it is called.
    #[test]
    fn every_sdk_function_is_in_its_language_s_reference() {
        let js_reference = SDK_JS.get_file("README.md").and_then(|f| f.contents_utf8()).expect("sdk/js/README.md");
        let mut js_names = Vec::new();
        for file in SDK_JS.files().filter(|f| f.path().extension().is_some_and(|e| e == "js")) {
            js_names.extend(public_names(file.contents_utf8().unwrap(), &["export function ", "export const ", "export class "]));
        }
        assert!(js_names.len() > 25, "{js_names:?}");
        for name in &js_names {
            assert!(
                js_reference.contains(&format!("{name}(")) || js_reference.contains(&format!("`{name}`")),
                "sdk/js/README.md does not name {name}"
            );
        }
        let py_reference = SDK_PYTHON.get_file("README.md").and_then(|f| f.contents_utf8()).expect("sdk/python/herald_sdk/README.md");
        let py_source = SDK_PYTHON.get_file("__init__.py").and_then(|f| f.contents_utf8()).unwrap();
        let py_names = public_names(py_source, &["def ", "class ", "    def "]);
        assert!(py_names.len() > 30, "{py_names:?}");
        for name in &py_names {
            let named = [format!("{name}("), format!("`{name}`"), format!(".{name}`"), format!("herald.{name}")];
            assert!(named.iter().any(|n| py_reference.contains(n.as_str())), "sdk/python/herald_sdk/README.md does not name {name}");
        }
    }

    #[test]
    fn names_and_directories_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        assert!(write(&NewArgs { name: "../up".into(), ..args(Language::Js, TypeArg::Step, false) }, &dir.path().join("a")).is_err());
        std::fs::write(dir.path().join("file"), "x").unwrap();
        let refused = write(&args(Language::Js, TypeArg::Step, false), dir.path()).unwrap_err();
        assert!(refused.to_string().contains("not empty"), "{refused}");
        assert!(write(&args(Language::Js, TypeArg::Step, true), &dir.path().join("b")).is_err());
    }
}
