//! The generated bindings of `herald:platform` (wit/). `platform` holds the interfaces an extension
//! imports; each `*_world` module holds one extension type's export, sharing `platform`'s types.
//! Most extensions never name these: the crate's modules and macros wrap them.
#![allow(missing_docs)]

/// Every interface an extension may import.
pub mod platform {
    wit_bindgen::generate!({
        path: "../wit",
        world: "herald:platform/imports",
        generate_all,
        additional_derives: [PartialEq],
    });
}

/// Generates a world that includes every import, its types shared with `platform`.
macro_rules! world_with_all_imports {
    ($world:literal, $export_macro:literal, $module:literal) => {
        wit_bindgen::generate!({
            path: "../wit",
            world: $world,
            with: {
                "herald:platform/types@0.1.0": crate::bindings::platform::herald::platform::types,
                "herald:platform/recipients-read@0.1.0": crate::bindings::platform::herald::platform::recipients_read,
                "herald:platform/recipients-write@0.1.0": crate::bindings::platform::herald::platform::recipients_write,
                "herald:platform/global-data@0.1.0": crate::bindings::platform::herald::platform::global_data,
                "herald:platform/tables@0.1.0": crate::bindings::platform::herald::platform::tables,
                "herald:platform/context@0.1.0": crate::bindings::platform::herald::platform::context,
                "herald:platform/log@0.1.0": crate::bindings::platform::herald::platform::log,
            },
            pub_export_macro: true,
            export_macro_name: $export_macro,
            default_bindings_module: $module,
        });
    };
}

/// The `step-extension` world's export.
pub mod step_world {
    world_with_all_imports!("herald:platform/step-extension", "__export_step_world", "herald_sdk::bindings::step_world");
}

/// The `condition-extension` world's export.
pub mod condition_world {
    world_with_all_imports!("herald:platform/condition-extension", "__export_condition_world", "herald_sdk::bindings::condition_world");
}

/// The `monitor-extension` world's export.
pub mod monitor_world {
    world_with_all_imports!("herald:platform/monitor-extension", "__export_monitor_world", "herald_sdk::bindings::monitor_world");
}

/// The `authheader-extension` world's export (it sees Global Data, the log and the secrets).
pub mod authheader_world {
    wit_bindgen::generate!({
        path: "../wit",
        world: "herald:platform/authheader-extension",
        with: {
            "herald:platform/types@0.1.0": crate::bindings::platform::herald::platform::types,
            "herald:platform/global-data@0.1.0": crate::bindings::platform::herald::platform::global_data,
            "herald:platform/log@0.1.0": crate::bindings::platform::herald::platform::log,
        },
        pub_export_macro: true,
        export_macro_name: "__export_authheader_world",
        default_bindings_module: "herald_sdk::bindings::authheader_world",
    });
}

/// The signature checks an http extension may import (`herald:platform/signatures`).
pub mod signing {
    wit_bindgen::generate!({
        path: "../wit",
        world: "herald:platform/signing",
        with: {
            "herald:platform/types@0.1.0": crate::bindings::platform::herald::platform::types,
        },
    });
}
