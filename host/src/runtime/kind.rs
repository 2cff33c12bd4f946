//! The kinds of extensions (the only list of them): what each must export, and what each may
//! import. The import policy follows the worlds of `wit/`: an upload importing an interface its
//! kind's world does not offer is refused at upload, with the interface named, rather than
//! failing at its first call.

use std::fmt;

/// An extension's type, as the Assets API's `type` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExtensionKind {
    Http,
    Step,
    Condition,
    Monitor,
    Authheader,
}

/// WASI 0.2 as a Rust, JavaScript or Python guest pulls it in (an empty environment and no files
/// are given), and wasi:http for outbound calls. Every kind may import these.
const WASI: [&str; 7] = ["wasi:cli/", "wasi:io/", "wasi:clocks/", "wasi:random/", "wasi:filesystem/", "wasi:sockets/", "wasi:http/"];

/// Herald's own interfaces (`wit/platform.wit`).
const TYPES: &str = "herald:platform/types";
const RECIPIENTS_READ: &str = "herald:platform/recipients-read";
const RECIPIENTS_WRITE: &str = "herald:platform/recipients-write";
const TABLES: &str = "herald:platform/tables";
const CONTEXT: &str = "herald:platform/context";
const GLOBAL_DATA: &str = "herald:platform/global-data";
const LOG: &str = "herald:platform/log";
const SECRETS: &str = "herald:platform/secrets";
const SIGNATURES: &str = "herald:platform/signatures";

/// The `imports` world: what http, step, condition and monitor extensions are offered.
const ALL_PLATFORM: [&str; 7] = [TYPES, RECIPIENTS_READ, RECIPIENTS_WRITE, TABLES, CONTEXT, GLOBAL_DATA, LOG];
/// The http worlds: `imports` and the signature checks of calls from outside.
const HTTP_PLATFORM: [&str; 8] = [TYPES, RECIPIENTS_READ, RECIPIENTS_WRITE, TABLES, CONTEXT, GLOBAL_DATA, LOG, SIGNATURES];
/// The authheader world: no recipient data, only what making headers needs; the only world with
/// the instance's secrets.
const AUTHHEADER_PLATFORM: [&str; 4] = [TYPES, GLOBAL_DATA, LOG, SECRETS];

impl ExtensionKind {
    /// Every kind, in the order the messages list them.
    pub const ALL: [ExtensionKind; 5] =
        [ExtensionKind::Step, ExtensionKind::Condition, ExtensionKind::Http, ExtensionKind::Monitor, ExtensionKind::Authheader];

    /// The type whose export a component has, read from its top-level exports without compiling
    /// it (for tools that only need to know, such as `herald extension deploy`).
    pub fn of_component(wasm: &[u8]) -> Result<ExtensionKind, String> {
        if !wasmparser::Parser::is_component(wasm) {
            return Err("the file is not a WebAssembly component".into());
        }
        let mut exports = Vec::new();
        let mut depth = 0usize;
        for payload in wasmparser::Parser::new(0).parse_all(wasm) {
            match payload.map_err(|e| format!("the component does not read: {e}"))? {
                wasmparser::Payload::ModuleSection { .. } | wasmparser::Payload::ComponentSection { .. } => depth += 1,
                wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
                wasmparser::Payload::ComponentExportSection(reader) if depth == 0 => {
                    for export in reader {
                        let name = export.map_err(|e| format!("the component does not read: {e}"))?.name;
                        exports.push(match name.version_suffix {
                            Some(version) if !name.name.contains('@') => format!("{}{version}", name.name),
                            _ => name.name.to_string(),
                        });
                    }
                }
                _ => {}
            }
        }
        ExtensionKind::ALL.into_iter().find(|kind| exports.iter().any(|e| e.starts_with(kind.required_export()))).ok_or_else(|| {
            format!(
                "the component exports none of the interfaces of an extension type ({}); it exports {}",
                ExtensionKind::names(),
                exports.join(", ")
            )
        })
    }

    pub fn parse(name: &str) -> Option<ExtensionKind> {
        ExtensionKind::ALL.into_iter().find(|k| k.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            ExtensionKind::Http => "http",
            ExtensionKind::Step => "step",
            ExtensionKind::Condition => "condition",
            ExtensionKind::Monitor => "monitor",
            ExtensionKind::Authheader => "authheader",
        }
    }

    /// `step, condition, http, monitor, authheader`, for messages.
    pub fn names() -> String {
        ExtensionKind::ALL.map(ExtensionKind::name).join(", ")
    }

    /// The interface the kind must export (any 0.x version of it).
    pub fn required_export(self) -> &'static str {
        match self {
            ExtensionKind::Http => "wasi:http/incoming-handler@0.2",
            ExtensionKind::Step => "herald:platform/step@0.1",
            ExtensionKind::Condition => "herald:platform/condition@0.1",
            ExtensionKind::Monitor => "herald:platform/monitor@0.1",
            ExtensionKind::Authheader => "herald:platform/authheader@0.1",
        }
    }

    /// Herald's interfaces the kind's world offers.
    fn platform_imports(self) -> &'static [&'static str] {
        match self {
            ExtensionKind::Authheader => &AUTHHEADER_PLATFORM,
            ExtensionKind::Http => &HTTP_PLATFORM,
            _ => &ALL_PLATFORM,
        }
    }

    /// Why an extension of this kind may not import `import` (a fully qualified interface name
    /// such as `herald:platform/recipients-write@0.1.0`), or `None` when it may. `open`: the
    /// extension is called through the open endpoint, where reading recipients is refused.
    pub fn refuses_import(self, import: &str, open: bool) -> Option<String> {
        let interface = import.split('@').next().unwrap_or(import);
        if WASI.iter().any(|prefix| interface.starts_with(prefix)) {
            return None;
        }
        if open && interface == RECIPIENTS_READ {
            return Some(format!(
                "an open extension may not import {RECIPIENTS_READ}: an open endpoint must not be usable to extract recipient data"
            ));
        }
        if self.platform_imports().contains(&interface) {
            return None;
        }
        if interface.starts_with("herald:platform/") {
            let offered = self.platform_imports().iter().filter(|i| **i != TYPES).map(|i| i.trim_start_matches("herald:platform/"));
            return Some(format!(
                "an extension of type '{}' may not import {import}: its world offers herald:platform/{{{}}}",
                self.name(),
                offered.collect::<Vec<_>>().join(", ")
            ));
        }
        Some(format!(
            "the component imports {import}, which Herald does not provide (WASI 0.2, wasi:http and herald:platform are provided)"
        ))
    }
}

impl crate::store::tenant::ExtensionRecord {
    /// The stored type of the extension (`None` for a name no kind has: a record written by a
    /// newer Herald).
    pub fn kind(&self) -> Option<ExtensionKind> {
        ExtensionKind::parse(&self.kind)
    }
}

impl fmt::Display for ExtensionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_the_only_list() {
        for kind in ExtensionKind::ALL {
            assert_eq!(ExtensionKind::parse(kind.name()), Some(kind));
        }
        assert_eq!(ExtensionKind::parse("webhook"), None);
        assert_eq!(ExtensionKind::names(), "step, condition, http, monitor, authheader");
    }

    #[test]
    fn each_kind_imports_what_its_world_offers() {
        let write = "herald:platform/recipients-write@0.1.0";
        assert_eq!(ExtensionKind::Step.refuses_import(write, false), None);
        assert_eq!(ExtensionKind::Http.refuses_import(write, true), None);
        // Signature checks are for calls from outside: http extensions, open ones included.
        let signatures = "herald:platform/signatures@0.1.0";
        assert_eq!(ExtensionKind::Http.refuses_import(signatures, true), None);
        for kind in [ExtensionKind::Step, ExtensionKind::Condition, ExtensionKind::Monitor, ExtensionKind::Authheader] {
            let refused = kind.refuses_import(signatures, false).unwrap();
            assert!(refused.contains("may not import herald:platform/signatures"), "{refused}");
        }
        let refused = ExtensionKind::Authheader.refuses_import(write, false).unwrap();
        assert!(refused.contains("type 'authheader'") && refused.contains("global-data, log, secrets"), "{refused}");
        assert_eq!(ExtensionKind::Authheader.refuses_import("herald:platform/secrets@0.1.0", false), None);
        for kind in [ExtensionKind::Http, ExtensionKind::Step, ExtensionKind::Condition, ExtensionKind::Monitor] {
            let refused = kind.refuses_import("herald:platform/secrets@0.1.0", false).unwrap();
            assert!(refused.contains("may not import herald:platform/secrets"), "{refused}");
        }
        assert!(ExtensionKind::Authheader.refuses_import("herald:platform/context@0.1.0", false).is_some());
        assert_eq!(ExtensionKind::Authheader.refuses_import("herald:platform/global-data@0.1.0", false), None);
        assert_eq!(ExtensionKind::Monitor.refuses_import("wasi:http/outgoing-handler@0.2.6", false), None);
        assert!(ExtensionKind::Http.refuses_import("herald:platform/recipients-read@0.1.0", true).unwrap().contains("open"));
        assert!(ExtensionKind::Step.refuses_import("acme:secret/keys@1.0.0", false).unwrap().contains("does not provide"));
    }

    /// Every world of `wit/` (the folder any language's tool builds against) imports exactly what
    /// upload validation accepts for its type: nothing it would refuse, and every platform
    /// interface it would accept; and exports what the type requires.
    #[test]
    fn each_world_of_wit_is_what_validation_accepts_for_its_type() {
        let mut resolve = wit_parser::Resolve::default();
        let (package, _) = resolve.push_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../wit")).expect("wit/ parses");
        let worlds = [
            ("http-extension", ExtensionKind::Http, false),
            ("open-http-extension", ExtensionKind::Http, true),
            ("step-extension", ExtensionKind::Step, false),
            ("condition-extension", ExtensionKind::Condition, false),
            ("monitor-extension", ExtensionKind::Monitor, false),
            ("authheader-extension", ExtensionKind::Authheader, false),
        ];
        for (name, kind, open) in worlds {
            let world = &resolve.worlds[resolve.select_world(&[package], Some(name)).expect(name)];
            let names = |items: &mut dyn Iterator<Item = &wit_parser::WorldItem>| -> Vec<String> {
                items
                    .filter_map(|item| match item {
                        wit_parser::WorldItem::Interface { id, .. } => resolve.id_of(*id),
                        _ => None,
                    })
                    .collect()
            };
            let imports = names(&mut world.imports.values());
            for import in &imports {
                assert_eq!(kind.refuses_import(import, open), None, "{name} imports {import}");
            }
            let platform: Vec<&str> =
                imports.iter().filter(|i| i.starts_with("herald:platform/")).map(|i| i.split('@').next().unwrap()).collect();
            for offered in ALL_PLATFORM.iter().chain([SECRETS].iter()).filter(|i| **i != TYPES) {
                let accepted = kind.refuses_import(&format!("{offered}@0.1.0"), open).is_none();
                assert_eq!(platform.contains(offered), accepted, "{name}: {offered} imported = accepted");
            }
            let exports = names(&mut world.exports.values());
            assert!(exports.iter().any(|e| e.starts_with(kind.required_export())), "{name} exports {exports:?}");
        }
    }
}
